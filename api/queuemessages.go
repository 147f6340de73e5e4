package api

import (
	"net/http"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
)

// QueueMessagesResponse is the body of GET
// /api/v1/queues/{queue}/messages: one page of the messages waiting now,
// in the order workers will lease them, or leased now, in enqueue order;
// next_page_token is absent on the last page.
type QueueMessagesResponse struct {
	Queue         string          `json:"queue"`
	State         string          `json:"state"`
	Messages      []QueuedMessage `json:"messages"`
	NextPageToken string          `json:"next_page_token,omitempty"`
}

// QueuedMessage is a message of the embedded broker's queue as the console
// shows it.
type QueuedMessage struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	Task  string `json:"task"`
	// URL is the origin the message visits; VisitType the visit type of
	// the load-* task type whose backend_name is the message's task ("" if
	// none).
	URL       string `json:"url"`
	VisitType string `json:"visit_type"`
	// Priority is the message's priority (9 for a visit now): a lease
	// takes the ready messages of higher priority first.
	Priority int `json:"priority"`
	// Attempt counts the leases of the message.
	Attempt    int       `json:"attempt"`
	EnqueuedAt time.Time `json:"enqueued_at"`
	// Worker holds (state leased) or last held the lease, and
	// LeaseExpiresAt ends that lease; both null before the first lease.
	Worker         *string    `json:"worker"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
}

func (s *Server) handleQueueMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := revisit.QueueMessageFilter{Queue: r.PathValue("queue"), Listing: revisit.QueueListWaiting,
		PageToken: q.Get("page_token")}
	var err error
	if state := q.Get("state"); state != "" {
		f.Listing, err = revisit.ParseQueueListing(state)
	}
	if err == nil {
		f.Limit, err = queryLimit(r, revisit.QueueMessagePageSize)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.q.Messages(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	visitTypes, err := s.visitTypesByTask(r)
	resp := QueueMessagesResponse{Queue: f.Queue, State: string(f.Listing), NextPageToken: page.NextPageToken,
		Messages: mapSlice(page.Messages, func(m embedded.QueuedMessage) QueuedMessage {
			return newQueuedMessage(m, visitTypes)
		})}
	s.reply(w, r, resp, err)
}

// newQueuedMessage is the JSON form of a queued message; visitTypes maps
// task names to visit types (visitTypesByTask).
func newQueuedMessage(m embedded.QueuedMessage, visitTypes map[string]string) QueuedMessage {
	out := QueuedMessage{ID: m.ID, Queue: m.Queue, Task: m.Task, URL: m.URL, VisitType: visitTypes[m.Task],
		Priority: m.Priority, Attempt: m.Attempt, EnqueuedAt: m.EnqueuedAt, LeaseExpiresAt: timePtr(m.LeaseExpiresAt)}
	if m.Worker != "" {
		out.Worker = &m.Worker
	}
	return out
}

// Embedded returns the broker's form of m.
func (m QueuedMessage) Embedded() embedded.QueuedMessage {
	out := embedded.QueuedMessage{ID: m.ID, Queue: m.Queue, Task: m.Task, URL: m.URL, Priority: m.Priority,
		Attempt: m.Attempt, EnqueuedAt: m.EnqueuedAt}
	if m.Worker != nil {
		out.Worker = *m.Worker
	}
	if m.LeaseExpiresAt != nil {
		out.LeaseExpiresAt = *m.LeaseExpiresAt
	}
	return out
}

// visitTypesByTask maps the backend_name of every load-* task type (the
// task name of its messages) to its visit type.
func (s *Server) visitTypesByTask(r *http.Request) (map[string]string, error) {
	tts, err := s.st.TaskTypeList(r.Context())
	out := make(map[string]string, len(tts))
	for _, tt := range tts {
		if vt, ok := tt.VisitType(); ok {
			out[tt.BackendName] = vt
		}
	}
	return out, err
}
