package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/recording"
)

// maxReportedErrors is how many invalid lines are printed.
const maxReportedErrors = 20

func (a *app) originRecordCommand() *cobra.Command {
	var (
		skipInvalid bool
		batchSize   int
		writers     int
	)
	cmd := &cobra.Command{
		Use:   "record FILE|-",
		Short: "Record listed origins from JSON lines",
		Long: `Record listed origins read from FILE, or standard input for "-", one JSON
object a line:

  {"url": "https://github.com/a/b", "visit_type": "git",
   "lister_name": "github", "lister_instance_name": "github",
   "extra_loader_arguments": {}, "enabled": true,
   "last_update": "2024-05-01T12:00:00Z", "is_fork": false, "forked_from_url": null}

The lister is named by "lister_id", or by "lister_name" (and optionally
"lister_instance_name"; such listers are created when missing). "enabled"
defaults to true; "last_update" is an RFC 3339 time with a zone. Unknown
fields are errors. Blank lines are skipped.

Every line is checked first; if any is invalid nothing is written, unless
--skip-invalid is given, which writes the valid lines. Origins are then
upserted in batches of --batch-size (each batch is written whole or not at
all), --writers batches at once; the lines of one origin (URL and visit
type) are written in input order, the last one last.`,
		Args: exactArgs("FILE|-"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batchSize <= 0 {
				return usagef("--batch-size: must be positive, not %d", batchSize)
			}
			if writers <= 0 {
				return usagef("--writers: must be positive, not %d", writers)
			}
			ctx := cmd.Context()
			var (
				st         backend
				badListers map[uuid.UUID]bool
			)
			in, name, chk, cleanup, err := a.checkedInput(args[0], skipInvalid, func(r io.Reader) (lineCheck, error) {
				var err error
				if st, err = a.backend(cmd); err != nil {
					return lineCheck{}, err
				}
				oc, err := checkOrigins(ctx, st, r)
				badListers = oc.badListers
				return oc.lineCheck, err
			})
			defer cleanup()
			if err != nil {
				return err
			}
			if err := a.warnUnserved(ctx, st, chk); err != nil {
				return err
			}
			progress, done := a.progressBar(chk.valid, "recording origins")
			res, err := recordOrigins(ctx, st, in, badListers, batchSize, writers, progress)
			done()
			if err != nil && ctx.Err() != nil {
				return interrupted{fmt.Sprintf("%d of %d origin(s) written (inserted %d, updated %d); the same command "+
					"records the rest: the lines written already are written again, which changes nothing",
					res.Inserted+res.Updated, chk.valid, res.Inserted, res.Updated)}
			}
			if err != nil {
				return fmt.Errorf("%s: %w (inserted %d, updated %d before the failure)", name, err, res.Inserted, res.Updated)
			}
			sentence := fmt.Sprintf("inserted %d, updated %d", res.Inserted, res.Updated)
			if chk.invalid > 0 {
				sentence += fmt.Sprintf(", skipped %d invalid line(s)", chk.invalid)
			}
			return a.printSummary(sentence, cols("inserted", "updated", "invalid"), res.Inserted, res.Updated, chk.invalid)
		},
	}
	cmd.Flags().BoolVar(&skipInvalid, "skip-invalid", false, "write the valid lines and report the invalid ones")
	cmd.Flags().IntVar(&batchSize, "batch-size", 1000, "origins written per transaction")
	cmd.Flags().IntVar(&writers, "writers", recording.DefaultWriters, "batches written at once (each origin's lines stay in input order)")
	return cmd
}

// checkedInput opens FILE|- for two passes and runs check, the first pass,
// over it. When check found invalid lines it reports them and, unless
// skipInvalid, fails with nothing written; otherwise it returns the input
// rewound for the writing pass. cleanup must be called in every case.
func (a *app) checkedInput(arg string, skipInvalid bool, check func(io.Reader) (lineCheck, error)) (
	in io.Reader, name string, chk lineCheck, cleanup func(), err error) {
	f, name, cleanup, err := a.openTwice(arg)
	if err != nil {
		return nil, "", chk, func() {}, err
	}
	if chk, err = check(f); err != nil {
		return nil, name, chk, cleanup, fmt.Errorf("%s: %w", name, err)
	}
	if chk.invalid > 0 {
		a.reportInvalid(chk)
		if !skipInvalid {
			return nil, name, chk, cleanup, fmt.Errorf("%s: %d invalid line(s) of %d; nothing written (--skip-invalid writes the valid ones)",
				name, chk.invalid, chk.valid+chk.invalid)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, name, chk, cleanup, fmt.Errorf("%s: rewind: %w", name, err)
	}
	return f, name, chk, cleanup, nil
}

// progressBar returns a progress callback counting towards total, and a
// function that ends the bar; both do nothing unless standard error is a
// terminal.
func (a *app) progressBar(total int, description string) (add func(int), done func()) {
	if !a.stderrIsTerminal() || total == 0 {
		return func(int) {}, func() {}
	}
	bar := progressbar.NewOptions64(int64(total),
		progressbar.OptionSetWriter(a.env.Stderr),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	return func(n int) { _ = bar.Add(n) }, func() { _ = bar.Finish() }
}

// openTwice opens the input for two passes: a regular file as it is,
// anything else (standard input, a pipe) spooled to a temporary file.
func (a *app) openTwice(arg string) (f *os.File, name string, cleanup func(), err error) {
	var src io.Reader
	name = arg
	if arg == "-" {
		name = "standard input"
		src = a.env.Stdin
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, "", nil, err
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f, name, func() { f.Close() }, nil
		}
		defer f.Close()
		src = f
	}
	tmp, err := os.CreateTemp("", "revisit-origins-*.jsonl")
	if err != nil {
		return nil, "", nil, fmt.Errorf("spool %s: %w", name, err)
	}
	cleanup = func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, src); err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("spool %s: %w", name, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("spool %s: %w", name, err)
	}
	return tmp, name, cleanup, nil
}

// lineError is the error of one input line.
type lineError struct {
	line int
	err  error
}

func (e lineError) String() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }

// lineCheck tallies the first pass over JSON-lines input.
type lineCheck struct {
	valid, invalid int
	// errs holds the first invalid lines, by line number.
	errs []lineError
	// visitTypes counts the valid lines of each visit type.
	visitTypes map[string]int
}

// counted counts a valid line of that visit type.
func (c *lineCheck) counted(visitType string) {
	c.valid++
	if c.visitTypes == nil {
		c.visitTypes = map[string]int{}
	}
	c.visitTypes[visitType]++
}

// warnUnserved warns of the visit types of the input that no load task
// type serves: their lines are written all the same, and no loop visits
// their origins until a task type load-<visit type> exists.
func (a *app) warnUnserved(ctx context.Context, st backend, chk lineCheck) error {
	for _, vt := range slices.Sorted(maps.Keys(chk.visitTypes)) {
		_, err := st.TaskTypeGet(ctx, "load-"+vt)
		switch {
		case revisit.Code(err) == revisit.CodeNotFound:
			fmt.Fprintf(a.env.Stderr, "warning: no task type serves visit type %s (%d line(s)): they are written, "+
				"and nothing visits them until a task type load-%s exists (revisit task-type add or register)\n",
				vt, chk.visitTypes[vt], vt)
		case err != nil:
			return err
		}
	}
	return nil
}

// originCheck is what the first pass of origin record found.
type originCheck struct {
	lineCheck
	// badListers are lister ids the input names that do not exist.
	badListers map[uuid.UUID]bool
}

func (c *lineCheck) fail(line int, err error) {
	c.invalid++
	c.errs = append(c.errs, lineError{line, err})
	if len(c.errs) > 4*maxReportedErrors {
		slices.SortFunc(c.errs, func(a, b lineError) int { return a.line - b.line })
		c.errs = c.errs[:maxReportedErrors]
	}
}

// checkOrigins is the first pass: it parses every line and checks that the
// lister ids named exist.
func checkOrigins(ctx context.Context, st backend, r io.Reader) (originCheck, error) {
	chk := originCheck{badListers: map[uuid.UUID]bool{}}
	type idUse struct {
		lines []int
		count int
	}
	ids := map[uuid.UUID]*idUse{}
	err := eachLine(r, func(n int, line []byte, tooLong error) error {
		if tooLong != nil {
			chk.fail(n, tooLong)
			return nil
		}
		ol, err := recording.ParseLine(line)
		if err != nil {
			chk.fail(n, err)
			return nil
		}
		chk.counted(ol.Origin.VisitType)
		if ol.ListerID != nil {
			u := ids[*ol.ListerID]
			if u == nil {
				u = &idUse{}
				ids[*ol.ListerID] = u
			}
			u.count++
			if len(u.lines) < maxReportedErrors {
				u.lines = append(u.lines, n)
			}
		}
		return nil
	})
	if err != nil {
		return chk, err
	}
	if len(ids) > 0 {
		unknown, err := recording.UnknownListers(ctx, st, slices.Collect(maps.Keys(ids)))
		if err != nil {
			return chk, err
		}
		for id := range unknown {
			u := ids[id]
			chk.badListers[id] = true
			chk.valid -= u.count
			chk.invalid += u.count - len(u.lines)
			for _, n := range u.lines {
				chk.fail(n, revisit.Invalidf("lister_id", "no lister with id %s", id))
			}
		}
	}
	slices.SortFunc(chk.errs, func(a, b lineError) int { return a.line - b.line })
	if len(chk.errs) > maxReportedErrors {
		chk.errs = chk.errs[:maxReportedErrors]
	}
	return chk, nil
}

func (a *app) reportInvalid(chk lineCheck) {
	for _, e := range chk.errs {
		fmt.Fprintln(a.env.Stderr, e)
	}
	if more := chk.invalid - len(chk.errs); more > 0 {
		fmt.Fprintf(a.env.Stderr, "... and %d more invalid line(s)\n", more)
	}
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// recordOrigins is the second pass: it writes the valid lines in batches,
// writers batches at once, creating listers named by name, and calls
// progress with the number of lines of each batch written. The lines of
// one origin (URL and visit type) are written in input order, the last one
// last.
func recordOrigins(ctx context.Context, st backend, r io.Reader, badListers map[uuid.UUID]bool,
	batchSize, writers int, progress func(int)) (revisit.RecordResult, error) {
	w := recording.NewWriter(ctx, st, recording.Config{Writers: writers, BatchSize: batchSize, Written: progress})
	listers := recording.NewListers(st)
	err := eachLine(r, func(n int, line []byte, tooLong error) error {
		if tooLong != nil {
			return nil
		}
		ol, err := recording.ParseLine(line)
		if err != nil || (ol.ListerID != nil && badListers[*ol.ListerID]) {
			return nil
		}
		o, err := listers.Origin(ctx, ol)
		if err != nil {
			return fmt.Errorf("line %d: lister %s: %w", n, listerLabel(ol.Name, ol.Instance), err)
		}
		return w.Add(o)
	})
	total, closeErr := w.Close()
	if err == nil {
		err = closeErr
	}
	return total, err
}
