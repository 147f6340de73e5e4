package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/store"
)

func (a *app) visitStatusCommand() *cobra.Command {
	vs := &cobra.Command{
		Use:   "visit-status",
		Short: "Feed visit results into the visit stats",
	}
	vs.AddCommand(a.visitStatusIngestCommand())
	return vs
}

func (a *app) visitStatusIngestCommand() *cobra.Command {
	var (
		skipInvalid bool
		batchSize   int
		workers     int
	)
	cmd := &cobra.Command{
		Use:   "ingest FILE|-",
		Short: "Update visit stats from visit statuses in JSON lines",
		Long: `Update the visit stats of origins from visit statuses read from FILE, or
standard input for "-", one JSON object a line:

  {"origin": "https://github.com/a/b", "visit_type": "git", "status": "full",
   "date": "2026-01-02T03:04:05+00:00", "snapshot": "<hex>"}

"type" is accepted for "visit_type" (the upstream journal's field names);
status is created, ongoing, full, partial, failed or not_found; the date
needs a zone; "snapshot" (hex) and "eventful" (true or false) are optional.
Each status goes through revisit's result processing: late and duplicate
statuses are ignored, the next visit's position is planned, an origin
whose last three visits failed or found nothing is disabled, and a final
status closes the visits of its origin that revisit sent (and recorded in
flight) before its date.

Every line is checked first; if any is invalid nothing is written, unless
--skip-invalid is given. Statuses are processed in batches of --batch-size,
--workers batches at once; all the statuses of an origin go to one worker,
which folds them in the order of the input.`,
		Args: exactArgs("FILE|-"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batchSize <= 0 {
				return usagef("--batch-size: must be positive, not %d", batchSize)
			}
			if workers <= 0 {
				return usagef("--workers: must be positive, not %d", workers)
			}
			h, err := a.horizon(cmd)
			if err != nil {
				return err
			}
			in, name, chk, cleanup, err := a.checkedInput(args[0], skipInvalid, func(r io.Reader) (lineCheck, error) {
				return checkStatuses(r, h)
			})
			defer cleanup()
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			if err := a.warnUnserved(cmd.Context(), st, chk); err != nil {
				return err
			}
			progress, done := a.progressBar(chk.valid, "processing visit statuses")
			sum, err := ingestStatuses(cmd.Context(), st, in, h, batchSize, workers, progress)
			done()
			if err != nil {
				return fmt.Errorf("%s: %w (%d status(es) processed before the failure)", name, err, sum.processed)
			}
			sentence := fmt.Sprintf("processed %d status(es): %d stats changed, %d ignored (not final, late or duplicate), %d origin(s) disabled, %d visit(s) in flight closed",
				sum.processed, sum.changed, sum.ignored, sum.disabled, sum.closed)
			if chk.invalid > 0 {
				sentence += fmt.Sprintf(", skipped %d invalid line(s)", chk.invalid)
			}
			return a.printSummary(sentence, cols("processed", "changed", "ignored", "disabled", "closed", "invalid"),
				sum.processed, sum.changed, sum.ignored, sum.disabled, sum.closed, chk.invalid)
		},
	}
	cmd.Flags().BoolVar(&skipInvalid, "skip-invalid", false, "process the valid lines and report the invalid ones")
	cmd.Flags().IntVar(&batchSize, "batch-size", 1000, "statuses processed per batch")
	cmd.Flags().IntVar(&workers, "workers", feedback.DefaultWorkers, "batches processed at once (each origin's statuses stay in input order)")
	return cmd
}

// checkStatuses is the first pass of visit-status ingest: dates are
// checked against the horizon h.
func checkStatuses(r io.Reader, h feedback.Horizon) (lineCheck, error) {
	var chk lineCheck
	err := eachLine(r, func(n int, line []byte, lineErr error) error {
		var status feedback.VisitStatus
		if lineErr == nil {
			status, lineErr = feedback.ParseJSON(line, h)
		}
		if lineErr != nil {
			chk.fail(n, lineErr)
		} else {
			chk.counted(status.VisitType)
		}
		return nil
	})
	return chk, err
}

// ingestSummary counts what ingestStatuses did.
type ingestSummary struct {
	processed, changed, ignored, disabled, closed int
}

// ingestStatuses is the second pass: it processes the valid lines in
// batches, workers batches at once, each origin's statuses in input order
// (feedback.Pipeline).
func ingestStatuses(ctx context.Context, st store.Store, r io.Reader, h feedback.Horizon, batchSize, workers int,
	progress func(int)) (ingestSummary, error) {
	p := feedback.NewPipeline(ctx, st, feedback.PipelineConfig{Workers: workers, BatchSize: batchSize, Horizon: h,
		Done: func(n int, _ feedback.Result) { progress(n) }})
	err := eachLine(r, func(_ int, line []byte, tooLong error) error {
		if tooLong != nil {
			return nil
		}
		v, err := feedback.ParseJSON(line, h)
		if err != nil {
			return nil
		}
		return p.Add(v)
	})
	if closeErr := p.Close(); err == nil {
		err = closeErr
	}
	n, res := p.Processed()
	return ingestSummary{processed: n, changed: len(res.Stats), ignored: res.Ignored, disabled: res.Disabled,
		closed: res.Closed}, err
}

// horizon bounds the dates of the visit statuses the command takes in: the
// clock, and the configuration's results.max_future.
func (a *app) horizon(cmd *cobra.Command) (feedback.Horizon, error) {
	c, err := a.config(cmd)
	if err != nil {
		return feedback.Horizon{}, err
	}
	return feedback.Horizon{Clock: a.env.Clock, MaxFuture: time.Duration(c.Results.MaxFuture)}, nil
}
