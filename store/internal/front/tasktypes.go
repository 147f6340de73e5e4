package front

import (
	"context"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

// TaskTypeStatements read and write task types.
type TaskTypeStatements interface {
	// TaskTypeInsert stores t unless a task type of its name exists, and
	// reports whether it did.
	TaskTypeInsert(ctx context.Context, t revisit.TaskType) (bool, error)
	// TaskTypeReplace replaces the task type of t's name, and reports
	// whether there was one.
	TaskTypeReplace(ctx context.Context, t revisit.TaskType) (bool, error)
	// TaskTypesNamed reads the task types of those names that exist, by
	// name.
	TaskTypesNamed(ctx context.Context, names []string) ([]revisit.TaskType, error)
	// TaskTypesAll reads every task type, by name.
	TaskTypesAll(ctx context.Context) ([]revisit.TaskType, error)
}

// TaskTypeCreate stores a new task type; ErrConflict if it exists.
func (f *Front) TaskTypeCreate(ctx context.Context, t revisit.TaskType) error {
	if err := t.Validate(); err != nil {
		return err
	}
	err := f.d.WriteOne(ctx, "create task type "+t.Type, func(x Statements) error {
		created, err := x.TaskTypeInsert(ctx, t)
		if err == nil && !created {
			err = revisit.Errorf(revisit.CodeConflict, "task type %q exists already", t.Type)
		}
		return err
	})
	return f.notified(err, wake.OfTaskType(t))
}

// TaskTypeUpdate replaces an existing task type; ErrNotFound if absent.
func (f *Front) TaskTypeUpdate(ctx context.Context, t revisit.TaskType) error {
	if err := t.Validate(); err != nil {
		return err
	}
	err := f.d.WriteOne(ctx, "update task type "+t.Type, func(x Statements) error {
		found, err := x.TaskTypeReplace(ctx, t)
		if err == nil && !found {
			err = taskTypeNotFound(t.Type)
		}
		return err
	})
	return f.notified(err, wake.OfTaskType(t))
}

// TaskTypeGet returns one task type; ErrNotFound if absent.
func (f *Front) TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error) {
	ts, err := value(ctx, f.d.Read, "get task type "+name, func(x Statements) ([]revisit.TaskType, error) {
		return x.TaskTypesNamed(ctx, []string{name})
	})
	if err == nil && len(ts) == 0 {
		err = taskTypeNotFound(name)
	}
	if err != nil {
		return revisit.TaskType{}, err
	}
	return ts[0], nil
}

// TaskTypeList returns every task type, by name.
func (f *Front) TaskTypeList(ctx context.Context) ([]revisit.TaskType, error) {
	ts, err := value(ctx, f.d.Read, "list task types", func(x Statements) ([]revisit.TaskType, error) {
		return x.TaskTypesAll(ctx)
	})
	return nonNil(ts), err
}

// taskTypesIn reads, in x, the task types of those names that exist, by
// name.
func taskTypesIn(ctx context.Context, x Statements, names []string) (map[string]revisit.TaskType, error) {
	ts, err := x.TaskTypesNamed(ctx, names)
	if err != nil {
		return nil, err
	}
	m := make(map[string]revisit.TaskType, len(ts))
	for _, t := range ts {
		m[t.Type] = t
	}
	return m, nil
}

func taskTypeNotFound(name string) error {
	return revisit.Errorf(revisit.CodeNotFound, "task type %q not found", name)
}
