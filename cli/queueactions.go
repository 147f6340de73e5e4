package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
)

// messageActions are the operator's actions on one message of the
// embedded broker: *embedded.Broker and the API client implement them.
type messageActions interface {
	DropMessage(ctx context.Context, id string) (embedded.QueuedMessage, bool, error)
	RequeueMessage(ctx context.Context, id string) (embedded.QueuedMessage, error)
}

// recordQueueAction records a queue action done through the embedded
// broker in its store, as by the CLI (recordAction); through a server,
// the server records it, and RabbitMQ has no store of revisit's.
func (a *app) recordQueueAction(cmd *cobra.Command, actor any, action, target string, attrs ...any) {
	if _, ok := actor.(*embedded.Broker); !ok {
		return
	}
	st, err := a.openStore(cmd)
	if err != nil {
		a.log.Error("action done but not recorded", "action", action, "target", target, "err", err)
		return
	}
	a.recordAction(cmd.Context(), st, action, target, attrs...)
}

// queueActor returns what the queue actions go through: the API client of
// --server (the server's broker), or the configured broker.
func (a *app) queueActor(cmd *cobra.Command) (any, error) {
	if a.server != "" {
		return a.newClient(cmd)
	}
	return a.openBroker(cmd, false)
}

func (a *app) brokerPurgeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "purge QUEUE",
		Short: "Delete the messages waiting in a queue (not those a worker holds) and offer their origins again",
		Long: `Delete the messages of a queue that wait for a worker; those a worker
holds now stay. With the embedded broker the visits of the deleted
messages are declared lost at once and their origins offered again. With
RabbitMQ (queue.purge) revisit does not know which visits they carried:
they stay in flight until their visit type's timeout, or until
"revisit visit-type requeue-lost VT".`,
		Args: exactArgs("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			actor, err := a.queueActor(cmd)
			if err != nil {
				return err
			}
			p, ok := actor.(broker.Purger)
			if !ok {
				return fmt.Errorf("purge %s: the broker cannot purge queues", args[0])
			}
			res, err := p.PurgeQueue(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("purge %s: %w", args[0], err)
			}
			a.recordQueueAction(cmd, actor, revisit.ActionPurgeQueue, res.Queue, "purged", res.Purged,
				"visits_lost", res.VisitsLost)
			sentence := fmt.Sprintf("purged %d message(s) from %s; ", res.Purged, res.Queue)
			if res.VisitsLost != nil {
				sentence += fmt.Sprintf("%d visit(s) declared lost, their origins are offered again", *res.VisitsLost)
			} else {
				sentence += "their visits stay in flight until their timeout (revisit visit-type requeue-lost offers their origins now)"
			}
			return a.printSummary(sentence, cols("queue", "purged", "visits_lost"), res.Queue, res.Purged, res.VisitsLost)
		},
	}
}

func (a *app) brokerDropCommand() *cobra.Command {
	return a.messageActionCommand("drop", "Delete one message of the embedded broker and declare its visit lost",
		`Delete one message of the embedded broker, waiting or held by a worker
(a poison message the workers keep failing on): the worker holding it
hears that it is gone at its next heartbeat and abandons it. Its visit is
declared lost and its origin offered again. A message whose result is
stored is refused.`,
		func(cmd *cobra.Command, acts messageActions, id string) error {
			m, lost, err := acts.DropMessage(cmd.Context(), id)
			if err != nil {
				return err
			}
			a.recordQueueAction(cmd, acts, revisit.ActionDropMessage, m.ID, "queue", m.Queue, "worker", m.Worker,
				"visit_lost", lost)
			sentence := fmt.Sprintf("dropped %s from %s", m.ID, m.Queue)
			if lost {
				sentence += "; its visit was declared lost, its origin is offered again"
			}
			return a.printSummary(sentence, cols("id", "queue", "url", "visit_lost"), m.ID, m.Queue, m.URL, lost)
		})
}

func (a *app) brokerRequeueCommand() *cobra.Command {
	return a.messageActionCommand("requeue", "Take a leased message of the embedded broker back from its worker",
		`Take a leased message of the embedded broker back from its worker (a
stuck worker): it waits again in its place, and the next lease takes it
as its next attempt. Its former worker can no longer extend the lease;
its result still counts until another worker leases the message.`,
		func(cmd *cobra.Command, acts messageActions, id string) error {
			m, err := acts.RequeueMessage(cmd.Context(), id)
			if err != nil {
				return err
			}
			a.recordQueueAction(cmd, acts, revisit.ActionRequeueMessage, m.ID, "queue", m.Queue, "worker", m.Worker)
			return a.printSummary(fmt.Sprintf("requeued %s in %s (it was leased to %s)", m.ID, m.Queue, m.Worker),
				cols("id", "queue", "url", "worker"), m.ID, m.Queue, m.URL, m.Worker)
		})
}

// messageActionCommand builds a command acting on the message of its
// argument, through --server or the embedded broker.
func (a *app) messageActionCommand(name, short, long string,
	act func(cmd *cobra.Command, acts messageActions, id string) error) *cobra.Command {
	return &cobra.Command{
		Use:   name + " MESSAGE_ID",
		Short: short,
		Long:  long,
		Args:  exactArgs("MESSAGE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			actor, err := a.queueActor(cmd)
			if err != nil {
				return err
			}
			acts, ok := actor.(messageActions)
			if !ok {
				return usagef("%s acts on the embedded broker's messages; the configured broker is RabbitMQ", cmd.CommandPath())
			}
			if err := act(cmd, acts, args[0]); err != nil {
				return fmt.Errorf("%s %s: %w", name, args[0], err)
			}
			return nil
		},
	}
}
