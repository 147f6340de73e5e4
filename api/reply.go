package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// reply writes v as a 200 response, or err as an error.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, v)
}

// queryUUID parses an optional UUID query parameter.
func queryUUID(r *http.Request, name string) (*uuid.UUID, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	id, err := revisit.ParseUUID(name, v)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// queryLimit parses an optional integer query parameter under its rule.
func queryLimit(r *http.Request, l revisit.Limit) (int, error) {
	v := r.URL.Query().Get(l.Field)
	if v == "" {
		return l.Def, nil
	}
	return l.Parse(v)
}
