package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// maxIDs bounds the ids or URLs one query names.
const maxIDs = 1000

// ListersResponse is the body of GET /api/v1/listers.
type ListersResponse struct {
	Listers []Lister `json:"listers"`
}

// ListerRequest is the body of POST /api/v1/listers.
type ListerRequest struct {
	Name         string `json:"name"`
	InstanceName string `json:"instance_name"`
}

func (s *Server) handleListerList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ids, name, instance := q["id"], q.Get("name"), q.Get("instance_name")
	var (
		ls  []revisit.Lister
		err error
	)
	switch {
	case len(ids) > 0 && (name != "" || instance != ""):
		err = revisit.Invalidf("id", "give ids, or a name and instance name, not both")
	case len(ids) > maxIDs:
		err = revisit.Invalidf("id", "%d ids, at most %d", len(ids), maxIDs)
	case len(ids) > 0:
		us := make([]uuid.UUID, len(ids))
		for i, v := range ids {
			if us[i], err = revisit.ParseUUID("id", v); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		ls, err = s.st.ListerGetByIDs(r.Context(), us)
	case name != "":
		var l revisit.Lister
		l, err = s.st.ListerGet(r.Context(), name, instance)
		if err == nil {
			ls = []revisit.Lister{l}
		} else if revisit.Code(err) == revisit.CodeNotFound {
			err = nil
		}
	case instance != "":
		err = revisit.Invalidf("name", "missing (instance_name needs it)")
	default:
		ls, err = s.st.ListerList(r.Context())
	}
	s.reply(w, r, ListersResponse{Listers: mapSlice(ls, NewLister)}, err)
}

func (s *Server) handleListerGetOrCreate(w http.ResponseWriter, r *http.Request) {
	var req ListerRequest
	err := decode(r, &req)
	if err == nil && req.Name == "" {
		err = revisit.Invalidf("name", "missing")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.st.ListerGetOrCreate(r.Context(), req.Name, req.InstanceName)
	s.reply(w, r, NewLister(l), err)
}
