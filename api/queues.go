package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/revisit-sched/revisit/broker"
)

// depthTimeout bounds the measure of one queue's depth.
const depthTimeout = 2 * time.Second

// Queue is the state of one visit type's queue.
type Queue struct {
	VisitType      string `json:"visit_type"`
	TaskType       string `json:"task_type"`
	Queue          string `json:"queue"`
	MaxQueueLength int    `json:"max_queue_length"`
	// Depth is how many messages wait in the queue; nil when it cannot be
	// measured, DepthError then says why.
	Depth      *int64 `json:"depth"`
	DepthError string `json:"depth_error,omitempty"`
	// Pending, Sent and Lost count the visits in flight by state
	// (semantics.md §6).
	Pending int64 `json:"pending"`
	Sent    int64 `json:"sent"`
	Lost    int64 `json:"lost"`
}

// QueuesResponse is the body of GET /api/v1/queues.
type QueuesResponse struct {
	Queues []Queue `json:"queues"`
}

// queuesTTL is how long the queues' state is shared between requests:
// it measures every queue and counts every in-flight visit, and dashboards
// poll it, so concurrent and close requests share one measure.
const queuesTTL = time.Second

// countsReuse bounds the time spent counting the visits in flight: a
// count serves for countsReuse times as long as it took (and at least
// queuesTTL), so that a large backlog polled every second keeps the
// database counting a tenth of the time at most, while queue depths are
// measured again every second.
const countsReuse = 10

// queuesCache holds the last measure of the queues.
type queuesCache struct {
	mu     sync.Mutex
	at     time.Time
	queues []Queue
	// measuring is set while a request measures the queues again; the
	// others meanwhile get the last measure.
	measuring bool
}

// queues returns the state of every load-* task type's queue, measured at
// most queuesTTL ago, or, while another request measures it again, the
// last measure (the visits in flight: see countsReuse). Under load a
// measure waits for the store behind every other read: the requests that
// came meanwhile no longer wait for it (the p99 of API reads on SQLite,
// docs/performance.md, "Session 16"). The first measure is waited for.
func (s *Server) queues(ctx context.Context) ([]Queue, error) {
	c := &s.live
	c.mu.Lock()
	if c.queues == nil {
		defer c.mu.Unlock()
		qs, err := s.measureQueues(ctx)
		if err == nil {
			c.queues, c.at = qs, s.now()
		}
		return qs, err
	}
	if c.measuring || s.now().Sub(c.at) < queuesTTL {
		qs := c.queues
		c.mu.Unlock()
		return qs, nil
	}
	c.measuring = true
	c.mu.Unlock()
	qs, err := s.measureQueues(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.measuring = false
	if err != nil {
		return nil, err
	}
	c.queues, c.at = qs, s.now()
	return qs, nil
}

// measureQueues measures the queue of every load-* task type.
func (s *Server) measureQueues(ctx context.Context) ([]Queue, error) {
	tts, err := s.st.TaskTypeList(ctx)
	if err != nil {
		return nil, err
	}
	byType, err := s.inFlight.Get(ctx, s.st, s.now())
	if err != nil {
		return nil, err
	}
	qs := []Queue{}
	for _, tt := range tts {
		vt, ok := tt.VisitType()
		if !ok {
			continue
		}
		n := byType[vt]
		q := Queue{VisitType: vt, TaskType: tt.Type, Queue: tt.BackendName, MaxQueueLength: tt.MaxQueueLength,
			Pending: n.Pending, Sent: n.Sent, Lost: n.Lost}
		if d, err := s.depth(ctx, tt.BackendName); err != nil {
			q.DepthError = err.Error()
		} else {
			q.Depth = &d
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// depth measures a queue's depth; a queue that does not exist is empty.
func (s *Server) depth(ctx context.Context, queue string) (int64, error) {
	if s.cfg.Broker == nil {
		return 0, errors.New("no broker in this process")
	}
	ctx, cancel := context.WithTimeout(ctx, depthTimeout)
	defer cancel()
	d, err := s.cfg.Broker.Depth(ctx, queue)
	if errors.Is(err, broker.ErrQueueMissing) {
		return 0, nil
	}
	return d, err
}

func (s *Server) handleQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.queues(r.Context())
	s.reply(w, r, QueuesResponse{Queues: qs}, err)
}
