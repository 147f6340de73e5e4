package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

func (a *app) checkIngestedCommand() *cobra.Command {
	var (
		minimum float64
		watch   bool
		period  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check-ingested LISTER_NAME INSTANCE_NAME",
		Short: "Count the lister's enabled origins by the outcome of their last visit",
		Long: `Counts the enabled origins of the lister by the status of their last visit:
successful, failed, not_found, or never visited, and prints the success
ratio: the successful among the visited ones (none when none was visited).
INSTANCE_NAME may be "" for a lister without instance.

With --watch, it counts again every --watch-period, a row each time, until
no origin is left never visited (or it is interrupted). With
--minimum-success, it then fails (exit 1) when the success ratio is below
that minimum, or when no origin was visited, so that a script can tell
whether a forge was ingested well.`,
		Args: exactArgs("LISTER_NAME", "INSTANCE_NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if changed(fl, "minimum-success") && (minimum < 0 || minimum > 1) {
				return usagef("--minimum-success: must be between 0 and 1, not %g", minimum)
			}
			if period <= 0 {
				return usagef("--watch-period: must be positive, not %s", period)
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			l, err := st.ListerGet(ctx, args[0], args[1])
			if revisit.Code(err) == revisit.CodeNotFound {
				return revisit.Errorf(revisit.CodeNotFound, "no lister %s", listerLabel(args[0], args[1]))
			}
			if err != nil {
				return fmt.Errorf("lister %s: %w", listerLabel(args[0], args[1]), err)
			}
			rw := a.rows(cols("checked_at", "lister", "enabled", "successful", "failed", "not_found", "never_visited",
				"success_ratio"))
			var o revisit.VisitOutcomes
			for {
				if o, err = st.ListerVisitOutcomes(ctx, l.ID); err != nil {
					_ = rw.Close()
					return fmt.Errorf("visit outcomes of %s: %w", listerLabel(l.Name, l.InstanceName), err)
				}
				if err := rw.Row(a.now(), listerLabel(l.Name, l.InstanceName), o.Enabled, o.Successful, o.Failed,
					o.NotFound, o.NeverVisited, successRatio(o)); err != nil {
					return err
				}
				if err := rw.Flush(); err != nil {
					return err
				}
				if !watch || o.NeverVisited == 0 {
					break
				}
				select {
				case <-ctx.Done():
					_ = rw.Close()
					return ctx.Err()
				case <-time.After(period):
				}
			}
			if err := rw.Close(); err != nil {
				return err
			}
			if !changed(fl, "minimum-success") {
				return nil
			}
			ratio := successRatio(o)
			if ratio == nil {
				return fmt.Errorf("no origin of %s was visited yet: cannot reach the minimum success ratio %g",
					listerLabel(l.Name, l.InstanceName), minimum)
			}
			if *ratio < minimum {
				return fmt.Errorf("success ratio %.4g of %s is below the minimum %g", *ratio,
					listerLabel(l.Name, l.InstanceName), minimum)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&minimum, "minimum-success", 0, "fail when the success ratio is below this `ratio` (0 to 1)")
	f.BoolVar(&watch, "watch", false, "count again every --watch-period until no origin is left never visited")
	f.DurationVar(&period, "watch-period", time.Minute, "time between two counts with --watch")
	return cmd
}

// successRatio is the share of the visited origins whose last visit was
// successful; nil when none was visited.
func successRatio(o revisit.VisitOutcomes) *float64 {
	visited := o.Successful + o.Failed + o.NotFound
	if visited == 0 {
		return nil
	}
	r := float64(o.Successful) / float64(visited)
	return &r
}
