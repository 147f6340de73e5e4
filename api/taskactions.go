package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit"
)

// TaskState is a generic task after an action: its status and when it is
// due.
type TaskState struct {
	ID      int64              `json:"id"`
	Type    string             `json:"type"`
	Status  revisit.TaskStatus `json:"status"`
	NextRun time.Time          `json:"next_run"`
}

// taskOf returns the task of the request's path.
func (s *Server) taskOf(ctx context.Context, r *http.Request) (revisit.Task, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return revisit.Task{}, revisit.Invalidf("id", "%q is not a task id (a positive integer)", raw)
	}
	page, err := s.st.TasksGet(ctx, revisit.TaskFilter{IDs: []int64{id}})
	switch {
	case err != nil:
		return revisit.Task{}, err
	case len(page.Tasks) == 0:
		return revisit.Task{}, revisit.Errorf(revisit.CodeNotFound, "no task %d", id)
	}
	return page.Tasks[0], nil
}

// handleTaskAction runs change on the task of the path, then answers the
// task as it is now.
func (s *Server) handleTaskAction(action string, change func(ctx context.Context, t revisit.Task) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := s.taskOf(r.Context(), r)
		if err == nil {
			err = change(r.Context(), t)
		}
		if err == nil {
			t, err = s.taskOf(r.Context(), r)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.audit(r, action, revisit.TaskTarget(t.ID), "type", t.Type, "status", t.Status)
		s.reply(w, r, TaskState{ID: t.ID, Type: t.Type, Status: t.Status, NextRun: t.NextRun.UTC()}, nil)
	}
}

// disableTask disables a task: it is never dispatched again unless
// respawned.
func (s *Server) disableTask(ctx context.Context, t revisit.Task) error {
	return s.st.TasksSetStatus(ctx, []int64{t.ID}, revisit.TaskDisabled)
}

// respawnTask makes a disabled or completed task due now, with its
// retries back; a task waiting or dispatched is left alone (ErrConflict).
func (s *Server) respawnTask(ctx context.Context, t revisit.Task) error {
	if err := t.Status.CheckRespawn(t.ID); err != nil {
		return err
	}
	now := s.now()
	return s.st.TasksRespawn(ctx, []int64{t.ID}, &now)
}

// runTaskNow makes a task waiting for its next run due now, with its
// retries back; a task dispatched, disabled or completed is left alone
// (ErrConflict).
func (s *Server) runTaskNow(ctx context.Context, t revisit.Task) error {
	if err := t.Status.CheckRunNow(t.ID); err != nil {
		return err
	}
	now := s.now()
	return s.st.TasksRespawn(ctx, []int64{t.ID}, &now)
}
