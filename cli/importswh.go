package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhimport"
)

// DefaultImportState is the state file of `revisit import swh`.
const DefaultImportState = "swh-import.state.json"

func (a *app) importCommand() *cobra.Command {
	imp := &cobra.Command{
		Use:   "import",
		Short: "Bring a deployment's state over from the scheduler revisit replaces",
	}
	imp.AddCommand(a.importSWHCommand())
	return imp
}

func (a *app) importSWHCommand() *cobra.Command {
	var (
		from, stateFile, runsSince string
		batch                      int
		progress, verify, catchUp  bool
	)
	cmd := &cobra.Command{
		Use:   "swh --from postgres://...",
		Short: "Copy a Software Heritage scheduler's database into the store",
		Long: `Copy the state of a Software Heritage scheduler (swh-scheduler, schema
version ` + fmt.Sprint(swhimport.SchemaVersion) + `) from its PostgreSQL database into the store: task types,
listers (their state and update token as they are, so that each lister goes
on where it stopped), listed origins (first and last seen, every lister's
row), visit stats, queue positions, tasks and their runs (ids kept, so that
workers' reports of runs in flight find them). Nothing is written to the
source, which may keep running.

Each table is read in key order, a batch at a time, each batch written in
one transaction, and the state file records where the import stands: an
import interrupted (Ctrl-C, kill -9, a lost connection) says where it
stopped, and the same command continues from there. Run again once done
(delete the state file), it writes the same rows again and changes nothing.

Upstream may keep running during the copy. --catch-up then copies only what
changed since the copy began (origins listed, stats of visits, runs
scheduled, started or ended since, tasks created or run since, ten
minutes of margin included; task types, listers and queue positions
whole): the short pass of a switch, once upstream's writers are stopped.
A task whose status alone changed since (disabled by hand) is not seen:
--verify names it.

A source of another schema version, or a store whose listers conflict with
the source's (one name and instance, two ids), is refused before anything
is written.

--verify copies nothing: it compares the source with the store, table by
table and column by column (the visit stats of the source's origins; the
other tables both ways), prints rows and differences per table with the
first differing keys, and fails (exit 1) on any difference.
docs/switching.md is the runbook of a switch.`,
		Example: "  revisit import swh --from postgres://swh@db.example.org/swh-scheduler --store postgres://revisit@db/revisit",
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return usagef("--from: missing (the URL of the Software Heritage scheduler's database)")
			}
			var since time.Time
			if runsSince != "" {
				var err error
				if since, err = parseTime("--runs-since", runsSince); err != nil {
					return usagef("%s", err)
				}
			}
			if batch < 1 || batch > 10_000 {
				return usagef("--batch: %d is not between 1 and 10000", batch)
			}
			prior, err := swhimport.LoadState(stateFile)
			if err != nil {
				return err
			}
			if prior.Complete() && !verify && !catchUp {
				fmt.Fprintf(a.env.Stderr, "revisit: %s says the import is complete: nothing copied (remove it to import again)\n", stateFile)
				return a.importSummary(prior)
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			if verify {
				return a.importVerify(cmd, from, st, since)
			}
			report := a.importProgress(progress && a.stderrIsTerminal())
			state, err := swhimport.Run(cmd.Context(), swhimport.Config{From: from, Target: st, Batch: batch,
				RunsSince: since, StateFile: stateFile, CatchUp: catchUp, Progress: report})
			var stopped *swhimport.Stopped
			if errors.As(err, &stopped) {
				return fmt.Errorf("%w; the same command continues from there (state in %s)", err, stateFile)
			}
			if err != nil {
				return fmt.Errorf("importing from %s: %w", store.Redact(from), err)
			}
			return a.importSummary(state)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "`URL` of the Software Heritage scheduler's PostgreSQL database (read only)")
	fl.StringVar(&stateFile, "state", DefaultImportState, "`file` where the import records where it stands")
	fl.StringVar(&runsSince, "runs-since", "", "copy only the task runs since this `time` (RFC 3339 or a date; default: all)")
	fl.IntVar(&batch, "batch", swhimport.DefaultBatch, "rows read and written at once")
	fl.BoolVar(&catchUp, "catch-up", false, "copy only what changed since the complete import the state file records began")
	fl.BoolVar(&verify, "verify", false, "copy nothing: compare the source with the store, and fail on any difference")
	fl.BoolVar(&progress, "progress", true, "show progress bars on a terminal (false: a line per table done, for logs)")
	return cmd
}

// importVerify compares the source with the store and prints what it
// found, table by table; any difference fails the command.
func (a *app) importVerify(cmd *cobra.Command, from string, st store.Store, runsSince time.Time) error {
	checked, err := swhimport.Verify(cmd.Context(), from, st, runsSince)
	if err != nil {
		return fmt.Errorf("verifying against %s: %w", store.Redact(from), err)
	}
	rw := a.rows(cols("table", "source", "store", "differing", "first_differing"))
	differing := 0
	for _, c := range checked {
		if c.Differing > 0 {
			differing++
		}
		if err := rw.Row(c.Table, c.Source, c.Target, c.Differing, strings.Join(c.First, "; ")); err != nil {
			return err
		}
	}
	if err := rw.Close(); err != nil {
		return err
	}
	if differing > 0 {
		return fmt.Errorf("%d of %d tables differ between the source and the store", differing, len(checked))
	}
	return nil
}

// importSummary prints the rows an import copied, table by table.
func (a *app) importSummary(state swhimport.State) error {
	parts := make([]string, len(swhimport.Tables))
	counts := make([]any, len(swhimport.Tables))
	for i, table := range swhimport.Tables {
		var n int64
		if ts := state.Tables[table]; ts != nil {
			n = ts.Rows
		}
		counts[i], parts[i] = n, fmt.Sprintf("%s %s", table, humanize.Comma(n))
	}
	return a.printSummary("imported: "+strings.Join(parts, ", "), cols(swhimport.Tables...), counts...)
}

// importLogEvery is how often an import without bars logs a table's
// progress.
const importLogEvery = 10 * time.Second

// importProgress returns the progress callback of an import: a bar per
// table on a terminal, else a line every importLogEvery; and a line per
// table done.
func (a *app) importProgress(bars bool) func(swhimport.TableProgress) {
	var (
		bar     *progressbar.ProgressBar
		current string
		logged  time.Time
	)
	return func(p swhimport.TableProgress) {
		if !bars && !p.Done && time.Since(logged) >= importLogEvery {
			logged = time.Now()
			rate := float64(p.Rows) / max(time.Since(p.Started).Seconds(), 1e-3)
			eta := "unknown"
			if p.Estimate > p.Rows && rate > 0 {
				eta = (time.Duration(float64(p.Estimate-p.Rows)/rate) * time.Second).Round(time.Second).String()
			}
			fmt.Fprintf(a.env.Stderr, "revisit: %s: %s of ~%s rows (%s rows/s, ETA %s)\n", p.Table, humanize.Comma(p.Rows),
				humanize.Comma(p.Estimate), humanize.Comma(int64(rate)), eta)
		}
		if bars {
			if p.Table != current {
				current = p.Table
				bar = progressbar.NewOptions64(max(p.Estimate, p.Rows), progressbar.OptionSetWriter(a.env.Stderr),
					progressbar.OptionSetDescription(p.Table), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
					progressbar.OptionSetItsString("rows"), progressbar.OptionThrottle(200*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			if p.Rows > bar.GetMax64() {
				bar.ChangeMax64(p.Rows)
			}
			_ = bar.Set64(p.Rows)
			if p.Done {
				_ = bar.Finish()
			}
		}
		if p.Done {
			elapsed := time.Since(p.Started)
			rate := float64(p.Rows) / max(elapsed.Seconds(), 1e-3)
			fmt.Fprintf(a.env.Stderr, "revisit: %s: %s rows in %s (%s rows/s)\n", p.Table, humanize.Comma(p.Rows),
				elapsed.Round(time.Millisecond), humanize.Comma(int64(rate)))
		}
	}
}
