package api

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of what the server remembers of the workers it sees.
const (
	// MaxWorkersSeen bounds the workers remembered; past it, the worker
	// seen longest ago is forgotten.
	MaxWorkersSeen = 1000
	// maxQueuesPerWorker bounds the queues remembered of one worker.
	maxQueuesPerWorker = 32
)

// seenWorkers remembers, in this process only, the embedded broker's
// workers that called the worker routes: when each leased, extended a
// lease and reported a result, from which queues, and its results by
// status. Nothing of it is stored: it starts empty with the process. It
// is safe for concurrent use.
type seenWorkers struct {
	mu        sync.Mutex
	since     time.Time
	byName    map[string]*seenWorker
	forgotten int
}

// seenWorker is what the server remembers of one worker.
type seenWorker struct {
	queues                                         []string
	lastSeen, lastLease, lastHeartbeat, lastResult time.Time
	results                                        map[string]int64
}

func newSeenWorkers(since time.Time) *seenWorkers {
	return &seenWorkers{since: since, byName: map[string]*seenWorker{}}
}

// worker returns the record of name, making room for it if needed; the
// caller holds mu.
func (s *seenWorkers) worker(name string, at time.Time) *seenWorker {
	w, ok := s.byName[name]
	if !ok {
		if len(s.byName) >= MaxWorkersSeen {
			s.forgetOldest()
		}
		w = &seenWorker{results: map[string]int64{}}
		s.byName[name] = w
	}
	w.lastSeen = at
	return w
}

// forgetOldest forgets the worker seen longest ago; the caller holds mu.
func (s *seenWorkers) forgetOldest() {
	oldest := ""
	for name, w := range s.byName {
		if oldest == "" || w.lastSeen.Before(s.byName[oldest].lastSeen) {
			oldest = name
		}
	}
	delete(s.byName, oldest)
	s.forgotten++
}

// leased records a lease request of a worker on queue that took n
// messages.
func (s *seenWorkers) leased(name, queue string, n int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.worker(name, at)
	if !slices.Contains(w.queues, queue) && len(w.queues) < maxQueuesPerWorker {
		w.queues = append(w.queues, queue)
		slices.Sort(w.queues)
	}
	if n > 0 {
		w.lastLease = at
	}
}

// heartbeat records that a worker extended a lease.
func (s *seenWorkers) heartbeat(name string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.worker(name, at).lastHeartbeat = at
}

// result records a result a worker reported, of status.
func (s *seenWorkers) result(name, status string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.worker(name, at)
	w.lastResult = at
	w.results[status]++
}

// snapshot returns the workers remembered, by name, with when the memory
// starts and how many workers it forgot.
func (s *seenWorkers) snapshot() (since time.Time, workers []Worker, forgotten int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	workers = make([]Worker, 0, len(s.byName))
	for name, w := range s.byName {
		workers = append(workers, Worker{Name: name, Seen: true, Queues: slices.Clone(w.queues),
			LastSeen: timePtr(w.lastSeen), LastLease: timePtr(w.lastLease), LastHeartbeat: timePtr(w.lastHeartbeat),
			LastResult: timePtr(w.lastResult), Results: maps.Clone(w.results)})
	}
	slices.SortFunc(workers, func(a, b Worker) int { return strings.Compare(a.Name, b.Name) })
	return s.since, workers, s.forgotten
}
