package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
)

func (a *app) visitStatsCommand() *cobra.Command {
	vs := &cobra.Command{
		Use:   "visit-stats",
		Short: "Inspect what revisit knows of the visits of origins",
	}
	vs.AddCommand(&cobra.Command{
		Use:   "show URL VISIT_TYPE",
		Short: "Show the visit stats of one origin",
		Args:  exactArgs("URL", "VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key := revisit.OriginKey{URL: args[0], VisitType: args[1]}
			st, err := a.backend(cmd)
			if err != nil {
				return err
			}
			stats, err := st.VisitStatsGet(cmd.Context(), []revisit.OriginKey{key})
			if err != nil {
				return fmt.Errorf("visit stats of %s (%s): %w", key.URL, key.VisitType, err)
			}
			var s *revisit.VisitStats
			for i := range stats {
				if stats[i].Key() == key {
					s = &stats[i]
				}
			}
			if s == nil {
				return revisit.Errorf(revisit.CodeNotFound, "no visit stats for %s (visit type %s): never scheduled nor visited",
					key.URL, key.VisitType)
			}
			var status, planned any
			if s.LastVisitStatus != nil {
				status = string(*s.LastVisitStatus)
			}
			if s.NextVisitQueuePosition != nil {
				// The visit type's queue position is where scheduling has
				// reached on the virtual clock: the origin is due when it
				// reaches the origin's position, about that many seconds on.
				qp, err := st.QueuePositionGet(cmd.Context(), key.VisitType)
				if err != nil {
					return err
				}
				planned = a.now().UTC().Add(time.Duration(*s.NextVisitQueuePosition-qp) * time.Second).Truncate(time.Second)
			}
			days := feedback.IntervalDays(s.NextPositionOffset)
			interval := fmt.Sprintf("%d days", days)
			if days == 1 {
				interval = "1 day"
			}
			return a.printObject(cols("url", "visit_type", "last_successful", "last_visit", "last_visit_status",
				"last_scheduled", "last_snapshot", "next_visit_queue_position", "next_visit_planned",
				"revisit_interval", "next_position_offset", "successive_visits"),
				s.URL, s.VisitType, orText{s.LastSuccessful, "never"}, orText{s.LastVisit, "never"},
				orText{status, "none"}, orText{s.LastScheduled, "never"}, orText{s.LastSnapshot, "none"},
				orText{s.NextVisitQueuePosition, "none"}, orText{planned, "not planned"}, interval,
				s.NextPositionOffset, s.SuccessiveVisits)
		},
	})
	return vs
}
