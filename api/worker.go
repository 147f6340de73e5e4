package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
)

// Limits and defaults of the worker protocol.
const (
	// MaxLeaseMessages bounds "max" of a lease.
	MaxLeaseMessages = 100
	// DefaultLeaseSeconds is the lease of a request without
	// "lease_seconds"; MaxLeaseSeconds bounds it (one day).
	DefaultLeaseSeconds = 300
	MaxLeaseSeconds     = 86400
	// MaxWaitSeconds bounds "wait_seconds", how long a lease long-polls.
	MaxWaitSeconds = 60
	// MaxWorkerName bounds the length of "worker".
	MaxWorkerName = 200
)

// leaseRequest is the body of POST /api/v1/queues/{queue}/lease. Absent (or
// 0) max and lease_seconds take 1 and DefaultLeaseSeconds; wait_seconds
// defaults to 0 (answer at once).
type leaseRequest struct {
	Worker       string `json:"worker"`
	Max          int    `json:"max"`
	LeaseSeconds int    `json:"lease_seconds"`
	WaitSeconds  int    `json:"wait_seconds"`
}

type leaseResponse struct {
	Messages []leasedMessage `json:"messages"`
}

type leasedMessage struct {
	ID             string          `json:"id"`
	Task           string          `json:"task"`
	Args           json.RawMessage `json:"args"`
	Kwargs         json.RawMessage `json:"kwargs"`
	Attempt        int             `json:"attempt"`
	LeaseExpiresAt time.Time       `json:"lease_expires_at"`
}

// checkWorker checks the worker name of a request.
func checkWorker(name string) error {
	switch {
	case name == "":
		return revisit.Invalidf("worker", "missing: name the worker")
	case len(name) > MaxWorkerName:
		return revisit.Invalidf("worker", "longer than %d bytes", MaxWorkerName)
	}
	return nil
}

// checkLeaseSeconds checks lease_seconds, 0 meaning the default.
func checkLeaseSeconds(n int) (time.Duration, error) {
	switch {
	case n == 0:
		return DefaultLeaseSeconds * time.Second, nil
	case n < 0 || n > MaxLeaseSeconds:
		return 0, revisit.Invalidf("lease_seconds", "%d is out of range 1..%d", n, MaxLeaseSeconds)
	}
	return time.Duration(n) * time.Second, nil
}

func (s *Server) handleLease(w http.ResponseWriter, r *http.Request) {
	var req leaseRequest
	if err := decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Max == 0 {
		req.Max = 1
	}
	leaseFor, err := checkLeaseSeconds(req.LeaseSeconds)
	switch {
	case err != nil:
	case req.Max < 0 || req.Max > MaxLeaseMessages:
		err = revisit.Invalidf("max", "%d is out of range 1..%d", req.Max, MaxLeaseMessages)
	case req.WaitSeconds < 0 || req.WaitSeconds > MaxWaitSeconds:
		err = revisit.Invalidf("wait_seconds", "%d is out of range 0..%d", req.WaitSeconds, MaxWaitSeconds)
	default:
		err = checkWorker(req.Worker)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.draining, cancel)()
	wait := time.Duration(req.WaitSeconds) * time.Second
	if s.draining.Err() != nil {
		wait = 0
	}
	tasks, err := s.q.Lease(ctx, embedded.LeaseParams{Queue: r.PathValue("queue"), Worker: req.Worker,
		Max: req.Max, LeaseFor: leaseFor, Wait: wait})
	if err != nil && s.draining.Err() != nil && r.Context().Err() == nil && errors.Is(err, context.Canceled) {
		tasks, err = nil, nil // drained: no message
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resp := leaseResponse{Messages: make([]leasedMessage, len(tasks))}
	for i, t := range tasks {
		resp.Messages[i] = leasedMessage{ID: t.ID, Task: t.Task, Args: t.Args, Kwargs: t.Kwargs,
			Attempt: t.Attempt, LeaseExpiresAt: t.LeaseExpiresAt}
	}
	s.writeJSON(w, http.StatusOK, resp)
}

// heartbeatRequest is the body of POST /api/v1/messages/{id}/heartbeat;
// absent lease_seconds takes DefaultLeaseSeconds.
type heartbeatRequest struct {
	Worker       string `json:"worker"`
	LeaseSeconds int    `json:"lease_seconds"`
}

type heartbeatResponse struct {
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
}

func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	var req heartbeatRequest
	if err := decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	leaseFor, err := checkLeaseSeconds(req.LeaseSeconds)
	if err == nil {
		err = checkWorker(req.Worker)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	until, err := s.q.Heartbeat(r.Context(), r.PathValue("id"), req.Worker, leaseFor)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, heartbeatResponse{LeaseExpiresAt: until})
}

// resultRequest is the body of POST /api/v1/messages/{id}/result.
type resultRequest struct {
	Worker   string `json:"worker"`
	Status   string `json:"status"`
	Snapshot string `json:"snapshot"`
	Error    string `json:"error"`
}

// resultResponse says whether the result was stored: false when the
// message had a result already (a repeated result is ignored).
type resultResponse struct {
	Stored bool `json:"stored"`
}

func (s *Server) handleResult(w http.ResponseWriter, r *http.Request) {
	var req resultRequest
	if err := decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := checkWorker(req.Worker); err != nil {
		s.writeError(w, r, err)
		return
	}
	stored, err := s.q.Complete(r.Context(), embedded.Result{ID: r.PathValue("id"), Worker: req.Worker,
		Status: celery.VisitStatus(req.Status), Snapshot: req.Snapshot, Error: req.Error})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, resultResponse{Stored: stored})
}
