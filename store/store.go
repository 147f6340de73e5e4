// Package store defines the Store interface that persists revisit's domain,
// and opens the implementation a URL names: PostgreSQL (postgres://…) for
// fleets, SQLite (sqlite:///path/file.db) for the embedded default.
//
// Every implementation passes the conformance suite in store/storetest.
package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// Store persists revisit's domain. Methods are named NounVerb; errors are
// *revisit.Error values for everything a caller can act on (not found, stale
// data, invalid input, unknown policy, unavailable database).
type Store interface {
	VisitStore
	TaskStore
	QueueStore
	OperatorActionStore

	// Capabilities tells what the store's engine can do: those its driver
	// registered.
	Capabilities() Capabilities

	// TaskTypeCreate stores a new task type; ErrConflict if it exists.
	TaskTypeCreate(ctx context.Context, t revisit.TaskType) error
	// TaskTypeUpdate replaces an existing task type; ErrNotFound if absent.
	TaskTypeUpdate(ctx context.Context, t revisit.TaskType) error
	// TaskTypeGet returns one task type; ErrNotFound if absent.
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	// TaskTypeList returns every task type, by name.
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)

	// ListerGetOrCreate returns the lister of that name and instance,
	// creating it if needed; it is idempotent and race-free.
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	// ListerGetOrCreateForFirstVisits is ListerGetOrCreate for a lister
	// whose first visits go to their own queues (the Software Heritage
	// RPC's get_or_create_lister): a lister it creates gets queuePrefix as
	// its FirstVisitsQueuePrefix; an existing lister keeps its own, set or
	// not. A bad prefix is ErrInvalid naming first_visits_queue_prefix.
	ListerGetOrCreateForFirstVisits(ctx context.Context, name, instanceName, queuePrefix string) (revisit.Lister, error)
	// ListerGet returns the lister of that name and instance; ErrNotFound if
	// absent.
	ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error)
	// ListerUpdate stores CurrentState, LastListingFinishedAt,
	// FirstVisitsQueuePrefix and FirstVisitsScheduledAt if the stored
	// Updated equals l.Updated (to the microsecond), and returns the lister
	// with its new Updated; ErrStaleData otherwise.
	ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error)
	// ListerList returns every lister, by name and instance name.
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	// ListerGetByIDs returns the listers with those ids that exist.
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)

	// ListedOriginsRecord upserts a batch on (lister_id, url, visit_type):
	// inside the batch the last duplicate wins; a new row gets first_seen =
	// last_seen = now, an existing one keeps first_seen, gets last_seen = now
	// and the batch's other fields. The batch is written whole or not at all.
	ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	// ListedOriginsRecordReturning is ListedOriginsRecord that also returns the rows as stored
	// afterwards (first_seen, last_seen, every field), one per distinct key, in the order of
	// the keys' first occurrence in the batch.
	ListedOriginsRecordReturning(ctx context.Context, origins []revisit.ListedOrigin) ([]revisit.ListedOrigin, error)
	// ListedOriginsImport is ListedOriginsRecord that keeps each origin's
	// FirstSeen and LastSeen (a zero one is now): origins brought over
	// from another scheduler's database.
	ListedOriginsImport(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
	// ListersImport writes listers as they are, every field kept (id,
	// created, updated, state): listers brought over from another
	// scheduler's database. Writing one again replaces it; a lister of the
	// same name and instance with another id is ErrConflict naming
	// listers[i]. Bad input is ErrInvalid naming listers[i].field.
	ListersImport(ctx context.Context, ls []revisit.Lister) error
	// ListedOriginsGet returns one page in (lister_id, url, visit_type) order,
	// from the beginning, after f.PageToken or after f.AfterListerURL (not
	// both: ErrInvalid naming page_token).
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	// ListedOriginsSetEnabled enables or disables the listed rows of an
	// origin, every lister's or only listerID's when given, and returns
	// how many it changed; a later listing sets them as the lister says.
	// No such row is ErrNotFound. Enabling tells store.Notifier's
	// subscribers.
	ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID, enabled bool) (int, error)
	// OriginsSearch returns one page of the listed rows whose URL matches
	// the search, with its filters, in (url, visit_type, lister_id) order;
	// a page reads a bounded number of matching URLs
	// (revisit.OriginSearchPage). Bad input is ErrInvalid naming the API's
	// parameter (q, match, visit_type, limit, page_token).
	OriginsSearch(ctx context.Context, s revisit.OriginSearch) (revisit.OriginSearchPage, error)
	// OriginsBrowse returns one page of the listed origins of a visit
	// type without a visit in flight, in the order of the browse's view,
	// either way; a page reads a bounded number of index rows
	// (revisit.OriginBrowsePage). Bad input is ErrInvalid naming the API's
	// parameter.
	OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error)
	// ListerVisitTypes returns the visit types of a lister's origins, sorted.
	ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error)
	// ListerVisitOutcomes counts the enabled listed origins of a lister by the last visit
	// status of their visit stats (no stats, or no last status: never visited).
	ListerVisitOutcomes(ctx context.Context, listerID uuid.UUID) (revisit.VisitOutcomes, error)

	// VisitStatsGet returns the stats that exist among keys.
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	// VisitStatsUpsert writes stats; a null (nil) field never overwrites a
	// stored value.
	VisitStatsUpsert(ctx context.Context, stats []revisit.VisitStats) error
	// VisitStatsWrite writes stats as VisitStatsUpsert does, in one
	// transaction with the disabling the writes ask for (every listed row
	// of the exact (url, visit_type), whatever its lister; recording the
	// origin again re-enables it); a guarded write whose stored last_visit
	// is no longer the one it names is skipped and reported stale, so that
	// a reader can fold and write without a lock.
	VisitStatsWrite(ctx context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error)
	// ActivityByMinute counts, by visit type, kind and minute of [since,
	// until), what the store keeps a trace of: the visits in flight or lost
	// by policy (when scheduled) and when lost, and from the visit stats
	// each origin's last schedule of an ended visit and its last result. An
	// origin visited twice in the window counts once; it scans the visit
	// stats, so call it rarely (the console's history rebuilds from it at
	// start).
	ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error)

	// QueuePositionGet returns the visit type's queue position, 0 if unset.
	QueuePositionGet(ctx context.Context, visitType string) (int64, error)
	// QueuePositionSet sets the visit type's queue position.
	QueuePositionSet(ctx context.Context, visitType string, position int64) error
	// QueuePositions returns the stored queue position of every visit type
	// that has one (an empty map when none).
	QueuePositions(ctx context.Context) (map[string]int64, error)

	// VisitTypePauseSet pauses a visit type (revisit.Pause): its
	// orchestrator loop runs no round, in any process, until
	// VisitTypePauseClear. A visit type paused already keeps who paused it
	// and when. It returns the pause as stored.
	VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error)
	// VisitTypePauseClear resumes a visit type and reports whether it was
	// paused.
	VisitTypePauseClear(ctx context.Context, visitType string) (bool, error)
	// VisitTypePauseList returns the pauses of the paused visit types, by
	// visit type.
	VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error)

	// GrabNextVisits returns the true top p.Count eligible origins of the
	// policy, one per (url, visit_type), and (unless p.DryRun) marks them
	// scheduled at p.Now in the same atomic step. Concurrent callers never
	// receive the same origin.
	GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error)

	// MetricsUpdate recomputes and stores the scheduler metrics of one
	// lister (nil: all) at now, and returns them.
	MetricsUpdate(ctx context.Context, listerID *uuid.UUID, now time.Time) ([]revisit.SchedulerMetrics, error)
	// MetricsGet reads stored metrics, filtered by lister and visit type
	// when given.
	MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error)

	// Close releases the store's connections.
	Close() error
}

// Notifier is implemented by stores that tell when origins of a visit
// type may have become eligible: origins recorded (new, or listed again
// and so re-enabled) or enabled, visit stats written (results), visits
// declared lost, the visit type's load task type created or changed, the
// visit type paused or resumed. Every process using the store hears
// of it, whatever process wrote; a wake-up may come for nothing, and news
// may be missed while a store's connection is down, so that a subscriber
// still looks by itself now and then.
type Notifier interface {
	// SubscribeEligible returns a channel that receives after such a
	// change of visitType (bursts merge into one receive), and a function
	// that ends the subscription.
	SubscribeEligible(visitType string) (wake <-chan struct{}, cancel func())
}

// Migrator applies and reports the schema migrations of a store.
type Migrator interface {
	// Migrate applies every pending migration.
	Migrate(ctx context.Context) error
	// SchemaVersion returns the applied version and the newest known one.
	SchemaVersion(ctx context.Context) (current, latest int64, err error)
}

// Maintainer is implemented by stores whose tables need the upkeep that
// PostgreSQL's autovacuum gives them in production: reclaiming the dead
// rows that grabs, results and recording leave behind, and fresh planner
// statistics after bulk loads. The benches call it before they measure, so
// that every run starts from a maintained store whatever the server's
// autovacuum setting.
type Maintainer interface {
	Maintain(ctx context.Context) error
}

// URLIndexer is implemented by stores that index the URLs recordings list
// for the first time after the recording, in large batches (PostgreSQL's
// origin_url_backlog): a search indexes what waits first, up to a bound,
// and `revisit serve` keeps the backlog short by calling IndexOriginURLs.
type URLIndexer interface {
	// IndexOriginURLs indexes up to max waiting URLs and returns how many
	// it indexed.
	IndexOriginURLs(ctx context.Context, max int) (int, error)
}

// GrabWalker is implemented by stores whose grabs resume the walk of the
// previous grab of the same parameters when nothing written since could
// have put an eligible origin ahead of where it stopped (docs/store.md,
// "Grabs back to back"): the result is the same as from the head of the
// policy's order, without stepping over the previous picks.
type GrabWalker interface {
	// GrabsResumed counts the grabs that resumed a walk since the store
	// was opened.
	GrabsResumed() int64
}

// SettingsAdvisor is implemented by stores whose database server has
// settings under which revisit is known to run much slower. Long-running
// commands and the benches log the advice when they start.
type SettingsAdvisor interface {
	// SettingsAdvice returns one sentence per such setting: its value,
	// what it costs and what to set instead; none when all is well.
	SettingsAdvice(ctx context.Context) ([]string, error)
}
