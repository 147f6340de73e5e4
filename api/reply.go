package api

import (
	"net/http"
	"strconv"

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
	id, err := uuid.Parse(v)
	if err != nil {
		return nil, revisit.Invalidf(name, "%q is not a UUID", v)
	}
	return &id, nil
}

// queryInt parses an optional integer query parameter in [lo, hi].
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, revisit.Invalidf(name, "%q is not an integer in %d..%d", v, lo, hi)
	}
	return n, nil
}
