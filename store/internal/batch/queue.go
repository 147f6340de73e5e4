package batch

import (
	"cmp"
	"slices"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/pagetoken"
)

// HeartbeatConflict returns the ErrConflict of a heartbeat on a message in
// state whose lease is (or was last) held by holder, or nil when the
// heartbeat may extend the lease.
func HeartbeatConflict(p revisit.QueueHeartbeatParams, state revisit.QueueState, holder string) error {
	switch {
	case state == revisit.QueueDone:
		return revisit.Errorf(revisit.CodeConflict, "message %s is done", p.ID)
	case state != revisit.QueueLeased || holder != p.Worker:
		return revisit.Errorf(revisit.CodeConflict, "message %s is not leased to worker %q", p.ID, p.Worker)
	}
	return nil
}

// RequeueConflict returns the ErrConflict of a requeue of m, which must be
// leased, or nil.
func RequeueConflict(m revisit.QueueMessage) error {
	if m.State != revisit.QueueLeased {
		return revisit.Errorf(revisit.CodeConflict, "message %s is not leased: it is %s", m.ID, m.State)
	}
	return nil
}

// Completable says whether a message in state, leased attempt times and
// last to holder (or completed by holder), takes worker's result: false
// when worker completed it already (the completion is ignored), an
// ErrConflict when it was never leased or is another worker's. A worker
// whose lease expired may still post its result as long as nobody leased
// the message since, as for heartbeats.
func Completable(id string, state revisit.QueueState, attempt int, holder, worker string) (bool, error) {
	switch {
	case attempt == 0:
		return false, revisit.Errorf(revisit.CodeConflict, "message %s was never leased", id)
	case holder != worker:
		return false, revisit.Errorf(revisit.CodeConflict, "message %s is not leased to worker %q", id, worker)
	case state == revisit.QueueDone:
		return false, nil
	}
	return true, nil
}

// SortLeased sorts leased messages highest priority first, then in Seq
// (enqueue) order.
func SortLeased(msgs []revisit.QueueMessage) {
	slices.SortFunc(msgs, func(a, b revisit.QueueMessage) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Seq, b.Seq))
	})
}

// Missing returns the ids that are not in got, in order: the duplicates of
// an enqueue that inserted got.
func Missing(ids, got []string) []string {
	in := make(map[string]bool, len(got))
	for _, id := range got {
		in[id] = true
	}
	var out []string
	for _, id := range ids {
		if !in[id] {
			out = append(out, id)
		}
	}
	return out
}

// QueuePageStart validates a listing of a queue's messages and returns
// where it starts (the zero key at the beginning; a leased listing
// resumes after Seq only) and its page size.
func QueuePageStart(f revisit.QueueMessageFilter) (start pagetoken.QueueKey, limit int, err error) {
	if err := f.Validate(); err != nil {
		return start, 0, err
	}
	switch {
	case f.PageToken == "":
	case f.Listing == revisit.QueueListWaiting:
		start, err = pagetoken.DecodeQueue(f.PageToken)
	default:
		start.Seq, err = pagetoken.DecodeID(f.PageToken)
	}
	if err != nil {
		return start, 0, err
	}
	limit = f.Limit
	if limit == 0 {
		limit = revisit.QueueMessagePageSize.Def
	}
	return start, limit, nil
}

// ReadyStart is where the ready messages of a waiting listing start after
// start: at the first ready message when start is an expired lease.
func ReadyStart(start pagetoken.QueueKey) pagetoken.QueueKey {
	if start.Ready {
		return start
	}
	return pagetoken.QueueKey{Ready: true, Priority: revisit.MaxQueuePriority + 1}
}

// QueuePage turns up to limit+1 messages of a listing, read in its order,
// into a page whose token is set exactly when a message follows.
func QueuePage(msgs []revisit.QueueMessage, listing revisit.QueueListing, limit int) revisit.QueueMessagePage {
	if len(msgs) <= limit {
		return revisit.QueueMessagePage{Messages: msgs}
	}
	last := msgs[limit-1]
	token := pagetoken.EncodeID(last.Seq)
	if listing == revisit.QueueListWaiting {
		token = pagetoken.EncodeQueue(pagetoken.QueueKey{Ready: last.State == revisit.QueueReady,
			ExpiresAt: last.LeaseExpiresAt.UnixMicro(), Priority: last.Priority, Seq: last.Seq})
	}
	return revisit.QueueMessagePage{Messages: msgs[:limit], NextPageToken: token}
}
