package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
	"github.com/revisit-sched/revisit/store"
)

// newSender returns the sender of the commands that send visits: each
// visit is in flight, recorded under this process's name, until its result.
func (a *app) newSender(st store.Store, b broker.Broker) *visitsend.Sender {
	return visitsend.NewSender(st, b, a.senderConfig())
}

// senderConfig is how the commands that send visits sign them: each visit
// is recorded under this process's name.
func (a *app) senderConfig() visitsend.Config {
	return visitsend.Config{Owner: holder.New(), Origin: visitsend.SenderName(), Clock: a.env.Clock}
}

// loadTaskType returns the task type load-<visitType>, whose backend name
// names the task and queue of the visit type's visits.
func loadTaskType(ctx context.Context, st backend, visitType string) (revisit.TaskType, error) {
	return taskTypeNamed(ctx, st, "load-"+visitType)
}

// taskTypeNamed returns the task type name, saying how to create it when
// it does not exist.
func taskTypeNamed(ctx context.Context, st backend, name string) (revisit.TaskType, error) {
	tt, err := st.TaskTypeGet(ctx, name)
	if revisit.Code(err) == revisit.CodeNotFound {
		return tt, revisit.Errorf(revisit.CodeNotFound, "no task type %s (add it with revisit task-type add or register)", name)
	}
	if err != nil {
		return tt, fmt.Errorf("task type %s: %w", name, err)
	}
	return tt, nil
}

// queueError explains a queue the broker does not know.
func queueError(queue string, err error) error {
	if errors.Is(err, broker.ErrQueueMissing) {
		return fmt.Errorf("queue %s does not exist (no worker declared it yet)", queue)
	}
	return err
}

// queueTarget is where the visits of a visit type go: the queue, and the
// load task type that names their task and bounds the queue.
type queueTarget struct {
	visitType string
	taskType  revisit.TaskType
	queue     string
}

// sendOptions say how the commands that fill queues with visits send.
type sendOptions struct {
	// limit caps the visits sent to each queue (0: its free slots).
	limit int
	// dryRun shows what would be sent, changing nothing.
	dryRun bool
}

// fillQueues sends to each target's queue as many visits chosen by p as it
// has free slots, and prints a row per queue it sent to. Messages the
// broker did not confirm fail the command once every queue is done.
func (a *app) fillQueues(ctx context.Context, st store.Store, b broker.Broker, p revisit.GrabParams,
	targets []queueTarget, o sendOptions) error {
	sender := a.newSender(st, b)
	if o.dryRun {
		return a.previewQueues(ctx, st, sender, p, targets, o.limit)
	}
	var rows [][]any
	notSent := 0
	var firstErr, err error
	for _, t := range targets {
		p.VisitType = t.visitType
		var slots int
		var res visitsend.Result
		slots, res, err = sender.Fill(ctx, visitsend.Request{Grab: p, Task: t.taskType.BackendName, Queue: t.queue},
			t.taskType.MaxQueueLengthOrDefault(), o.limit)
		if err != nil {
			err = fmt.Errorf("%s: %w", t.visitType, queueError(t.queue, err))
			break
		}
		rows = append(rows, []any{t.visitType, t.queue, slots, res.Sent, res.NotSent()})
		notSent += res.NotSent()
		if firstErr == nil {
			firstErr = res.Err
		}
	}
	err = a.printRows(cols("visit_type", "queue", "slots", "sent", "failed"), rows, err)
	if err == nil && notSent > 0 {
		err = fmt.Errorf("%d message(s) not confirmed by the broker; their origins are offered again: %w", notSent, firstErr)
	}
	return err
}

// previewQueues prints the messages fillQueues would send, without
// marking or sending anything; a line on standard error tells the free
// slots of each queue.
func (a *app) previewQueues(ctx context.Context, st store.Store, sender *visitsend.Sender, p revisit.GrabParams,
	targets []queueTarget, limit int) error {
	var rows [][]any
	err := func() error {
		for _, t := range targets {
			slots, err := sender.FreeSlots(ctx, t.queue, t.taskType.MaxQueueLengthOrDefault())
			if err != nil {
				return fmt.Errorf("%s: %w", t.visitType, queueError(t.queue, err))
			}
			n := slots
			if limit > 0 {
				n = min(n, limit)
			}
			var origins []revisit.ListedOrigin
			if n > 0 {
				p.VisitType, p.Count, p.DryRun = t.visitType, n, true
				if origins, err = st.GrabNextVisits(ctx, p); err != nil {
					return fmt.Errorf("%s: %w", t.visitType, err)
				}
			}
			kwargs, err := sender.Messages().Kwargs(ctx, origins)
			if err != nil {
				return err
			}
			for i, o := range origins {
				rows = append(rows, []any{t.visitType, t.queue, t.taskType.BackendName, o.URL, kwargs[i]})
			}
			fmt.Fprintf(a.env.Stderr, "revisit: dry run: %d free slot(s) in %s, %d visit(s) would be sent; nothing sent\n",
				slots, t.queue, len(origins))
		}
		return nil
	}()
	return a.printRows(cols("visit_type", "queue", "task", "url", "kwargs"), rows, err)
}

// printRows prints rows of columns c, made before the command ended with
// failed (nil when it did not fail), and returns failed or the error of
// printing. A command that failed before any row prints nothing.
func (a *app) printRows(c []column, rows [][]any, failed error) error {
	if failed != nil && len(rows) == 0 {
		return failed
	}
	rw := a.rows(c)
	for _, r := range rows {
		if err := rw.Row(r...); err != nil {
			return err
		}
	}
	if err := rw.Close(); err != nil {
		return err
	}
	return failed
}

func (a *app) sendToCeleryCommand() *cobra.Command {
	var (
		g     grabFlags
		queue string
		count int
		o     sendOptions
	)
	cmd := &cobra.Command{
		Use:   "send-to-celery VISIT_TYPE",
		Short: "Fill a visit type's queue once with the next origins to visit",
		Long: `Sends the next origins of VISIT_TYPE that the policy chooses to the workers'
queue, once: as many as the queue has free slots (max_queue_length of the task
type load-VISIT_TYPE less the messages waiting), at most --count. The queue is
the task type's backend_name, or --queue. Each visit is in flight, as those
of the orchestrator are, until its result comes back (or its visit type's
timeout passes: then its origin is offered again). It prints the free slots
found, the visits sent and the messages the broker did not confirm (their
origins are offered again, and the command fails).

This is upstream's "swh scheduler origin send-to-celery".

` + grabHelp(),
		Args: exactArgs("VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.params(cmd, args[0])
			if err != nil {
				return err
			}
			if changed(cmd.Flags(), "count") {
				if err := revisit.GrabCount.Check(count); err != nil {
					return usageError{named("--count", err)}
				}
				o.limit = count
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if p.ListerID, err = g.lister.resolveID(ctx, st); err != nil {
				return err
			}
			if p.Now.IsZero() {
				p.Now = a.now().UTC()
			}
			if err := validateGrab(p); err != nil {
				return err
			}
			tt, err := loadTaskType(ctx, st, p.VisitType)
			if err != nil {
				return err
			}
			target := queueTarget{visitType: p.VisitType, taskType: tt, queue: tt.BackendName}
			if queue != "" {
				target.queue = queue
			}
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			return a.fillQueues(ctx, st, b, p, []queueTarget{target}, o)
		},
	}
	g.register(cmd, revisit.OldestScheduledFirst)
	f := cmd.Flags()
	f.StringVar(&queue, "queue", "", "send to this `queue` (default: the backend_name of the task type load-VISIT_TYPE)")
	f.IntVar(&count, "count", 0, "send at most this many visits (default: as many as the queue has free slots)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the messages that would be sent; mark and send nothing")
	return cmd
}

// validateGrab checks a grab whose count is set later.
func validateGrab(p revisit.GrabParams) error {
	p.Count = 1
	_, err := p.Validate()
	return err
}

func (a *app) scheduleNextCommand() *cobra.Command {
	var g grabFlags
	cmd := &cobra.Command{
		Use:   "schedule-next VISIT_TYPE COUNT",
		Short: "Choose the next COUNT origins to visit and create a one-shot task for each",
		Long: `Chooses the next COUNT origins of VISIT_TYPE with the policy, marks them
scheduled, and creates for each a one-shot task of type load-VISIT_TYPE, due
now, with one retry, whose keyword arguments are those of the visit's message
(url, lister_name, lister_instance_name and the extra loader arguments). The
runner then sends them as it sends every generic task. It prints the tasks.

This is upstream's "swh scheduler origin schedule-next".

` + grabHelp(),
		Args: exactArgs("VISIT_TYPE", "COUNT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.params(cmd, args[0])
			if err != nil {
				return err
			}
			if p.Count, err = revisit.GrabCount.Parse(args[1]); err != nil {
				return usageError{named("COUNT", err)}
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if p.ListerID, err = g.lister.resolveID(ctx, st); err != nil {
				return err
			}
			now := a.now().UTC()
			if p.Now.IsZero() {
				p.Now = now
			}
			if _, err := p.Validate(); err != nil {
				return err
			}
			tt, err := loadTaskType(ctx, st, p.VisitType)
			if err != nil {
				return err
			}
			origins, err := st.GrabNextVisits(ctx, p)
			if err != nil {
				return fmt.Errorf("grab %s: %w", p.VisitType, err)
			}
			kwargs, err := visitsend.NewMessages(st, visitsend.SenderName()).Kwargs(ctx, origins)
			if err != nil {
				return err
			}
			retries := 1
			tasks := make([]revisit.NewTask, len(origins))
			for i := range origins {
				tasks[i] = revisit.NewTask{Type: tt.Type, NextRun: now, Policy: revisit.TaskOneshot, RetriesLeft: &retries,
					Arguments: revisit.TaskArguments{Args: []any{}, Kwargs: kwargs[i]}}
			}
			var created []revisit.Task
			if len(tasks) > 0 {
				if created, err = st.TasksCreate(ctx, tasks); err != nil {
					return fmt.Errorf("create tasks: %w", err)
				}
			}
			rw := a.rows(taskColumns)
			for _, t := range created {
				if err := rw.Row(taskRow(t)...); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	g.register(cmd, revisit.OldestScheduledFirst)
	return cmd
}
