package cli

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/store"
)

// backend is what the commands that can drive a remote revisit (--server)
// use: the store, or the API client standing for it. store.Store and
// *client.Client both implement it.
type backend interface {
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error)
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	QueuePositionGet(ctx context.Context, visitType string) (int64, error)
	MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error)
	MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error)
	OriginsSearch(ctx context.Context, s revisit.OriginSearch) (revisit.OriginSearchPage, error)
	OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error)
	ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID, enabled bool) (int, error)
	VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error)
	VisitTypePauseClear(ctx context.Context, visitType string) (bool, error)
	VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error)
	TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error
	TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error
	OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error)
}

var (
	_ backend = store.Store(nil)
	_ backend = (*client.Client)(nil)
)

// backend returns the API client of --server when it is given, else the
// configured store.
func (a *app) backend(cmd *cobra.Command) (backend, error) {
	if a.server == "" {
		return a.openStore(cmd)
	}
	return a.newClient(cmd)
}

// serverClient returns the API client of --server, for the commands that
// only a running server answers: without --server, a usage error saying
// that cmd asks it for what.
func (a *app) serverClient(cmd *cobra.Command, what string) (*client.Client, error) {
	if a.server == "" {
		return nil, usagef("--server is required: %s asks a running revisit serve for %s", cmd.CommandPath(), what)
	}
	return a.newClient(cmd)
}

// newClient returns the API client of --server.
func (a *app) newClient(cmd *cobra.Command) (*client.Client, error) {
	if _, err := a.config(cmd); err != nil {
		return nil, err
	}
	c, err := client.New(a.server, a.token, nil)
	if err != nil {
		return nil, usagef("--server: %v", err)
	}
	return c, nil
}
