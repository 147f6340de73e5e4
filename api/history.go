package api

import (
	"net/http"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/history"
)

// History is what the API reads of the console's history of the last 24
// hours; *history.History implements it.
type History interface {
	// Window returns the last minutes, up to the last whole one.
	Window(minutes int) history.Window
}

// HistoryResponse is the body of GET /api/v1/history: per visit type, a
// value a minute of each series (null for a minute without one) and the
// totals of the last 24 hours.
type HistoryResponse = history.Window

// HistoryMinutes is the rule of the minutes of GET /api/v1/history.
var HistoryMinutes = revisit.Limit{Field: "minutes", Min: 1, Max: history.Minutes, Def: 60}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	n, err := queryLimit(r, HistoryMinutes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.reply(w, r, s.cfg.History.Window(n), nil)
}
