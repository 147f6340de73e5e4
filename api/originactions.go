package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// VisitNowRequest is the body of POST /api/v1/visits: an origin to visit
// now, whatever the policies say.
type VisitNowRequest struct {
	URL       string `json:"url"`
	VisitType string `json:"visit_type"`
	// ListerID names the lister whose listed row the visit carries;
	// without it, an enabled row, else the one listed last.
	ListerID *uuid.UUID `json:"lister_id,omitempty"`
	// Force sends the visit even when one of the origin is in flight.
	Force bool `json:"force,omitempty"`
}

// VisitNowResponse is the visit sent: its id (the message's), the listed
// row it carries, the queue it went to and when it was scheduled.
type VisitNowResponse struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	VisitType   string    `json:"visit_type"`
	ListerID    uuid.UUID `json:"lister_id"`
	Queue       string    `json:"queue"`
	ScheduledAt time.Time `json:"scheduled_at"`
}

func (s *Server) handleVisitNow(w http.ResponseWriter, r *http.Request) {
	var req VisitNowRequest
	err := decode(r, &req)
	if err == nil {
		err = revisit.ValidateOriginKey(revisit.OriginKey{URL: req.URL, VisitType: req.VisitType})
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.visitNow(r.Context(), req)
	if err == nil {
		s.audit(r, "visit_now", req.URL+" ("+req.VisitType+")", "visit", res.ID, "queue", res.Queue, "force", req.Force)
	}
	s.reply(w, r, res, err)
}

// visitNow dispatches a visit of the origin and sends its message at
// once, with a high priority, to its visit type's queue, whatever the
// queue's depth: the visit is in flight as the orchestrator's are.
func (s *Server) visitNow(ctx context.Context, req VisitNowRequest) (VisitNowResponse, error) {
	if s.cfg.Broker == nil {
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeUnavailable, "this server has no broker to send visits through")
	}
	tt, err := s.st.TaskTypeGet(ctx, "load-"+req.VisitType)
	if revisit.Code(err) == revisit.CodeNotFound {
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeNotFound,
			"no task type load-%s: the visit type has no queue", req.VisitType)
	}
	if err != nil {
		return VisitNowResponse{}, err
	}
	v, err := s.st.VisitsDispatchOrigin(ctx, revisit.OriginDispatchParams{
		Key:      revisit.OriginKey{URL: req.URL, VisitType: req.VisitType},
		ListerID: req.ListerID, Owner: actionOwner(), Now: s.now(), Force: req.Force})
	var e *revisit.Error
	if errors.As(err, &e) && e.Code == revisit.CodeConflict {
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeConflict, "%s; force: true sends another", e.Message)
	}
	if err != nil {
		return VisitNowResponse{}, err
	}
	sender := visitsend.NewSender(s.st, s.cfg.Broker,
		visitsend.Config{Owner: actionOwner(), Origin: visitsend.SenderName(), Clock: s.cfg.Clock})
	priority := visitsend.HighPriority
	out, err := sender.SendVisits(ctx, tt.BackendName, tt.BackendName, &priority, []revisit.Visit{v})
	switch {
	case err != nil:
		return VisitNowResponse{}, err
	case out.Unsure > 0:
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeUnavailable, "the broker did not confirm the message "+
			"to queue %s (%v); it may be queued all the same: its visit is kept as lost, so that its result counts",
			tt.BackendName, out.Err)
	case out.Failed > 0:
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeUnavailable,
			"the message was not sent to queue %s (%v); nothing is in flight", tt.BackendName, queueProblem(out.Err))
	}
	return VisitNowResponse{ID: v.ID, URL: v.Origin.URL, VisitType: v.Origin.VisitType, ListerID: v.Origin.ListerID,
		Queue: tt.BackendName, ScheduledAt: v.ScheduledAt}, nil
}

// queueProblem explains a queue the broker does not know.
func queueProblem(err error) error {
	if errors.Is(err, broker.ErrQueueMissing) {
		return errors.New("the queue does not exist: no worker declared it yet")
	}
	return err
}

// OriginEnabledRequest is the body of POST /api/v1/listed-origins/enable
// and /disable: an origin, and the lister whose row to change (every
// lister's without it).
type OriginEnabledRequest struct {
	URL       string     `json:"url"`
	VisitType string     `json:"visit_type"`
	ListerID  *uuid.UUID `json:"lister_id,omitempty"`
}

// OriginEnabledResponse says what an enable or disable did: the origin,
// its rows' state now and how many rows changed.
type OriginEnabledResponse struct {
	URL       string     `json:"url"`
	VisitType string     `json:"visit_type"`
	ListerID  *uuid.UUID `json:"lister_id,omitempty"`
	Enabled   bool       `json:"enabled"`
	Changed   int        `json:"changed"`
}

// handleOriginEnabled enables or disables an origin's listed rows.
func (s *Server) handleOriginEnabled(enabled bool) http.HandlerFunc {
	action := map[bool]string{true: "enable_origin", false: "disable_origin"}[enabled]
	return func(w http.ResponseWriter, r *http.Request) {
		var req OriginEnabledRequest
		if err := decode(r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
		key := revisit.OriginKey{URL: req.URL, VisitType: req.VisitType}
		n, err := s.st.ListedOriginsSetEnabled(r.Context(), key, req.ListerID, enabled)
		if err == nil {
			lister := "every lister"
			if req.ListerID != nil {
				lister = req.ListerID.String()
			}
			s.audit(r, action, req.URL+" ("+req.VisitType+")", "lister", lister, "changed", n)
		}
		s.reply(w, r, OriginEnabledResponse{URL: req.URL, VisitType: req.VisitType, ListerID: req.ListerID,
			Enabled: enabled, Changed: n}, err)
	}
}
