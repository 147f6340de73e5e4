package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/revisit-sched/revisit"
)

// OperatorAction is the JSON form of a revisit.OperatorAction: an action
// an operator did, who did it, to what, and what came of it.
type OperatorAction struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	By     string    `json:"by"`
	Action string    `json:"action"`
	Target string    `json:"target"`
	// Answer is a JSON object of what came of it, as {"changed":2}.
	Answer json.RawMessage `json:"answer"`
}

// NewOperatorAction returns the JSON form of a.
func NewOperatorAction(a revisit.OperatorAction) OperatorAction {
	return OperatorAction{ID: a.ID, At: a.At.UTC(), By: a.By, Action: a.Action, Target: a.Target, Answer: a.Answer}
}

// Domain returns the revisit.OperatorAction a is the JSON form of.
func (a OperatorAction) Domain() revisit.OperatorAction {
	return revisit.OperatorAction{ID: a.ID, At: a.At, By: a.By, Action: a.Action, Target: a.Target, Answer: a.Answer}
}

// OperatorActionsPage is the body of GET /api/v1/actions: one page of
// the actions done, newest first; next_page_token is absent on the last
// page.
type OperatorActionsPage struct {
	Actions       []OperatorAction `json:"actions"`
	NextPageToken string           `json:"next_page_token,omitempty"`
}

func (s *Server) handleActionList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := revisit.OperatorActionFilter{Action: q.Get("action"), By: q.Get("by"), PageToken: q.Get("page_token")}
	var err error
	if f.Limit, err = queryLimit(r, revisit.OperatorActionPageSize); err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.st.OperatorActionsList(r.Context(), f)
	s.reply(w, r, OperatorActionsPage{Actions: mapSlice(page.Actions, NewOperatorAction),
		NextPageToken: page.NextPageToken}, err)
}
