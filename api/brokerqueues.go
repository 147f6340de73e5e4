package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/revisit-sched/revisit/broker"
)

// inspectTimeout bounds the measure of one queue.
const inspectTimeout = 2 * time.Second

// The brokers a BrokerQueuesResponse names.
const (
	brokerEmbedded = "embedded"
	brokerRabbitMQ = "rabbitmq"
)

// BrokerQueuesResponse is the body of GET /api/v1/broker/queues: every
// queue a task type names and, with the embedded broker, every queue
// published to, as the broker sees it now.
type BrokerQueuesResponse struct {
	GeneratedAt time.Time `json:"generated_at"`
	// Broker is "embedded" or "rabbitmq"; "" when the server has no
	// broker (the queues' figures are then unknown).
	Broker string        `json:"broker"`
	Queues []BrokerQueue `json:"queues"`
}

// BrokerQueue is one queue as the broker sees it now.
type BrokerQueue struct {
	Queue string `json:"queue"`
	// TaskTypes are the task types whose backend_name names the queue;
	// VisitType is the visit type of its load-* task type, if any.
	TaskTypes []string `json:"task_types"`
	VisitType string   `json:"visit_type,omitempty"`
	// Waiting counts the messages a worker may take now (the depth); null
	// when it cannot be measured, Error then says why.
	Waiting *int64 `json:"waiting"`
	Error   string `json:"error,omitempty"`
	// Missing says that the queue does not exist in the broker: no
	// worker declared it yet (RabbitMQ).
	Missing bool `json:"missing,omitempty"`
	// Leased counts the messages workers hold now (embedded broker; null
	// with RabbitMQ).
	Leased *int64 `json:"leased"`
	// Consumers counts the workers consuming the queue (RabbitMQ; null
	// with the embedded broker).
	Consumers *int64 `json:"consumers"`
}

func (s *Server) handleBrokerQueues(w http.ResponseWriter, r *http.Request) {
	resp, err := s.brokerQueues(r.Context())
	s.reply(w, r, resp, err)
}

// brokerQueues measures every queue of the task types and, with the
// embedded broker, of the store.
func (s *Server) brokerQueues(ctx context.Context) (BrokerQueuesResponse, error) {
	resp := BrokerQueuesResponse{GeneratedAt: s.now(), Queues: []BrokerQueue{}}
	tts, err := s.st.TaskTypeList(ctx)
	if err != nil {
		return resp, err
	}
	byQueue := map[string]*BrokerQueue{}
	queue := func(name string) *BrokerQueue {
		if q, ok := byQueue[name]; ok {
			return q
		}
		q := &BrokerQueue{Queue: name, TaskTypes: []string{}}
		byQueue[name] = q
		return q
	}
	for _, tt := range tts {
		q := queue(tt.BackendName)
		q.TaskTypes = append(q.TaskTypes, tt.Type)
		if vt, ok := tt.VisitType(); ok {
			q.VisitType = vt
		}
	}
	leased := map[string]int64{}
	switch {
	case s.q != nil:
		resp.Broker = brokerEmbedded
		names, err := s.st.QueueNames(ctx)
		if err != nil {
			return resp, err
		}
		for _, name := range names {
			queue(name)
		}
		leases, err := s.q.Leases(ctx)
		if err != nil {
			return resp, err
		}
		for _, l := range leases {
			leased[l.Queue] += l.Leased
		}
	case s.cfg.Broker != nil:
		resp.Broker = brokerRabbitMQ
	}
	for _, q := range byQueue {
		s.measureQueue(ctx, q, leased)
		resp.Queues = append(resp.Queues, *q)
	}
	slices.SortFunc(resp.Queues, func(a, b BrokerQueue) int { return strings.Compare(a.Queue, b.Queue) })
	return resp, nil
}

// measureQueue fills in the figures of q the broker tells; leased are the
// embedded broker's leases by queue.
func (s *Server) measureQueue(ctx context.Context, q *BrokerQueue, leased map[string]int64) {
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	var (
		info broker.QueueInfo
		err  error
	)
	switch b := s.broker().(type) {
	case nil:
		err = errors.New("no broker in this process")
	case broker.Inspector:
		info, err = b.Inspect(ctx, q.Queue)
		if err == nil || errors.Is(err, broker.ErrQueueMissing) {
			q.Consumers = &info.Consumers
		}
	default:
		info.Messages, err = b.Depth(ctx, q.Queue)
	}
	if s.q != nil {
		n := leased[q.Queue]
		q.Leased = &n
	}
	switch {
	case errors.Is(err, broker.ErrQueueMissing):
		q.Missing = true
		q.Waiting = &info.Messages
	case err != nil:
		q.Error = err.Error()
	default:
		q.Waiting = &info.Messages
	}
}

// broker returns the broker of this process: the embedded one, or the
// configured one (nil when there is none).
func (s *Server) broker() broker.Broker {
	if s.q != nil {
		return s.q
	}
	return s.cfg.Broker
}
