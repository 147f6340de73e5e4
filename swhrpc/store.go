package swhrpc

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// Store is what the RPC serves from a store; store.Store implements it.
type Store interface {
	ListerStore
	OriginStore
	TaskStore
}

var _ Store = store.Store(nil)

// ListerStore keeps the listers.
type ListerStore interface {
	ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	ListerGetOrCreateForFirstVisits(ctx context.Context, name, instanceName, queuePrefix string) (revisit.Lister, error)
	ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error)
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error)
}

// OriginStore keeps the listed origins, their visit stats, the queue
// positions of the visit types and the scheduler metrics.
type OriginStore interface {
	ListedOriginsRecordReturning(ctx context.Context, origins []revisit.ListedOrigin) ([]revisit.ListedOrigin, error)
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error)
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error
	QueuePositions(ctx context.Context) (map[string]int64, error)
	QueuePositionSet(ctx context.Context, visitType string, position int64) error
	MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error)
	MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error)
}

// TaskStore keeps the task types, the generic tasks and their runs.
type TaskStore interface {
	TaskTypeCreate(ctx context.Context, t revisit.TaskType) error
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
	TasksCreateUnlessWaiting(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error)
	TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error)
	TasksPeekReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error)
	TasksGrabReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error)
	TasksUpdateStatus(ctx context.Context, u revisit.TaskStatusUpdate) (int, error)
	TasksDeleteArchived(ctx context.Context, taskIDs, runIDs []int64) error
	TaskRunsSchedule(ctx context.Context, runs []revisit.NewTaskRun) ([]revisit.TaskRun, error)
	TaskRunStart(ctx context.Context, backendID string, started time.Time, metadata map[string]any) (revisit.TaskRun, error)
	TaskRunEnd(ctx context.Context, e revisit.TaskRunEnd) (revisit.TaskRun, error)
	TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error)
	TaskRunsToArchive(ctx context.Context, f revisit.TaskArchiveFilter) (revisit.TaskRunPage, error)
}
