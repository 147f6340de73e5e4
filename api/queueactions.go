package api

import (
	"net/http"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
)

// PurgeResponse is the body of POST /api/v1/queues/{queue}/purge: how
// many waiting messages were deleted and, with the embedded broker, how
// many of their visits were declared lost (null with RabbitMQ: revisit
// does not know which visits its messages carried).
type PurgeResponse struct {
	Queue      string `json:"queue"`
	Broker     string `json:"broker"`
	Purged     int64  `json:"purged"`
	VisitsLost *int   `json:"visits_lost"`
}

// MessageActionResponse is the body of POST /api/v1/messages/{id}/drop
// and /requeue: the message as it was dropped, or as it waits again, and
// whether its visit was declared lost (drop only).
type MessageActionResponse struct {
	Message   QueuedMessage `json:"message"`
	VisitLost bool          `json:"visit_lost"`
}

// handlePurge deletes the waiting messages of a queue (docs/actions.md).
func (s *Server) handlePurge(w http.ResponseWriter, r *http.Request) {
	queue := r.PathValue("queue")
	p, ok := s.broker().(broker.Purger)
	if !ok {
		s.writeError(w, r, revisit.Errorf(revisit.CodeUnavailable, "this server has no broker to purge queues of"))
		return
	}
	res, err := p.PurgeQueue(r.Context(), queue)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp := PurgeResponse{Queue: queue, Broker: brokerRabbitMQ, Purged: res.Purged, VisitsLost: res.VisitsLost}
	if s.q != nil {
		resp.Broker = brokerEmbedded
	}
	s.audit(r, revisit.ActionPurgeQueue, queue, "purged", res.Purged, "visits_lost", lostCount(res.VisitsLost))
	s.reply(w, r, resp, nil)
}

// lostCount is how the log tells a count of visits lost that may be
// unknown.
func lostCount(n *int) any {
	if n == nil {
		return "unknown"
	}
	return *n
}

// handleDropMessage deletes one message of the embedded broker and
// declares its visit lost.
func (s *Server) handleDropMessage(w http.ResponseWriter, r *http.Request) {
	m, lost, err := s.q.DropMessage(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.audit(r, revisit.ActionDropMessage, m.ID, "queue", m.Queue, "worker", m.Worker, "visit_lost", lost)
	visitTypes, err := s.visitTypesByTask(r)
	s.reply(w, r, MessageActionResponse{Message: newQueuedMessage(m, visitTypes), VisitLost: lost}, err)
}

// handleRequeueMessage takes a leased message of the embedded broker back
// from its worker.
func (s *Server) handleRequeueMessage(w http.ResponseWriter, r *http.Request) {
	m, err := s.q.RequeueMessage(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.audit(r, revisit.ActionRequeueMessage, m.ID, "queue", m.Queue, "worker", m.Worker)
	visitTypes, err := s.visitTypesByTask(r)
	s.reply(w, r, MessageActionResponse{Message: newQueuedMessage(m, visitTypes)}, err)
}
