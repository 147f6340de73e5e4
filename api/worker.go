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

// The rules of the numbers of the worker protocol's requests: an absent
// one takes its default, a given one must be in range (0 is not "the
// default").
var (
	leaseMax          = revisit.Limit{Field: "max", Min: 1, Max: MaxLeaseMessages, Def: 1}
	leaseSecondsLimit = revisit.Limit{Field: "lease_seconds", Min: 1, Max: MaxLeaseSeconds, Def: DefaultLeaseSeconds}
	waitSecondsLimit  = revisit.Limit{Field: "wait_seconds", Min: 0, Max: MaxWaitSeconds, Def: 0}
)

// leaseRequest is the body of POST /api/v1/queues/{queue}/lease. Absent
// max, lease_seconds and wait_seconds take 1, DefaultLeaseSeconds and 0
// (answer at once).
type leaseRequest struct {
	Worker       string `json:"worker"`
	Max          *int   `json:"max"`
	LeaseSeconds *int   `json:"lease_seconds"`
	WaitSeconds  *int   `json:"wait_seconds"`
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

// leaseFor returns the lease an optional lease_seconds asks for.
func leaseFor(n *int) (time.Duration, error) {
	secs, err := leaseSecondsLimit.Value(n)
	return time.Duration(secs) * time.Second, err
}

// params checks the request and returns what it asks of the queue.
func (req leaseRequest) params(queue string) (embedded.LeaseParams, error) {
	p := embedded.LeaseParams{Queue: queue, Worker: req.Worker}
	var err error
	if p.Max, err = leaseMax.Value(req.Max); err != nil {
		return p, err
	}
	if p.LeaseFor, err = leaseFor(req.LeaseSeconds); err != nil {
		return p, err
	}
	wait, err := waitSecondsLimit.Value(req.WaitSeconds)
	if err != nil {
		return p, err
	}
	p.Wait = time.Duration(wait) * time.Second
	return p, checkWorker(req.Worker)
}

func (s *Server) handleLease(w http.ResponseWriter, r *http.Request) {
	var req leaseRequest
	err := decode(r, &req)
	var p embedded.LeaseParams
	if err == nil {
		p, err = req.params(r.PathValue("queue"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.draining, cancel)()
	if s.draining.Err() != nil {
		p.Wait = 0
	}
	tasks, err := s.q.Lease(ctx, p)
	if err != nil && s.draining.Err() != nil && r.Context().Err() == nil && errors.Is(err, context.Canceled) {
		tasks, err = nil, nil // drained: no message
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.seen.leased(p.Worker, p.Queue, len(tasks), s.now())
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
	LeaseSeconds *int   `json:"lease_seconds"`
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
	lease, err := leaseFor(req.LeaseSeconds)
	if err == nil {
		err = checkWorker(req.Worker)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	until, err := s.q.Heartbeat(r.Context(), r.PathValue("id"), req.Worker, lease)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.seen.heartbeat(req.Worker, s.now())
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
	if stored {
		s.seen.result(req.Worker, req.Status, s.now())
	}
	s.writeJSON(w, http.StatusOK, resultResponse{Stored: stored})
}
