package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
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
// queuesTTL). Counting reads every in-flight record (on PostgreSQL ~0.4 s
// a million), so with a large backlog polled every second the count
// alone would keep the database busy; this way it takes at most a tenth
// of one of its processors, while queue depths stay a second old at most.
const countsReuse = 10

// queuesCache holds the last measure of the queues, and the last count of
// the visits in flight, which it may outlive.
type queuesCache struct {
	mu     sync.Mutex
	at     time.Time
	queues []Queue

	counts    map[string]revisit.VisitCounts // by visit type
	countedAt time.Time
	countTook time.Duration
}

// queues returns the state of every load-* task type's queue, measured at
// most queuesTTL ago (the visits in flight: see countsReuse).
func (s *Server) queues(ctx context.Context) ([]Queue, error) {
	c := &s.live
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queues != nil && s.now().Sub(c.at) < queuesTTL {
		return c.queues, nil
	}
	qs, err := s.measureQueues(ctx, c)
	if err != nil {
		return nil, err
	}
	c.queues, c.at = qs, s.now()
	return qs, nil
}

// measureQueues measures the queue of every load-* task type; c, locked,
// keeps the count of the visits in flight.
func (s *Server) measureQueues(ctx context.Context, c *queuesCache) ([]Queue, error) {
	tts, err := s.st.TaskTypeList(ctx)
	if err != nil {
		return nil, err
	}
	byType, err := s.inFlightCounts(ctx, c)
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

// inFlightCounts returns the visits in flight by visit type: c's count,
// or a new one once c's is older than queuesTTL and countsReuse times
// what it took.
func (s *Server) inFlightCounts(ctx context.Context, c *queuesCache) (map[string]revisit.VisitCounts, error) {
	now := s.now()
	if c.counts != nil && !now.Before(c.countedAt) && now.Sub(c.countedAt) < max(queuesTTL, countsReuse*c.countTook) {
		return c.counts, nil
	}
	start := time.Now()
	counts, err := s.st.VisitsCount(ctx)
	if err != nil {
		return nil, err
	}
	c.countTook = time.Since(start)
	c.counts = make(map[string]revisit.VisitCounts, len(counts))
	for _, vc := range counts {
		c.counts[vc.VisitType] = vc
	}
	c.countedAt = now
	return c.counts, nil
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
