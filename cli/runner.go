package cli

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/runner"
	"github.com/revisit-sched/revisit/store"
)

func (a *app) runnerCommand() *cobra.Command {
	var (
		types        []string
		prefix       string
		poll, grace  time.Duration
		leaseTTL     time.Duration
		wedgedPeriod time.Duration
		metricsAddr  string
	)
	cmd := &cobra.Command{
		Use:   "runner [--task-type TYPE]...",
		Short: "Dispatch the due generic tasks to the workers, until interrupted",
		Long: `runner keeps the queue of each task type fed with its due tasks: when at
least a fifth of the type's max_queue_length is free it records a run for each
due task and publishes its message to the queue named after the type's
backend_name; tasks with a priority go at once to the queue
"<priority prefix><backend_name>". It also ends as lost the runs without
news beyond their type's run_timeout. The task types are every type, or
those named: load-* ones too, whose tasks (a "save code now" request, a
task of "revisit task add") share the queue the orchestrator fills with
visits; the visits are not tasks, and stay the orchestrator's.

Runs are recorded unconfirmed and confirmed once the broker confirms their
messages. A runner killed mid-round (kill -9) leaves unconfirmed runs: the
next one removes them at start and dispatches their tasks again at once, so
at most the round in flight is in the queue twice. Run one runner per task
type: there is no lease.

Workers' events are applied by the event listener. SIGINT or SIGTERM stops
the runner: the round in flight finishes within the grace period.

When the configuration's retention section sets older_than, the runner also
removes, at start and every retention.interval, the task runs that ended
longer ago and the finished oneshot tasks none of whose runs is newer,
archiving them first to retention.archive_dir/tasks-YYYY-MM-DD.jsonl (as
"revisit task archive" does) unless retention.archive is false.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRoleCommand(cmd, metricsAddr, func(c config.Config, st store.Store, b broker.Broker,
				reg *prometheus.Registry) ([]role, error) {
				r, err := runner.New(st, b, runner.Config{TaskTypes: types, PriorityQueuePrefix: prefix,
					PollInterval: poll, GracePeriod: grace, WedgedCheckInterval: wedgedPeriod, LeaseTTL: leaseTTL,
					Logger: a.log.With("role", "runner"), Clock: a.env.Clock, Metrics: runner.NewMetrics(reg)})
				if err != nil {
					return nil, usageError{err}
				}
				ret, err := a.retentionRoles(c, st)
				if err != nil {
					return nil, err
				}
				return append([]role{{name: "runner", run: r.Run}}, ret...), nil
			})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&types, "task-type", nil, "dispatch this task `type` (repeatable; default: every type)")
	f.StringVar(&prefix, "priority-queue-prefix", runner.DefaultPriorityQueuePrefix, "`prefix` of the backend name that names the queue of priority tasks")
	f.DurationVar(&poll, "poll-interval", 10*time.Second, "wait after a round that found the queue full or few tasks due")
	f.DurationVar(&grace, "grace-period", 30*time.Second, "how long the round in flight may take to finish once interrupted")
	f.DurationVar(&leaseTTL, "lease-ttl", 15*time.Second, "how long a task type's lease lasts unless renewed: a dead runner's task types are taken over within it")
	f.DurationVar(&wedgedPeriod, "wedged-check-interval", 5*time.Minute, "period of the check that ends as lost the runs silent beyond their type's run_timeout")
	f.StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDRESS`/metrics")
	return cmd
}
