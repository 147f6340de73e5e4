package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
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
		s.audit(r, revisit.ActionVisitNow, revisit.OriginTarget(revisit.OriginKey{URL: req.URL, VisitType: req.VisitType}), "visit", res.ID, "queue", res.Queue, "force", req.Force)
	}
	s.reply(w, r, res, err)
}

// VisitInFlightHint ends the message of a visit now refused because a
// visit of the origin is in flight.
const VisitInFlightHint = "; force: true sends another"

// visitNow sends the visit of the origin (visitsend.SendOrigin).
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
	v, err := visitsend.SendOrigin(ctx, s.st, s.cfg.Broker,
		visitsend.Config{Owner: actionOwner(), Origin: visitsend.SenderName(), Clock: s.cfg.Clock}, tt,
		revisit.OriginDispatchParams{Key: revisit.OriginKey{URL: req.URL, VisitType: req.VisitType},
			ListerID: req.ListerID, Now: s.now(), Force: req.Force})
	var e *revisit.Error
	if errors.As(err, &e) && e.Code == revisit.CodeConflict {
		return VisitNowResponse{}, revisit.Errorf(revisit.CodeConflict, "%s%s", e.Message, VisitInFlightHint)
	}
	if err != nil {
		return VisitNowResponse{}, err
	}
	return VisitNowResponse{ID: v.ID, URL: v.Origin.URL, VisitType: v.Origin.VisitType, ListerID: v.Origin.ListerID,
		Queue: tt.BackendName, ScheduledAt: v.ScheduledAt}, nil
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

// OriginEnabledAction names the action that enables an origin, or
// disables it.
func OriginEnabledAction(enabled bool) string {
	if enabled {
		return revisit.ActionEnableOrigin
	}
	return revisit.ActionDisableOrigin
}

// OriginEnabledAnswer is the answer (revisit.ActionAnswer's attrs) of an
// enable or disable of an origin: the lister whose rows it changed (or
// every lister) and how many changed.
func OriginEnabledAnswer(listerID *uuid.UUID, changed int) []any {
	lister := revisit.EveryLister
	if listerID != nil {
		lister = listerID.String()
	}
	return []any{"lister", lister, "changed", changed}
}

// handleOriginEnabled enables or disables an origin's listed rows.
func (s *Server) handleOriginEnabled(enabled bool) http.HandlerFunc {
	action := OriginEnabledAction(enabled)
	return func(w http.ResponseWriter, r *http.Request) {
		var req OriginEnabledRequest
		if err := decode(r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
		key := revisit.OriginKey{URL: req.URL, VisitType: req.VisitType}
		n, err := s.st.ListedOriginsSetEnabled(r.Context(), key, req.ListerID, enabled)
		if err == nil {
			s.audit(r, action, revisit.OriginTarget(key), OriginEnabledAnswer(req.ListerID, n)...)
		}
		s.reply(w, r, OriginEnabledResponse{URL: req.URL, VisitType: req.VisitType, ListerID: req.ListerID,
			Enabled: enabled, Changed: n}, err)
	}
}
