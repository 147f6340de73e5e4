package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// MetricsResponse holds scheduler metrics.
type MetricsResponse struct {
	Metrics []SchedulerMetrics `json:"metrics"`
}

// RefreshRequest is the body of POST /api/v1/scheduler-metrics/refresh;
// without lister_id every lister's metrics are recomputed.
type RefreshRequest struct {
	ListerID *uuid.UUID `json:"lister_id"`
}

func (s *Server) handleMetricsGet(w http.ResponseWriter, r *http.Request) {
	id, err := queryUUID(r, "lister_id")
	vt := r.URL.Query().Get("visit_type")
	if err == nil && vt != "" {
		err = revisit.ValidateVisitType(vt)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ms, err := s.st.MetricsGet(r.Context(), id, vt)
	s.reply(w, r, MetricsResponse{Metrics: mapSlice(ms, NewSchedulerMetrics)}, err)
}

func (s *Server) handleMetricsRefresh(w http.ResponseWriter, r *http.Request) {
	var req RefreshRequest
	if err := decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	ms, err := s.st.MetricsUpdate(r.Context(), req.ListerID, s.now())
	if err == nil {
		s.audit(r, revisit.ActionRefreshMetrics, revisit.ListerTarget(req.ListerID), "metrics", len(ms))
	}
	s.reply(w, r, MetricsResponse{Metrics: mapSlice(ms, NewSchedulerMetrics)}, err)
}
