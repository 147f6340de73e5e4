package swhrpc

import (
	"context"
	"errors"

	"github.com/revisit-sched/revisit"
)

// Task types: creating one that exists changes nothing, getting one that
// does not is None.

func (s *Server) taskTypeCreate(p *record) call {
	t := required(p, "task_type", readTaskType)
	return func(ctx context.Context) (any, error) {
		err := s.st.TaskTypeCreate(ctx, t)
		if errors.Is(err, revisit.ErrConflict) {
			return nil, nil
		}
		return nil, err
	}
}

func (s *Server) taskTypeGet(p *record) call {
	name := required(p, "task_type_name", asStr)
	return func(ctx context.Context) (any, error) {
		t, err := s.st.TaskTypeGet(ctx, name)
		switch {
		case errors.Is(err, revisit.ErrNotFound):
			return nil, nil
		case err != nil:
			return nil, err
		}
		return taskTypeModel(t), nil
	}
}

func (s *Server) taskTypeGetAll(*record) call {
	return func(ctx context.Context) (any, error) {
		ts, err := s.st.TaskTypeList(ctx)
		out := make([]any, len(ts))
		for i, t := range ts {
			out[i] = taskTypeModel(t)
		}
		return out, err
	}
}
