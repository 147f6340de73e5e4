package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

// BrokerConfig configures RunBroker.
type BrokerConfig struct {
	// Broker is the broker to publish to: RabbitMQ (*amqp.Broker) or the
	// embedded one (*embedded.Broker), which then measures confirmed
	// writes into its store.
	Broker   ScratchBroker
	Messages int
	Batch    int
	// Queues is how many scratch queues are published to at once, one
	// publisher each (at least 1).
	Queues int
	// QueueArgs, when set, are the scratch queue's arguments (RabbitMQ:
	// x-queue-mode, x-queue-version), standing for what a deployment's
	// policy would set on the workers' queues.
	QueueArgs map[string]any
	Progress  io.Writer
}

// ScratchBroker is a broker that can delete the scratch queue of a run.
// Brokers whose queues must exist first (RabbitMQ) also have a
// DeclareQueue(ctx, queue) error method, which RunBroker calls.
type ScratchBroker interface {
	broker.Broker
	DeleteQueue(ctx context.Context, queue string) error
}

// queueDeclarer is a broker whose queues must be declared before use.
type queueDeclarer interface {
	DeclareQueue(ctx context.Context, queue string) error
}

// queueArgsDeclarer is a broker whose queues take arguments.
type queueArgsDeclarer interface {
	DeclareQueueArgs(ctx context.Context, queue string, args map[string]any) error
}

// BrokerReport is what RunBroker measured.
type BrokerReport struct {
	Messages  int     `json:"messages"`
	Queues    int     `json:"queues"`
	Confirmed int     `json:"confirmed"`
	Returned  int     `json:"returned"`
	Failed    int     `json:"failed"`
	PerSecond float64 `json:"confirmed_per_s"`
	// Depth is the scratch queue's depth afterwards: it must equal
	// Confirmed.
	Depth int64 `json:"queue_depth_after"`
	// CPU is the processor time per message confirmed.
	CPU CPU `json:"cpu_per_message"`
}

// PublishTarget is the publishing throughput target, in confirmed
// messages/s (issue 3).
const PublishTarget = 30_000

// RunBroker publishes cfg.Messages visit messages, encoded as the
// orchestrator encodes them, in batches with publisher confirms, into
// cfg.Queues scratch durable queues deleted afterwards: one publisher per
// queue, side by side, as the orchestrator's loops publish for their visit
// types. The rate is the messages confirmed over the wall time from the
// first batch's building to the last batch's confirms.
func RunBroker(ctx context.Context, cfg BrokerConfig) (BrokerReport, error) {
	cfg.Queues = max(cfg.Queues, 1)
	rep := BrokerReport{Messages: cfg.Messages, Queues: cfg.Queues}
	b := cfg.Broker
	queues := make([]string, cfg.Queues)
	for k := range queues {
		queues[k] = "revisit.bench." + uuid.NewString()[:8]
		if err := declareScratch(ctx, b, queues[k], cfg.QueueArgs); err != nil {
			return rep, err
		}
		defer b.DeleteQueue(context.WithoutCancel(ctx), queues[k])
	}
	host, _ := os.Hostname()
	origin := "revisit-bench@" + host
	progress := publishProgress{w: cfg.Progress, total: cfg.Messages}
	outcomes := make([]BrokerReport, len(queues)) // each publisher's own
	cpu := sampleCPU()
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for k, queue := range queues {
		// Queue k publishes the messages whose number is k modulo the count.
		g.Go(func() error {
			msgs := make([]celery.Message, 0, cfg.Batch)
			for first := k; first < cfg.Messages; first += cfg.Batch * cfg.Queues {
				msgs = msgs[:0]
				for i := first; i < cfg.Messages && len(msgs) < cfg.Batch; i += cfg.Queues {
					m, err := celery.NewMessage(celery.Task{Name: "swh.loader.git.tasks.UpdateGitRepository",
						ID: uuid.NewString(), Origin: origin, Kwargs: map[string]any{
							"url":         fmt.Sprintf("https://git.example.org/project-%09d", i),
							"lister_name": ListerName, "lister_instance_name": ListerInstanceA}})
					if err != nil {
						return err
					}
					msgs = append(msgs, m)
				}
				pubs, err := b.Publish(gctx, queue, msgs)
				if err != nil {
					return err
				}
				outcomes[k].count(pubs)
				progress.add(len(msgs))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return rep, err
	}
	elapsed := time.Since(start)
	for _, o := range outcomes {
		rep.Confirmed += o.Confirmed
		rep.Returned += o.Returned
		rep.Failed += o.Failed
	}
	rep.CPU = cpu.per(sampleCPU(), int64(rep.Confirmed))
	rep.PerSecond = float64(rep.Confirmed) / elapsed.Seconds()
	for _, queue := range queues {
		d, err := b.Depth(ctx, queue)
		if err != nil {
			return rep, err
		}
		rep.Depth += d
	}
	return rep, nil
}

// declareScratch declares a scratch queue where the broker needs it, with
// args if any.
func declareScratch(ctx context.Context, b ScratchBroker, queue string, args map[string]any) error {
	if len(args) > 0 {
		d, ok := b.(queueArgsDeclarer)
		if !ok {
			return fmt.Errorf("bench broker: this broker takes no queue arguments")
		}
		return d.DeclareQueueArgs(ctx, queue, args)
	}
	if d, ok := b.(queueDeclarer); ok {
		return d.DeclareQueue(ctx, queue)
	}
	return nil
}

// count adds the outcomes of pubs to r.
func (r *BrokerReport) count(pubs []broker.Publication) {
	for _, p := range pubs {
		switch p.Outcome {
		case broker.Confirmed:
			r.Confirmed++
		case broker.Returned:
			r.Returned++
		default:
			r.Failed++
		}
	}
}

// publishProgress reports, about every tenth of the run, how many
// messages the publishers have published.
type publishProgress struct {
	w           io.Writer
	total       int
	mu          sync.Mutex
	done, shown int
}

func (p *publishProgress) add(n int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.done-p.shown >= max(p.total/10, 1) || p.done == p.total {
		p.shown = p.done
		progress(p.w, "published %d/%d", p.done, p.total)
	}
}
