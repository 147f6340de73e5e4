package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/history"
)

// The commands of this file show what a running revisit serve keeps or
// sees (its embedded broker's queues and workers, its history): they need
// --server; but revisit history --actions, which reads the store too.

func (a *app) queueCommand() *cobra.Command {
	q := &cobra.Command{
		Use:   "queue",
		Short: "Inspect the queues of a running server's broker (--server)",
	}
	q.AddCommand(a.queueListCommand(), a.queueMessagesCommand())
	return q
}

var brokerQueueColumns = []column{
	{name: "queue"}, {name: "visit_type"}, {name: "task_types", wide: true}, {name: "waiting"}, {name: "leased"},
	{name: "consumers"}, {name: "missing"}, {name: "error"},
}

func (a *app) queueListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the queues as the server's broker sees them now",
		Long: `List every queue a task type names (and, with the embedded broker, every
queue published to) as the broker of the server of --server sees it now:
the messages waiting, and those leased by workers (embedded broker) or the
consumers (RabbitMQ). A queue no worker declared yet is missing.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.serverClient(cmd, "its broker's queues")
			if err != nil {
				return err
			}
			qs, err := c.BrokerQueues(cmd.Context())
			if err != nil {
				return fmt.Errorf("queues: %w", err)
			}
			rw := a.rows(brokerQueueColumns)
			for _, q := range qs.Queues {
				if err := rw.Row(q.Queue, q.VisitType, q.TaskTypes, q.Waiting, q.Leased, q.Consumers, q.Missing,
					q.Error); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
}

var queuedMessageColumns = []column{
	{name: "id"}, {name: "task", wide: true}, {name: "url"}, {name: "visit_type"}, {name: "attempt"},
	{name: "enqueued_at"}, {name: "worker"}, {name: "lease_expires_at"},
}

// queueMessageFields names the fields of a queue's listing as the command
// line gives them.
var queueMessageFields = map[string]string{"queue": "QUEUE", "state": "--state", "limit": "--limit",
	"page_token": "--page-token"}

func (a *app) queueMessagesCommand() *cobra.Command {
	var (
		state, pageToken string
		limit            int
		all              bool
	)
	cmd := &cobra.Command{
		Use:   "messages QUEUE",
		Short: "List the messages of a queue of the server's embedded broker",
		Long: `List the messages of a queue of the embedded broker of the server of
--server, in enqueue order: those waiting (a worker may lease them now), or
with --state leased those held by a worker now, with the origin each
visits and the worker holding it. When more follow, the token of the next
page is printed on standard error; --all follows every page.`,
		Args: exactArgs("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := revisit.QueueMessageFilter{Queue: args[0], Listing: revisit.QueueListing(state), Limit: limit,
				PageToken: pageToken}
			if err := f.Validate(); err != nil {
				return flagged(err, queueMessageFields)
			}
			c, err := a.serverClient(cmd, "the messages of its embedded broker")
			if err != nil {
				return err
			}
			rw := a.rows(queuedMessageColumns)
			for {
				page, err := c.QueueMessages(cmd.Context(), f)
				if err != nil {
					return fmt.Errorf("messages of %s: %w", f.Queue, flagged(err, queueMessageFields))
				}
				for _, m := range page.Messages {
					if err := rw.Row(m.ID, m.Task, m.URL, m.VisitType, m.Attempt, m.EnqueuedAt, m.Worker,
						m.LeaseExpiresAt); err != nil {
						return err
					}
				}
				if more, err := a.pageEnd(rw, page.NextPageToken, all, "messages follow"); !more {
					return err
				}
				f.PageToken = page.NextPageToken
			}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&state, "state", string(revisit.QueueListWaiting), "which messages: waiting or leased")
	fl.IntVar(&limit, "limit", revisit.QueueMessagePageSize.Def, "messages per page (1 to 1000)")
	fl.StringVar(&pageToken, "page-token", "", "continue at this `token` (printed by a previous call)")
	fl.BoolVar(&all, "all", false, "follow every page")
	return cmd
}

var workerColumns = []column{
	{name: "name"}, {name: "seen"}, {name: "queues", wide: true}, {name: "leases_held"}, {name: "next_lease_expiry"},
	{name: "last_seen"}, {name: "last_lease", wide: true}, {name: "last_heartbeat", wide: true},
	{name: "last_result"}, {name: "results"},
}

func (a *app) workerCommand() *cobra.Command {
	w := &cobra.Command{
		Use:   "worker",
		Short: "Inspect the workers of a running server's embedded broker (--server)",
	}
	w.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the workers the server saw, and those holding leases",
		Long: `List the workers of the embedded broker of the server of --server: those
it saw since it started (what they did through it: queues leased from,
last calls, results by status) and those holding leases now, whichever
server they leased through (seen false). The server remembers at most
` + fmt.Sprint(api.MaxWorkersSeen) + ` workers, forgetting those seen longest ago.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.serverClient(cmd, "the workers it saw")
			if err != nil {
				return err
			}
			ws, err := c.Workers(cmd.Context())
			if err != nil {
				return fmt.Errorf("workers: %w", err)
			}
			rw := a.rows(workerColumns)
			for _, w := range ws.Workers {
				if err := rw.Row(w.Name, w.Seen, w.Queues, w.LeasesHeld, w.NextLeaseExpiry, w.LastSeen, w.LastLease,
					w.LastHeartbeat, w.LastResult, w.Results); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	})
	return w
}

var historyColumns = []column{
	{name: "visit_type"}, {name: "minute"}, {name: "scheduled"}, {name: "scheduled_without_policy", wide: true},
	{name: "results"}, {name: "lost"}, {name: "queue_depth"}, {name: "free_slots"}, {name: "grab_p95_seconds"},
	{name: "grab_mean_seconds", wide: true},
}

func (a *app) historyCommand() *cobra.Command {
	var (
		minutes int
		actions bool
		af      actionListFlags
	)
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Print the last minutes of the figures a running server keeps (--server), or the operators' actions",
		Long: `Print, per visit type and minute, the figures the server of --server keeps
in memory for the last 24 hours (the console's charts): the visits
scheduled by policy, the results by outcome and the visits lost in the
minute, and the queue's depth, free slots and the grabs' latency at its
end. A figure the server has no value of for a minute is empty (null in
JSON). docs/history.md says where each comes from.

With --actions, print instead the operators' actions the store keeps
(the console's Actions page), newest first: when, by whom, the action,
its target and what came of it; through --server, or on the configured
store without it. --action and --by filter them. When more follow, the
token of the next page is printed on standard error; --all follows every
page. docs/actions.md, "Who did what", says which actions are kept and
for how long.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if actions {
				if cmd.Flags().Changed("minutes") {
					return usagef("--minutes: not with --actions")
				}
				return a.listActions(cmd, af)
			}
			for _, name := range []string{"action", "by", "limit", "page-token", "all"} {
				if cmd.Flags().Changed(name) {
					return usagef("--%s: only with --actions", name)
				}
			}
			if err := api.HistoryMinutes.Check(minutes); err != nil {
				return usageError{named("--minutes", err)}
			}
			c, err := a.serverClient(cmd, "the history it keeps")
			if err != nil {
				return err
			}
			w, err := c.History(cmd.Context(), minutes)
			if err != nil {
				return fmt.Errorf("history: %w", err)
			}
			rw := a.rows(historyColumns)
			for _, vt := range w.VisitTypes {
				for i := range w.Minutes {
					if err := rw.Row(vt.VisitType, w.Start.Add(time.Duration(i)*time.Minute),
						minuteOf(vt.Scheduled, i), at(vt.ScheduledWithoutPolicy, i), minuteOf(vt.Results, i),
						at(vt.Lost, i), at(vt.QueueDepth, i), at(vt.FreeSlots, i), at(vt.GrabP95Seconds, i),
						at(vt.GrabMeanSeconds, i)); err != nil {
						return err
					}
				}
			}
			return rw.Close()
		},
	}
	cmd.Flags().IntVar(&minutes, "minutes", api.HistoryMinutes.Def, "how many minutes, up to the last whole one (1 to 1440)")
	cmd.Flags().BoolVar(&actions, "actions", false, "print the operators' actions instead (through --server or on the store)")
	af.register(cmd)
	return cmd
}

// at is the value of minute i of a series; nil when it has none.
func at(vs history.Values, i int) *float64 {
	if i < len(vs) {
		return vs[i]
	}
	return nil
}

// minuteOf is minute i of series by label: the labels with a value then;
// nil when none has one.
func minuteOf(series map[string]history.Values, i int) any {
	out := map[string]float64{}
	for label, vs := range series {
		if v := at(vs, i); v != nil {
			out[label] = *v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
