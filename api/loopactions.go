package api

import (
	"context"
	"net/http"
	"time"

	"github.com/revisit-sched/revisit"
)

// Pause says who paused a visit type and when.
type Pause struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// newPause is the JSON form of a stored pause.
func newPause(p revisit.Pause) *Pause { return &Pause{By: p.By, At: p.At.UTC()} }

// VisitTypePause is whether a visit type is paused: by whom and since
// when, or null when its loop runs.
type VisitTypePause struct {
	VisitType string `json:"visit_type"`
	Paused    *Pause `json:"paused"`
}

// ResumeResponse is a visit type resumed (Paused is null) and whether it
// was paused.
type ResumeResponse struct {
	VisitTypePause
	WasPaused bool `json:"was_paused"`
}

// RequeueResponse counts the visits an operator declared lost.
type RequeueResponse struct {
	VisitType string `json:"visit_type"`
	Lost      int    `json:"lost"`
}

// visitTypeOf returns the visit type of the request's path, which must
// have its load task type.
func (s *Server) visitTypeOf(ctx context.Context, r *http.Request) (string, error) {
	vt := r.PathValue("visit_type")
	if err := revisit.ValidateVisitType(vt); err != nil {
		return "", err
	}
	_, err := s.st.TaskTypeGet(ctx, "load-"+vt)
	if revisit.Code(err) == revisit.CodeNotFound {
		return "", revisit.Errorf(revisit.CodeNotFound, "no visit type %s (no task type load-%s)", vt, vt)
	}
	return vt, err
}

func (s *Server) handlePause(w http.ResponseWriter, r *http.Request) {
	vt, err := s.visitTypeOf(r.Context(), r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.st.VisitTypePauseSet(r.Context(), revisit.Pause{VisitType: vt, By: caller(r), At: s.now()})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.audit(r, revisit.ActionPause, vt, "paused_by", p.By, "paused_at", p.At)
	s.reply(w, r, VisitTypePause{VisitType: vt, Paused: newPause(p)}, nil)
}

func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	vt, err := s.visitTypeOf(r.Context(), r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	was, err := s.st.VisitTypePauseClear(r.Context(), vt)
	if err == nil {
		s.audit(r, revisit.ActionResume, vt, "was_paused", was)
	}
	s.reply(w, r, ResumeResponse{VisitTypePause: VisitTypePause{VisitType: vt}, WasPaused: was}, err)
}

// handleRequeueLost declares lost now the visits of the visit type sent
// and still without a result, so that their origins are offered again at
// once (docs/actions.md).
func (s *Server) handleRequeueLost(w http.ResponseWriter, r *http.Request) {
	vt, err := s.visitTypeOf(r.Context(), r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	n, err := s.st.VisitsExpire(r.Context(), vt, s.now())
	if err == nil {
		s.audit(r, revisit.ActionRequeueLost, vt, "lost", n)
	}
	s.reply(w, r, RequeueResponse{VisitType: vt, Lost: n}, err)
}
