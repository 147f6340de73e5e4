package api

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/revisit-sched/revisit/internal/service/livequeue"
)

// readyTimeout bounds the checks of /readyz.
const readyTimeout = 3 * time.Second

type healthResponse struct {
	Status string `json:"status"`
}

// readyResponse says whether each dependency is ready; Status is "ready"
// or "not ready", and Checks maps each check to "ok" or what is wrong.
type readyResponse struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

func (s *Server) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	s.writeJSON(w, http.StatusOK, healthResponse{Status: "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	resp := readyResponse{Status: "ready", Checks: map[string]string{}}
	check := func(name string, err error) {
		if err != nil {
			resp.Status = "not ready"
			resp.Checks[name] = err.Error()
			return
		}
		resp.Checks[name] = "ok"
	}
	if s.st != nil {
		tts, err := s.st.TaskTypeList(ctx)
		check("store", err)
		if s.cfg.Broker != nil {
			queue := "revisit.readyz" // any queue: a missing one answers too
			if len(tts) > 0 {
				queue = tts[0].BackendName
			}
			_, err := livequeue.Depth(ctx, s.cfg.Broker, queue)
			check("broker", err)
		}
	}
	if s.cfg.Orchestrator != nil {
		health := s.cfg.Orchestrator.Health()
		vts := make([]string, 0, len(health))
		for vt := range health {
			vts = append(vts, vt)
		}
		sort.Strings(vts)
		for _, vt := range vts {
			if h := health[vt]; !h.Healthy {
				check("orchestrator."+vt, loopError(h.LastError))
			} else {
				check("orchestrator."+vt, nil)
			}
		}
	}
	names := make([]string, 0, len(s.cfg.Checks))
	for name := range s.cfg.Checks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		check(name, s.cfg.Checks[name](ctx))
	}
	status := http.StatusOK
	if resp.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	s.writeJSON(w, status, resp)
}

// loopError is the error of an unhealthy loop.
type loopError string

func (e loopError) Error() string { return "unhealthy: " + string(e) }

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	promhttp.HandlerFor(s.cfg.Metrics, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}
