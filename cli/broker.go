package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// brokerConnectTimeout bounds how long a command waits for the broker.
const brokerConnectTimeout = 15 * time.Second

func (a *app) brokerCommand() *cobra.Command {
	b := &cobra.Command{
		Use:   "broker",
		Short: "Inspect and drive the message broker the workers read from (for operators)",
	}
	b.AddCommand(a.brokerDepthCommand(), a.brokerSendCommand(), a.brokerEventsCommand(), a.brokerPurgeCommand(),
		a.brokerDropCommand(), a.brokerRequeueCommand())
	return b
}

// openBroker opens the configured broker; Run closes it. The embedded
// broker works over the configured store. observe opens it for watching
// events without taking them from revisit's own consumer (amqp: a
// transient events queue; embedded: results followed, not consumed).
func (a *app) openBroker(cmd *cobra.Command, observe bool) (broker.Broker, error) {
	c, err := a.config(cmd)
	if err != nil {
		return nil, err
	}
	if c.Broker == config.BrokerEmbedded {
		st, err := a.openStore(cmd)
		if err != nil {
			return nil, err
		}
		b := embedded.New(st, embedded.Config{Clock: a.env.Clock, EventsObserve: observe,
			KeepDone: time.Duration(c.Embedded.KeepDone), Logger: a.log})
		a.closers = append(a.closers, b.Close)
		return b, nil
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), brokerConnectTimeout)
	defer cancel()
	b, err := amqp.Open(ctx, amqp.Config{URL: c.Broker, Logger: a.log, EventsTransient: observe})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, b.Close)
	return b, nil
}

func (a *app) brokerDepthCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "depth QUEUE",
		Short: "Print how many messages wait in a queue",
		Args:  exactArgs("QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			n, err := b.Depth(cmd.Context(), args[0])
			if err != nil {
				return queueError(args[0], err)
			}
			return a.printSummary(fmt.Sprintf("%d message(s) ready in %s", n, args[0]), cols("queue", "depth"), args[0], n)
		},
	}
}

func (a *app) brokerSendCommand() *cobra.Command {
	var (
		queue, argsJSON, kwargsJSON string
		declare                     bool
	)
	cmd := &cobra.Command{
		Use:   "send TASK_NAME --queue QUEUE [--kwargs JSON] [--args JSON]",
		Short: "Send one task message, as revisit sends visits, and wait for its confirmation",
		Args:  exactArgs("TASK_NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if queue == "" {
				return usagef("--queue is required")
			}
			var task celery.Task
			if err := json.Unmarshal([]byte(argsJSON), &task.Args); err != nil {
				return usagef("--args: not a JSON list: %v", err)
			}
			if err := json.Unmarshal([]byte(kwargsJSON), &task.Kwargs); err != nil || task.Kwargs == nil {
				return usagef("--kwargs: not a JSON object: %v", err)
			}
			task.Name, task.ID, task.Origin = args[0], uuid.NewString(), visitsend.SenderName()
			msg, err := celery.NewMessage(task)
			if err != nil {
				return err
			}
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			if d, ok := b.(*amqp.Broker); ok && declare {
				if err := d.DeclareQueue(cmd.Context(), queue); err != nil {
					return err
				}
			}
			pubs, err := b.Publish(cmd.Context(), queue, []celery.Message{msg})
			if err != nil {
				return err
			}
			if p := pubs[0]; p.Outcome != broker.Confirmed {
				return fmt.Errorf("message %s to %s: %s: %w", p.ID, queue, p.Outcome, p.Err)
			}
			return a.printSummary(fmt.Sprintf("sent %s to %s: confirmed", task.ID, queue),
				cols("id", "queue", "outcome"), task.ID, queue, broker.Confirmed.String())
		},
	}
	f := cmd.Flags()
	f.StringVar(&queue, "queue", "", "the `queue` to send to (the task type's backend name for visits)")
	f.StringVar(&argsJSON, "args", "[]", "positional arguments, a JSON list")
	f.StringVar(&kwargsJSON, "kwargs", "{}", "keyword arguments, a JSON object")
	f.BoolVar(&declare, "declare", false, "declare the queue (durable) if it does not exist (amqp only: embedded queues exist implicitly)")
	return cmd
}

func (a *app) brokerEventsCommand() *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Follow the workers' task events (without taking them from revisit's events queue)",
		Long: `Follows the workers' task events without taking them from revisit's own
consumer. With RabbitMQ, the Celery events of the workers; with the embedded
broker, the task-result events of the results workers post from now on.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := a.openBroker(cmd, true)
			if err != nil {
				return err
			}
			ctx, stop := context.WithCancel(cmd.Context())
			defer stop()
			rw := a.rows(cols("time", "type", "id", "worker", "detail"))
			seen := 0
			err = b.Events(ctx, func(_ context.Context, evs []celery.Event) error {
				// Deliveries already on their way when the count is reached
				// still come here until Events sees the cancellation.
				for _, e := range evs {
					if count > 0 && seen == count {
						break
					}
					if err := rw.Row(e.Timestamp, e.Type, e.UUID, e.Hostname, eventDetail(e)); err != nil {
						return err
					}
					seen++
				}
				if count > 0 && seen == count {
					stop()
				}
				return rw.Flush()
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return rw.Close()
		},
	}
	cmd.Flags().IntVar(&count, "count", 0, "stop after this many events (0: follow until interrupted)")
	return cmd
}

// eventDetail summarizes what an event says beyond its type.
func eventDetail(e celery.Event) string {
	switch {
	case e.VisitResult != nil:
		return "result: " + string(e.VisitResult.Status)
	case e.Type == celery.TypeSucceeded:
		return "returned " + e.Result
	case e.Traceback != "":
		return lastLineOf(e.Traceback)
	case e.Name != "":
		return e.Name
	}
	return ""
}

// lastLineOf returns the last non-blank line of s: the exception line of a
// Python traceback.
func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
