// Package wake delivers, within a process, the news that origins of a
// visit type may have become eligible (store.Notifier): every subscriber
// of the visit type gets one wake-up, and the wake-ups it has not taken
// yet merge into one.
package wake

import (
	"sync"

	"github.com/revisit-sched/revisit"
)

// Hub holds the subscribers by visit type. The zero value is ready.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives after every Notify of
// visitType (bursts merge into one receive), and a function that ends the
// subscription.
func (h *Hub) Subscribe(visitType string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[string]map[chan struct{}]struct{}{}
	}
	if h.subs[visitType] == nil {
		h.subs[visitType] = map[chan struct{}]struct{}{}
	}
	h.subs[visitType][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[visitType], ch)
		if len(h.subs[visitType]) == 0 {
			delete(h.subs, visitType)
		}
	}
}

// Notify wakes up the subscribers of each visit type, without waiting.
func (h *Hub) Notify(visitTypes ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, vt := range visitTypes {
		for ch := range h.subs[vt] {
			signal(ch)
		}
	}
}

// NotifyAll wakes up every subscriber, for when news may have been
// missed.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, chans := range h.subs {
		for ch := range chans {
			signal(ch)
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// OfOrigins returns the visit types of origins, each once.
func OfOrigins(origins []revisit.ListedOrigin) []string {
	return distinct(len(origins), func(i int) string { return origins[i].VisitType })
}

// OfStats returns the visit types of stats writes, each once.
func OfStats(writes []revisit.VisitStatsWrite) []string {
	return distinct(len(writes), func(i int) string { return writes[i].Stats.VisitType })
}

// OfTaskType returns the visit type a task type loads, if any.
func OfTaskType(t revisit.TaskType) []string {
	if vt, ok := t.VisitType(); ok {
		return []string{vt}
	}
	return nil
}

// Distinct returns visit types without repeats, in their order.
func Distinct(visitTypes []string) []string {
	return distinct(len(visitTypes), func(i int) string { return visitTypes[i] })
}

func distinct(n int, at func(int) string) []string {
	var out []string
	seen := map[string]bool{}
	for i := range n {
		if vt := at(i); !seen[vt] {
			seen[vt] = true
			out = append(out, vt)
		}
	}
	return out
}
