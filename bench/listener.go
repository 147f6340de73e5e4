package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/store"
)

// ListenerConfig configures RunListener.
type ListenerConfig struct {
	// URL is the store; the reference data set of Origins origins is
	// loaded unless a previous run left it there.
	URL     string
	Origins int
	// BrokerURL is the RabbitMQ server the workers' events go through, on
	// a scratch exchange and queue deleted afterwards.
	BrokerURL string
	// Visits is how many git visits are dispatched, then reported done.
	Visits   int
	Progress io.Writer
}

// ListenerReport is what RunListener measured.
type ListenerReport struct {
	URL     string `json:"store"`
	Origins int    `json:"origins"`
	Visits  int    `json:"visits"`
	Events  int    `json:"events"`
	// Seconds runs from the first event published to the last visit
	// closed.
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"results_per_s"`
	// CPU is the processor time per visit closed.
	CPU CPU `json:"cpu_per_result"`
}

// workerEvents are the events a Celery worker sends about one visit it
// ran, in order, as kinds and bodies formatted with the task id, the
// UNIX time of the first and a number that makes the snapshot id.
var workerEvents = []struct{ key, body string }{
	{"task.received", `{"type": "task-received", "uuid": %[1]q, "hostname": "bench@worker", "timestamp": %.6[2]f, ` +
		`"name": "swh.loader.git.tasks.UpdateGitRepository", "args": "()", "kwargs": "{}", "retries": 0}`},
	{"task.started", `{"type": "task-started", "uuid": %[1]q, "hostname": "bench@worker", "timestamp": %.6[2]f}`},
	{"task.succeeded", `{"type": "task-succeeded", "uuid": %[1]q, "hostname": "bench@worker", "timestamp": %.6[2]f, ` +
		`"result": "{'status': 'eventful', 'snapshot_id': '%040[3]x'}", "runtime": 1.5}`},
}

// RunListener measures the path of visit results from Celery workers: it
// dispatches cfg.Visits git visits of the reference data set (untimed),
// then publishes for each the events a worker sends (received, started,
// succeeded with an eventful result) to a scratch events exchange while
// the real listener consumes them, as `revisit listener` does, until every
// visit is closed.
func RunListener(ctx context.Context, cfg ListenerConfig) (ListenerReport, error) {
	rep := ListenerReport{URL: store.Redact(cfg.URL), Origins: cfg.Origins}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	if err := forgetVisits(ctx, se, "git"); err != nil {
		return rep, err
	}
	ids, err := dispatchVisits(ctx, se, cfg.Visits)
	if err != nil {
		return rep, err
	}
	if err := se.maintain(ctx); err != nil {
		return rep, err
	}
	rep.Visits = len(ids)

	conn, err := amqp091.Dial(cfg.BrokerURL)
	if err != nil {
		return rep, fmt.Errorf("connect to RabbitMQ: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return rep, err
	}
	scratch := uuid.NewString()[:8]
	exchange, queue := "revisit.bench.ev."+scratch, "revisit.bench.events."+scratch
	// Declared here as the listener declares them, so that no event is
	// published before the queue is bound.
	if err := ch.ExchangeDeclare(exchange, "topic", true, false, false, false, nil); err != nil {
		return rep, err
	}
	defer ch.ExchangeDelete(exchange, false, false)
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		return rep, err
	}
	defer ch.QueueDelete(queue, false, false, false)
	if err := ch.QueueBind(queue, "task.#", exchange, false, nil); err != nil {
		return rep, err
	}

	b, err := amqp.Open(ctx, amqp.Config{URL: cfg.BrokerURL, EventsExchange: exchange, EventsQueue: queue})
	if err != nil {
		return rep, err
	}
	defer b.Close()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- listener.New(se, b, listener.Config{Clock: se.clk.Now}).Run(runCtx) }()

	cpu := sampleCPU()
	start := time.Now()
	first := float64(se.clk.Now().UnixMicro()) / 1e6
	for i, id := range ids {
		for k, e := range workerEvents {
			body := fmt.Sprintf(e.body, id, first+float64(i)/1e3+float64(k), i)
			err := ch.PublishWithContext(ctx, exchange, e.key, false, false,
				amqp091.Publishing{ContentType: "application/json", Body: []byte(body)})
			if err != nil {
				return rep, fmt.Errorf("publish events: %w", err)
			}
			rep.Events++
		}
	}
	progress(cfg.Progress, "%d events published in %.1f s", rep.Events, time.Since(start).Seconds())
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for open := int64(len(ids)); open > 0; {
		select {
		case err := <-done:
			return rep, fmt.Errorf("the listener stopped: %v", err)
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-tick.C:
		}
		if open, err = inFlight(ctx, se, "git"); err != nil {
			return rep, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.CPU = cpu.per(sampleCPU(), int64(rep.Visits))
	rep.PerSecond = float64(rep.Visits) / rep.Seconds
	return rep, nil
}

// dispatchVisits dispatches n git visits of the data set, oldest scheduled
// first, in rounds, marks them sent and returns their ids.
func dispatchVisits(ctx context.Context, se *session, n int) ([]string, error) {
	var ids []string
	for len(ids) < n {
		visits, err := se.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "bench", Grab: revisit.GrabParams{
			VisitType: "git", Count: min(10_000, n-len(ids)), Policy: revisit.OldestScheduledFirst, Now: se.clk.Now()}})
		if err != nil {
			return nil, err
		}
		if len(visits) == 0 {
			return nil, fmt.Errorf("only %d git origins are eligible for a visit, not %d", len(ids), n)
		}
		round := make([]string, len(visits))
		for i, v := range visits {
			round[i] = v.ID
		}
		if _, err := se.VisitsSent(ctx, round, se.clk.Now()); err != nil {
			return nil, err
		}
		ids = append(ids, round...)
	}
	return ids, nil
}

// inFlight counts the visits of a visit type still pending or sent.
func inFlight(ctx context.Context, s store.Store, visitType string) (int64, error) {
	counts, err := s.VisitsCount(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range counts {
		if c.VisitType == visitType {
			return c.Pending + c.Sent, nil
		}
	}
	return 0, nil
}
