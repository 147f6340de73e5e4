package api

import (
	"context"
	"net/http"

	"github.com/revisit-sched/revisit/internal/service/livequeue"
)

// Queue is the state of one visit type's queue.
type Queue = livequeue.Queue

// QueuesResponse is the body of GET /api/v1/queues.
type QueuesResponse struct {
	Queues []Queue `json:"queues"`
}

// queues returns the state of every load-* task type's queue, as the
// orchestrator's gauges show it (livequeue.Live.Queues).
func (s *Server) queues(ctx context.Context) ([]Queue, error) {
	return s.live.Queues(ctx)
}

func (s *Server) handleQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.queues(r.Context())
	s.reply(w, r, QueuesResponse{Queues: qs}, err)
}
