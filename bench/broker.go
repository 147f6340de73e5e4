package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

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
// orchestrator encodes them, in batches with publisher confirms, into a
// scratch durable queue deleted afterwards.
func RunBroker(ctx context.Context, cfg BrokerConfig) (BrokerReport, error) {
	rep := BrokerReport{Messages: cfg.Messages}
	b := cfg.Broker
	queue := "revisit.bench." + uuid.NewString()[:8]
	if len(cfg.QueueArgs) > 0 {
		d, ok := b.(queueArgsDeclarer)
		if !ok {
			return rep, fmt.Errorf("bench broker: this broker takes no queue arguments")
		}
		if err := d.DeclareQueueArgs(ctx, queue, cfg.QueueArgs); err != nil {
			return rep, err
		}
	} else if d, ok := b.(queueDeclarer); ok {
		if err := d.DeclareQueue(ctx, queue); err != nil {
			return rep, err
		}
	}
	defer b.DeleteQueue(context.WithoutCancel(ctx), queue)
	host, _ := os.Hostname()
	origin := "revisit-bench@" + host
	var elapsed time.Duration
	msgs := make([]celery.Message, 0, cfg.Batch)
	cpu := sampleCPU()
	for sent := 0; sent < cfg.Messages; sent += cfg.Batch {
		start := time.Now()
		msgs = msgs[:0]
		for i := sent; i < min(sent+cfg.Batch, cfg.Messages); i++ {
			m, err := celery.NewMessage(celery.Task{Name: "swh.loader.git.tasks.UpdateGitRepository",
				ID: uuid.NewString(), Origin: origin, Kwargs: map[string]any{
					"url":         fmt.Sprintf("https://git.example.org/project-%09d", i),
					"lister_name": ListerName, "lister_instance_name": ListerInstanceA}})
			if err != nil {
				return rep, err
			}
			msgs = append(msgs, m)
		}
		pubs, err := b.Publish(ctx, queue, msgs)
		elapsed += time.Since(start)
		if err != nil {
			return rep, err
		}
		for _, p := range pubs {
			switch p.Outcome {
			case broker.Confirmed:
				rep.Confirmed++
			case broker.Returned:
				rep.Returned++
			default:
				rep.Failed++
			}
		}
		if cfg.Progress != nil && (sent/cfg.Batch)%max(cfg.Messages/cfg.Batch/10, 1) == 0 {
			progress(cfg.Progress, "published %d/%d", sent+len(msgs), cfg.Messages)
		}
	}
	rep.CPU = cpu.per(sampleCPU(), int64(rep.Confirmed))
	rep.PerSecond = float64(rep.Confirmed) / elapsed.Seconds()
	var err error
	rep.Depth, err = b.Depth(ctx, queue)
	return rep, err
}
