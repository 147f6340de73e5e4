package cli

import (
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/firstvisits"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
	"github.com/revisit-sched/revisit/store"
)

// newFirstVisits builds the scheduler of the listers' first visits, every
// interval (0: first_visits.interval of the configuration).
func (a *app) newFirstVisits(c config.Config, st store.Store, b broker.Broker, interval time.Duration) (*firstvisits.Scheduler, error) {
	if interval == 0 {
		interval = time.Duration(c.FirstVisits.Interval)
	}
	return firstvisits.New(st, b, firstvisits.Config{Interval: interval, Origin: visitsend.SenderName(), Clock: a.env.Clock,
		Logger: a.log.With("role", roleFirstVisits)})
}

func (a *app) firstVisitsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "first-visits",
		Short: "Send the first visits of listers that have queues of their own for them",
	}
	c.AddCommand(a.firstVisitsRunCommand())
	return c
}

func (a *app) firstVisitsRunCommand() *cobra.Command {
	var (
		once        bool
		interval    time.Duration
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "run [--once]",
		Short: "Send the listers' first visits to their queues, every interval until interrupted",
		Long: `For each lister with a first-visits queue prefix (set when the lister was
created through the Software Heritage RPC's get_or_create_lister) whose
listing finished and whose first visits were not all scheduled since: for
each visit type of its origins, sends the origins it listed that were not
scheduled since the listing finished (policy first_visits_after_listing) to
the queue PREFIX:BACKEND_NAME, BACKEND_NAME being the backend_name of the
task type load-VT, as many as that queue has free slots. Once no origin of
the lister is left to schedule, whatever the cooldowns, it records the
lister's first visits scheduled and leaves it until its next listing.

Each visit is in flight until its result, as the orchestrator's are. Passes
run every --interval (first_visits.interval of the configuration, 1m) until
SIGINT or SIGTERM; several processes may run it against one store, one at a
time passing over the listers. With --once, it makes one pass and prints
what it sent, by lister and visit type.

This is upstream's "swh scheduler start-runner-first-visits"; the
firstvisits role of "revisit serve" runs it too.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if changed(cmd.Flags(), "interval") && interval <= 0 {
				return usagef("--interval: must be positive, not %s", interval)
			}
			if !once {
				return a.runRoleCommand(cmd, metricsAddr, func(c config.Config, st store.Store, b broker.Broker,
					_ *prometheus.Registry) ([]role, error) {
					f, err := a.newFirstVisits(c, st, b, interval)
					if err != nil {
						return nil, err
					}
					return []role{{name: roleFirstVisits, run: f.Run}}, nil
				})
			}
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			f, err := a.newFirstVisits(c, st, b, interval)
			if err != nil {
				return err
			}
			pass, err := f.Once(cmd.Context())
			return a.printFirstVisits(pass, err)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&once, "once", false, "make one pass, print what it sent and exit")
	f.DurationVar(&interval, "interval", 0, "time between two passes (default: first_visits.interval of the configuration, 1m)")
	f.StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDRESS`/metrics")
	return cmd
}

// printFirstVisits prints a pass, which ended with failed (nil when it
// did not fail): a row per lister and visit type, with the lister's
// first_visits_scheduled_at when the pass set it.
func (a *app) printFirstVisits(p firstvisits.Pass, failed error) error {
	done := map[uuid.UUID]*time.Time{}
	for _, l := range p.Done {
		done[l.ID] = l.FirstVisitsScheduledAt
	}
	var rows [][]any
	printed := map[uuid.UUID]bool{}
	for _, s := range p.Sent {
		printed[s.Lister.ID] = true
		rows = append(rows, []any{listerLabel(s.Lister.Name, s.Lister.InstanceName), s.VisitType, nonEmpty(s.Queue),
			s.Slots, s.Sent, s.NotSent(), nonEmpty(s.Skipped), done[s.Lister.ID]})
	}
	for _, l := range p.Done { // a lister without origins
		if !printed[l.ID] {
			rows = append(rows, []any{listerLabel(l.Name, l.InstanceName), nil, nil, 0, 0, 0, nil, l.FirstVisitsScheduledAt})
		}
	}
	return a.printRows(cols("lister", "visit_type", "queue", "slots", "sent", "failed", "skipped",
		"first_visits_scheduled_at"), rows, failed)
}

// nonEmpty is s, or nil (null in JSON) when it is empty.
func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
