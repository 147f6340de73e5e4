package revisit

import "time"

// QueueListing says which messages of a queue QueueMessagesList returns,
// as of a given time.
type QueueListing string

// The listings of a queue's messages.
const (
	// QueueListWaiting: the messages a worker may lease now: ready ones,
	// and leased ones whose lease expired (what QueueDepth counts).
	QueueListWaiting QueueListing = "waiting"
	// QueueListLeased: the messages held by a worker whose lease has not
	// expired.
	QueueListLeased QueueListing = "leased"
)

// ParseQueueListing parses waiting or leased.
func ParseQueueListing(s string) (QueueListing, error) {
	switch l := QueueListing(s); l {
	case QueueListWaiting, QueueListLeased:
		return l, nil
	}
	return "", Invalidf("state", "%q is not waiting or leased", s)
}

// QueueMessagePageSize is the rule of the size of a page of queue
// messages.
var QueueMessagePageSize = Limit{Field: "limit", Min: 1, Max: 1000, Def: 100}

// QueueMessageFilter selects one page of a queue's messages for
// QueueMessagesList: waiting ones in the order leases take them, leased
// ones in enqueue (Seq) order.
type QueueMessageFilter struct {
	Queue   string
	Listing QueueListing
	// Now is the time leases are compared with.
	Now time.Time
	// Limit is the page size (QueueMessagePageSize); zero means its
	// default.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// Validate checks every field but the page token, naming the first bad
// one.
func (f QueueMessageFilter) Validate() error {
	if f.Queue == "" {
		return Invalidf("queue", "must not be empty")
	}
	if _, err := ParseQueueListing(string(f.Listing)); err != nil {
		return err
	}
	if f.Limit != 0 {
		return QueueMessagePageSize.Check(f.Limit)
	}
	return nil
}

// QueueMessagePage is one page of a queue's messages, in the order of
// its listing. NextPageToken is empty exactly when no message follows.
type QueueMessagePage struct {
	Messages      []QueueMessage
	NextPageToken string
}

// QueueLeaseCount counts the messages of one queue that one worker holds
// now (leases not expired).
type QueueLeaseCount struct {
	Queue, Worker string
	Leased        int64
	// NextExpiry is the earliest end of these leases.
	NextExpiry time.Time
}
