// Package retention removes the old history of generic tasks
// (semantics.md §8): the task runs that ended before a cut-off, then the
// finished (completed or disabled) oneshot tasks none of whose runs is
// newer. It works page by page (the store's page size, 1000 rows), each
// page appended to an archive as JSON lines and synced before it is
// deleted, so that a failure never deletes what was not archived and the
// scheduler is never blocked for long.
//
// Archive does it once (revisit task archive); Periodic does it at start
// and then at a fixed interval (the retention section of the
// configuration, run by revisit runner and revisit serve).
package retention

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/revisit-sched/revisit"
)

// Store is what retention needs of a store.
type Store interface {
	// TaskRunsArchivable returns one page, in id order, of the runs that
	// ended before f.Before.
	TaskRunsArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskRunPage, error)
	// TaskRunsDelete deletes the ended runs among ids and returns how many.
	TaskRunsDelete(ctx context.Context, ids []int64) (int, error)
	// TasksArchivable returns one page, in id order, of the finished
	// oneshot tasks whose next_run and runs are all before f.Before.
	TasksArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskPage, error)
	// TasksDelete deletes, among ids, the finished oneshot tasks without
	// runs, and returns how many.
	TasksDelete(ctx context.Context, ids []int64) (int, error)
}

// Encoder writes what is archived as one JSON object each (no newline).
type Encoder interface {
	// TaskRun encodes an archived task run.
	TaskRun(revisit.TaskRun) ([]byte, error)
	// Task encodes an archived task.
	Task(revisit.Task) ([]byte, error)
}

// Sink is where archived pages go: each page is written whole, then
// synced, before it is deleted.
type Sink interface {
	io.Writer
	// Sync makes what was written durable.
	Sync() error
}

// Counts says how many task runs and tasks were removed.
type Counts struct {
	Runs, Tasks int
}

// Archive removes the task runs that ended before before and then the
// finished oneshot tasks none of whose runs is newer, each page written to
// sink with enc first; a nil sink deletes without archiving (enc may
// then be nil). On error,
// the counts say what was removed before it; the failing page is deleted
// only if it was archived.
func Archive(ctx context.Context, st Store, before time.Time, sink Sink, enc Encoder) (Counts, error) {
	var (
		c       Counts
		err     error
		runLine func(revisit.TaskRun) ([]byte, error)
		line    func(revisit.Task) ([]byte, error)
	)
	if sink != nil {
		runLine, line = enc.TaskRun, enc.Task
	}
	c.Runs, err = movePages(ctx, before, sink,
		func(ctx context.Context, f revisit.ArchiveFilter) ([]revisit.TaskRun, string, error) {
			p, err := st.TaskRunsArchivable(ctx, f)
			return p.Runs, p.NextPageToken, err
		},
		func(r revisit.TaskRun) int64 { return r.ID }, runLine, st.TaskRunsDelete)
	if err != nil {
		return c, fmt.Errorf("task runs: %w", err)
	}
	c.Tasks, err = movePages(ctx, before, sink,
		func(ctx context.Context, f revisit.ArchiveFilter) ([]revisit.Task, string, error) {
			p, err := st.TasksArchivable(ctx, f)
			return p.Tasks, p.NextPageToken, err
		},
		func(t revisit.Task) int64 { return t.ID }, line, st.TasksDelete)
	if err != nil {
		return c, fmt.Errorf("tasks: %w", err)
	}
	return c, nil
}

// movePages pages through what fetch returns, archives each page to sink
// (unless nil) and deletes it, and returns how many rows it deleted.
func movePages[T any](ctx context.Context, before time.Time, sink Sink,
	fetch func(context.Context, revisit.ArchiveFilter) ([]T, string, error),
	id func(T) int64, encode func(T) ([]byte, error), del func(context.Context, []int64) (int, error)) (int, error) {
	f := revisit.ArchiveFilter{Before: before}
	deleted := 0
	for {
		rows, next, err := fetch(ctx, f)
		if err != nil {
			return deleted, err
		}
		if len(rows) > 0 {
			if sink != nil {
				if err := writePage(sink, rows, encode); err != nil {
					return deleted, err
				}
			}
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = id(r)
			}
			n, err := del(ctx, ids)
			deleted += n
			if err != nil {
				return deleted, err
			}
		}
		if f.PageToken = next; next == "" {
			return deleted, nil
		}
	}
}

// writePage writes rows to sink as JSON lines in one write, then syncs it.
func writePage[T any](sink Sink, rows []T, encode func(T) ([]byte, error)) error {
	var b bytes.Buffer
	for _, r := range rows {
		line, err := encode(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if _, err := sink.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	if err := sink.Sync(); err != nil {
		return fmt.Errorf("sync archive: %w", err)
	}
	return nil
}
