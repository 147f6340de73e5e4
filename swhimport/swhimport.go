// Package swhimport brings the state of a Software Heritage scheduler over
// from its PostgreSQL database (schema version 38) into a revisit store:
// task types, listers with their states and update tokens, listed origins,
// visit stats, queue positions, tasks and their runs, each kept as upstream
// holds it. It reads each table in one query, in key order, and writes it a
// batch at a time, each batch in one transaction; after each it records where it stands in a
// state file, so that an interrupted import continues where it stopped, and
// an import run again writes the same rows again, changing nothing.
package swhimport

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
)

// Target is what an import writes into: a migrated revisit store.
type Target interface {
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	TaskTypeCreate(ctx context.Context, t revisit.TaskType) error
	TaskTypeUpdate(ctx context.Context, t revisit.TaskType) error
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	ListersImport(ctx context.Context, ls []revisit.Lister) error
	ListedOriginsImport(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error
	QueuePositionSet(ctx context.Context, visitType string, position int64) error
	TasksImport(ctx context.Context, tasks []revisit.Task) error
	TaskRunsImport(ctx context.Context, runs []revisit.TaskRun) error
}

// The tables an import copies, in order.
const (
	TableTaskTypes      = "task_type"
	TableListers        = "listers"
	TableListedOrigins  = "listed_origins"
	TableVisitStats     = "origin_visit_stats"
	TableQueuePositions = "visit_scheduler_queue_position"
	TableTasks          = "task"
	TableTaskRuns       = "task_run"
)

// Tables are the tables an import copies, in the order it copies them: the
// visit stats before the listed origins, whose new rows take their
// origin's stats as they are written (copying stats onto rows written
// before costs an update of each).
var Tables = []string{TableTaskTypes, TableListers, TableVisitStats, TableListedOrigins, TableQueuePositions,
	TableTasks, TableTaskRuns}

// DefaultBatch is the rows an import reads and writes at once.
const DefaultBatch = 1000

// Config configures an import.
type Config struct {
	// From is the URL of upstream's database.
	From string
	// Target is the store the import writes into.
	Target Target
	// Batch is the rows read and written at once (DefaultBatch).
	Batch int
	// RunsSince, when set, copies only the task runs started (or,
	// not started, scheduled, or ended) since then.
	RunsSince time.Time
	// StateFile records where the import stands, for the next run to
	// continue from; empty keeps no state.
	StateFile string
	// CatchUp copies only what changed since the complete pass the state
	// file records began (less CatchUpMargin): the short pass of a
	// switch, once upstream's writers stopped. A catch-up interrupted
	// continues as a catch-up.
	CatchUp bool
	// Progress, when set, is told of each table's progress after each
	// batch and when the table is done.
	Progress func(TableProgress)
}

// TableProgress is how far an import stands in one table.
type TableProgress struct {
	Table string
	// Rows counts the rows copied by this run of the import.
	Rows int64
	// Estimate is the source's estimate of the table's rows (0: unknown).
	Estimate int64
	// Started is when this run began copying the table.
	Started time.Time
	Done    bool
}

// State is where an import stands, as its state file keeps it: when its
// pass began (the source's clock), since when it copies changes (zero: a
// whole copy), and for each table whether it is done and the key of the
// last row copied.
type State struct {
	Started time.Time `json:"started"`
	Since   time.Time `json:"since,omitzero"`
	// NewTasksAfter is, in a catch-up, the largest task id the passes
	// before copied: the tasks above it are new.
	NewTasksAfter int64                  `json:"new_tasks_after,omitempty"`
	Tables        map[string]*TableState `json:"tables"`
}

// CatchUpMargin is how long before the start of the previous pass a
// catch-up looks for changes: upstream's transactions that had begun
// (and so stamped their rows) before that start, and committed after the
// previous pass read their rows, are caught too.
const CatchUpMargin = 10 * time.Minute

// Complete reports whether every table is copied.
func (s State) Complete() bool {
	for _, table := range Tables {
		if ts := s.Tables[table]; ts == nil || !ts.Done {
			return false
		}
	}
	return true
}

// TableState is where an import stands in one table.
type TableState struct {
	Done bool `json:"done"`
	// After is the key of the last row copied (a JSON value of the
	// table's key), null before the first batch.
	After json.RawMessage `json:"after,omitempty"`
	Rows  int64           `json:"rows"`
}

// Stopped is the error of an import that stopped in a table: what
// stopped it, and where.
type Stopped struct {
	Table string
	After json.RawMessage
	Err   error
}

func (e *Stopped) Error() string {
	where := "at its start"
	if len(e.After) > 0 {
		where = "after " + string(e.After)
	}
	return fmt.Sprintf("stopped in %s %s: %v", e.Table, where, e.Err)
}

func (e *Stopped) Unwrap() error { return e.Err }

// Run copies upstream's tables into the target, continuing from the state
// file when it holds one, and returns the state it ends with. A source
// that cannot be read, or is not of the schema version it knows, fails
// before anything is written; a lister of the target with another lister's
// name and instance fails before anything is written.
func Run(ctx context.Context, cfg Config) (State, error) {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	state, err := LoadState(cfg.StateFile)
	if err != nil {
		return state, err
	}
	if cfg.CatchUp {
		switch {
		case state.Complete():
			var last int64
			if err := resume(state.Tables[TableTasks].After, &last); err != nil {
				return state, err
			}
			state = State{Since: state.Started.Add(-CatchUpMargin), NewTasksAfter: max(last, state.NewTasksAfter),
				Tables: map[string]*TableState{}}
		case state.Since.IsZero():
			return state, fmt.Errorf("a catch-up follows a complete import, and %s records none finished: "+
				"run the import without catching up first", cmp.Or(cfg.StateFile, "no state file"))
		}
	}
	src, err := connect(ctx, cfg.From)
	if err != nil {
		return state, err
	}
	defer src.close()
	if err := checkListers(ctx, src, cfg.Target); err != nil {
		return state, err
	}
	if state.Started.IsZero() {
		if err := src.conn.QueryRow(ctx, "SELECT now()").Scan(&state.Started); err != nil {
			return state, fmt.Errorf("the source's clock: %w", err)
		}
		state.Started = state.Started.UTC()
	}
	im := &importer{cfg: cfg, src: src, state: state}
	for _, table := range Tables {
		if err := im.table(ctx, table); err != nil {
			return im.state, &Stopped{Table: table, After: im.state.Tables[table].After, Err: err}
		}
	}
	return im.state, nil
}

// checkListers refuses a target whose listers conflict with the source's:
// the same name and instance under another id.
func checkListers(ctx context.Context, src *source, t Target) error {
	theirs, err := src.listers(ctx)
	if err != nil {
		return fmt.Errorf("reading the source's listers: %w", err)
	}
	ours, err := t.ListerList(ctx)
	if err != nil {
		return err
	}
	byName := make(map[[2]string]uuid.UUID, len(ours))
	for _, l := range ours {
		byName[[2]string{l.Name, l.InstanceName}] = l.ID
	}
	for _, l := range theirs {
		if id, ok := byName[[2]string{l.Name, l.InstanceName}]; ok && id != l.ID {
			return fmt.Errorf("the target has lister %s/%s with id %s, the source with id %s: import into an empty store",
				l.Name, l.InstanceName, id, l.ID)
		}
	}
	return nil
}

// importer is one run of an import.
type importer struct {
	cfg   Config
	src   *source
	state State
}

// table copies one table from where the state says.
func (im *importer) table(ctx context.Context, table string) error {
	ts := im.state.Tables[table]
	if ts == nil {
		ts = &TableState{}
		im.state.Tables[table] = ts
	}
	if ts.Done {
		return nil
	}
	p := &TableProgress{Table: table, Estimate: im.src.estimate(ctx, table), Started: time.Now()}
	if err := im.copy(ctx, table, ts, p); err != nil {
		return err
	}
	ts.Done, p.Done = true, true
	return im.record(ts, p, 0)
}

// record counts n more rows copied, saves the state file and tells the
// progress.
func (im *importer) record(ts *TableState, p *TableProgress, n int) error {
	ts.Rows += int64(n)
	p.Rows += int64(n)
	if err := saveState(im.cfg.StateFile, im.state); err != nil {
		return err
	}
	if im.cfg.Progress != nil {
		im.cfg.Progress(*p)
	}
	return nil
}

// copy copies the rows of table after the key the state records: the
// small tables whole at once, the others in key order a batch at a time.
func (im *importer) copy(ctx context.Context, table string, ts *TableState, p *TableProgress) error {
	t, src, since := im.cfg.Target, im.src, im.state.Since
	switch table {
	case TableTaskTypes:
		types, err := src.taskTypes(ctx)
		if err != nil {
			return err
		}
		for _, tt := range types {
			if err := putTaskType(ctx, t, tt); err != nil {
				return fmt.Errorf("task type %s: %w", tt.Type, err)
			}
		}
		return im.record(ts, p, len(types))
	case TableListers:
		ls, err := src.listers(ctx)
		if err == nil && len(ls) > 0 {
			err = t.ListersImport(ctx, ls)
		}
		if err != nil {
			return err
		}
		return im.record(ts, p, len(ls))
	case TableQueuePositions:
		positions, err := src.queuePositions(ctx)
		if err != nil {
			return err
		}
		for vt, pos := range positions {
			if err := t.QueuePositionSet(ctx, vt, pos); err != nil {
				return fmt.Errorf("queue position of %s: %w", vt, err)
			}
		}
		return im.record(ts, p, len(positions))
	case TableListedOrigins:
		var from *originKey
		if err := resume(ts.After, &from); err != nil {
			return err
		}
		return pump(ctx, im, ts, p, Writers,
			func(ctx context.Context) *rowStream[revisit.ListedOrigin] { return src.listedOrigins(ctx, from, since) },
			func(o revisit.ListedOrigin) any { return originKey{o.ListerID, o.URL, o.VisitType} },
			func(ctx context.Context, os []revisit.ListedOrigin) error {
				_, err := t.ListedOriginsImport(ctx, os)
				return err
			})
	case TableVisitStats:
		var from *statsKey
		if err := resume(ts.After, &from); err != nil {
			return err
		}
		return pump(ctx, im, ts, p, Writers,
			func(ctx context.Context) *rowStream[revisit.VisitStats] { return src.visitStats(ctx, from, since) },
			func(st revisit.VisitStats) any { return statsKey{st.URL, st.VisitType} },
			t.VisitStatsUpsert)
	case TableTasks:
		var from int64
		if err := resume(ts.After, &from); err != nil {
			return err
		}
		return pump(ctx, im, ts, p, 1,
			func(ctx context.Context) *rowStream[revisit.Task] {
				return src.tasks(ctx, from, since, im.state.NewTasksAfter)
			},
			func(tk revisit.Task) any { return tk.ID }, t.TasksImport)
	case TableTaskRuns:
		var from int64
		if err := resume(ts.After, &from); err != nil {
			return err
		}
		return pump(ctx, im, ts, p, 1,
			func(ctx context.Context) *rowStream[revisit.TaskRun] {
				return src.taskRuns(ctx, from, im.cfg.RunsSince, since)
			},
			func(r revisit.TaskRun) any { return r.ID }, t.TaskRunsImport)
	}
	return fmt.Errorf("unknown table %s", table)
}

// Writers is how many batches of listed origins, and of visit stats, an
// import writes at once (the others: one): two keep both cores of a small
// server busy, as two recording writers do.
const Writers = 2

// pump copies the rows open reads into write, a batch at a time, reading
// the next batches while writers of them write; as the batches are
// written, in order, it records the key of the last one as where the table
// resumes.
func pump[T any](ctx context.Context, im *importer, ts *TableState, p *TableProgress, writers int,
	open func(context.Context) *rowStream[T], key func(T) any, write func(context.Context, []T) error) error {
	type numbered struct {
		n    int
		rows []T
	}
	g, ctx := errgroup.WithContext(ctx)
	batches := make(chan numbered, writers)
	g.Go(func() error {
		defer close(batches)
		rows := open(ctx)
		defer rows.close()
		for n := 0; ; n++ {
			b, err := rows.batch(im.cfg.Batch)
			if err != nil || len(b) == 0 {
				return err
			}
			select {
			case batches <- numbered{n, b}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	var (
		mu      sync.Mutex
		written = map[int][]T{} // batches written after one that is not yet
		next    int             // the first batch not written yet
	)
	done := func(b numbered) error {
		mu.Lock()
		defer mu.Unlock()
		written[b.n] = b.rows
		rows := 0
		for w, ok := written[next]; ok; w, ok = written[next] {
			after, err := json.Marshal(key(w[len(w)-1]))
			if err != nil {
				return err
			}
			ts.After, rows = after, rows+len(w)
			delete(written, next)
			next++
		}
		if rows == 0 {
			return nil
		}
		return im.record(ts, p, rows)
	}
	for range writers {
		g.Go(func() error {
			for b := range batches {
				if err := write(ctx, b.rows); err != nil {
					return err
				}
				if err := done(b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// putTaskType creates a task type, or replaces the target's of that name.
func putTaskType(ctx context.Context, t Target, tt revisit.TaskType) error {
	_, err := t.TaskTypeGet(ctx, tt.Type)
	switch {
	case errors.Is(err, revisit.ErrNotFound):
		return t.TaskTypeCreate(ctx, tt)
	case err != nil:
		return err
	}
	return t.TaskTypeUpdate(ctx, tt)
}

// resume reads the key a table resumes after into key (left alone when
// there is none).
func resume(after json.RawMessage, key any) error {
	if len(after) == 0 {
		return nil
	}
	if err := json.Unmarshal(after, key); err != nil {
		return fmt.Errorf("the state file's key %s: %w", after, err)
	}
	return nil
}

// LoadState reads a state file; a missing one (or none named) is a new
// import.
func LoadState(path string) (State, error) {
	state := State{Tables: map[string]*TableState{}}
	if path == "" {
		return state, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return state, nil
	}
	if err != nil {
		return state, err
	}
	if err := json.Unmarshal(b, &state); err != nil || state.Tables == nil {
		return State{Tables: map[string]*TableState{}}, fmt.Errorf("%s is not an import's state file: %v", path, err)
	}
	return state, nil
}

// saveState replaces the state file at once (a new file renamed over it),
// so that a crash leaves the previous state or the new one.
func saveState(path string, state State) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("the state file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("the state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("the state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
