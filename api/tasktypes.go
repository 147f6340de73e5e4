package api

import (
	"net/http"

	"github.com/revisit-sched/revisit"
)

// TaskTypesResponse is the body of GET /api/v1/task-types.
type TaskTypesResponse struct {
	TaskTypes []TaskType `json:"task_types"`
}

func (s *Server) handleTaskTypeList(w http.ResponseWriter, r *http.Request) {
	ts, err := s.st.TaskTypeList(r.Context())
	s.reply(w, r, TaskTypesResponse{TaskTypes: mapSlice(ts, NewTaskType)}, err)
}

func (s *Server) handleTaskTypeGet(w http.ResponseWriter, r *http.Request) {
	t, err := s.st.TaskTypeGet(r.Context(), r.PathValue("type"))
	s.reply(w, r, NewTaskType(t), err)
}

func (s *Server) handleTaskTypeCreate(w http.ResponseWriter, r *http.Request) {
	var req TaskType
	if err := decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	t := req.Domain()
	err := t.Validate()
	if err == nil {
		err = s.st.TaskTypeCreate(r.Context(), t)
	}
	if revisit.Code(err) == revisit.CodeConflict {
		err = revisit.Errorf(revisit.CodeConflict, "task type %s exists already", t.Type)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, NewTaskType(t))
}
