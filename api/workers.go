package api

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// WorkersResponse is the body of GET /api/v1/workers: the embedded
// broker's workers this server saw since Since, and those holding leases
// now (whichever server they leased through).
type WorkersResponse struct {
	GeneratedAt time.Time `json:"generated_at"`
	// Since is when this server started to remember workers (its start).
	Since time.Time `json:"since"`
	// MaxWorkers bounds the workers remembered; Forgotten counts those
	// forgotten to stay within it (the ones seen longest ago).
	MaxWorkers int      `json:"max_workers"`
	Forgotten  int      `json:"forgotten"`
	Workers    []Worker `json:"workers"`
}

// Worker is one worker of the embedded broker.
type Worker struct {
	Name string `json:"name"`
	// Seen says whether this server saw the worker since it started; a
	// worker not seen here holds leases taken through another server, or
	// before this one started.
	Seen bool `json:"seen"`
	// Queues are the queues it leased from through this server.
	Queues []string `json:"queues"`
	// LeasesHeld counts the messages it holds now, by queue, and
	// NextLeaseExpiry is the earliest end of those leases (from the store).
	LeasesHeld      map[string]int64 `json:"leases_held"`
	NextLeaseExpiry *time.Time       `json:"next_lease_expiry"`
	// When it last called any worker route, took messages, extended a
	// lease and reported a result, through this server.
	LastSeen      *time.Time `json:"last_seen"`
	LastLease     *time.Time `json:"last_lease"`
	LastHeartbeat *time.Time `json:"last_heartbeat"`
	LastResult    *time.Time `json:"last_result"`
	// Results counts the results it reported through this server, by
	// status (eventful, uneventful, failed, not_found).
	Results map[string]int64 `json:"results"`
}

func (s *Server) handleWorkers(w http.ResponseWriter, r *http.Request) {
	leases, err := s.q.Leases(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	since, workers, forgotten := s.seen.snapshot()
	byName := make(map[string]int, len(workers))
	for i := range workers {
		byName[workers[i].Name] = i
		workers[i].LeasesHeld = map[string]int64{}
	}
	for _, l := range leases {
		i, ok := byName[l.Worker]
		if !ok {
			i = len(workers)
			byName[l.Worker] = i
			workers = append(workers, Worker{Name: l.Worker, Queues: []string{}, LeasesHeld: map[string]int64{},
				Results: map[string]int64{}})
		}
		wk := &workers[i]
		wk.LeasesHeld[l.Queue] = l.Leased
		if wk.NextLeaseExpiry == nil || l.NextExpiry.Before(*wk.NextLeaseExpiry) {
			expiry := l.NextExpiry
			wk.NextLeaseExpiry = &expiry
		}
	}
	slices.SortFunc(workers, func(a, b Worker) int { return strings.Compare(a.Name, b.Name) })
	s.writeJSON(w, http.StatusOK, WorkersResponse{GeneratedAt: s.now(), Since: since, MaxWorkers: MaxWorkersSeen,
		Forgotten: forgotten, Workers: workers})
}
