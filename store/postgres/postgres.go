// Package postgres is the PostgreSQL implementation of store.Store, for
// deployments with several processes and machines. docs/store.md describes
// the schema; migrations are embedded and applied by Migrate (revisit db
// migrate).
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/internal/front"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL store.
type Store struct {
	// Front holds the methods the two stores share, run by engine.
	*front.Front
	pool *pgxpool.Pool
	opts store.Options
	// analyzed is set once listed_origin is known to have planner
	// statistics (ensureStatistics).
	analyzed atomic.Bool
	// aside keeps the picks that grabs set aside moving (picksAside).
	aside *picksAside
	// walks is where the last grabs stopped in their policies' orders.
	walks grabsql.Walks
	// eligible carries store.Notifier's news.
	eligible *eligibility
	// presence tells other processes that this store's leases are held.
	presence *presence
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Migrator   = (*Store)(nil)
	_ store.Notifier   = (*Store)(nil)
	_ store.GrabWalker = (*Store)(nil)
)

// Open connects to the database the URL names (postgres://…). It does not
// migrate: call Migrate, or check SchemaVersion first.
func Open(ctx context.Context, url string, opts store.Options) (*Store, error) {
	cfg, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	// Plan each grab for its actual parameters: a generic plan cannot know
	// which partial index a LIMIT and the cooldown bounds make best.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	// No JIT: revisit's statements touch a few thousand rows each, and the
	// planner's estimates on a 10M-row table push some of them over the JIT
	// threshold, where compiling took 1.5 s of a 60 ms batch insert here.
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	cfg.AfterConnect = encodeUUIDsAsBytes
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, translate(fmt.Errorf("postgres: connect: %w", err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, translate(fmt.Errorf("postgres: connect: %w", err))
	}
	s := &Store{pool: pool, opts: opts, aside: startPicksAside(pool), eligible: newEligibility(pool),
		presence: &presence{config: pool.Config().ConnConfig.Copy()}}
	s.Front = front.New(engine{s})
	return s, nil
}

// Close stops the background flusher and listener and closes the
// connections: the presence connection's, which frees this store's leases
// for others at once, and the pool.
func (s *Store) Close() error {
	s.aside.close()
	s.eligible.close()
	s.presence.close()
	s.pool.Close()
	return nil
}

func (s *Store) now() time.Time { return revisit.Microsecond(s.opts.Clock.Now()) }

// migrationLockProbe is how often, in seconds, a migrator that finds the
// migration lock held tries again, and migrationLockTries how many times.
const (
	migrationLockProbe = 1
	migrationLockTries = 600
)

// provider returns the migrations' provider. Its advisory lock is the
// schema's own: deployments in other schemas of the database (or tests, one
// schema each) migrate without waiting for each other, as they would on
// goose's default lock, shared by every schema.
func (s *Store) provider(ctx context.Context) (*goose.Provider, *sql.DB, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, nil, err
	}
	var lockID int64
	err = s.pool.QueryRow(ctx,
		"SELECT hashtextextended('revisit.migrate.' || coalesce(current_schema(), ''), 0)").Scan(&lockID)
	if err != nil {
		return nil, nil, translate(fmt.Errorf("postgres: migration lock: %w", err))
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID),
		lock.WithLockTimeout(migrationLockProbe, migrationLockTries))
	if err != nil {
		return nil, nil, err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return p, db, nil
}

// Migrate applies every pending migration, holding an advisory lock so that
// concurrent migrators wait for each other.
func (s *Store) Migrate(ctx context.Context) error {
	p, db, err := s.provider(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	defer db.Close()
	if _, err := p.Up(ctx); err != nil {
		return translate(fmt.Errorf("postgres: migrate: %w", err))
	}
	return nil
}

// SchemaVersion returns the applied and the newest schema versions.
func (s *Store) SchemaVersion(ctx context.Context) (current, latest int64, err error) {
	p, db, err := s.provider(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: migrations: %w", err)
	}
	defer db.Close()
	current, err = p.GetDBVersion(ctx)
	if err != nil {
		return 0, 0, translate(fmt.Errorf("postgres: schema version: %w", err))
	}
	srcs := p.ListSources()
	if len(srcs) > 0 {
		latest = srcs[len(srcs)-1].Version
	}
	return current, latest, nil
}

// inTx runs fn in a transaction, retried when PostgreSQL aborts it for a
// deadlock or a serialization failure.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTxWith(ctx, pgx.TxOptions{}, fn)
}

// asyncCommit begins a transaction whose commit does not wait for its WAL
// to reach the disk, in the round trip of BEGIN: a database crash may lose
// the transaction, not corrupt anything.
var asyncCommit = pgx.TxOptions{BeginQuery: strings.Join(beginAsync, "; ")}

// beginAsync are the statements of asyncCommit's BEGIN, one each, for a
// batch that begins its transaction itself (grabAtOnce).
var beginAsync = []string{"BEGIN", "SET LOCAL synchronous_commit = off"}

// inTxWith is inTx with the transaction begun as opts say.
func (s *Store) inTxWith(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	return retryAborted(func() error { return pgx.BeginTxFunc(ctx, s.pool, opts, fn) })
}

// retryAborted runs a transaction, attempt, again when PostgreSQL aborts
// it for a deadlock or a serialization failure, up to five times in all.
func retryAborted(attempt func() error) error {
	const attempts = 5
	var err error
	for range attempts {
		err = attempt()
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001") {
			continue
		}
		return err
	}
	return err
}

// querier runs statements in a transaction: a pgx.Tx, or a pooled
// connection whose transaction a batch began (grabAtOnce).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// withIndexScans runs fn in tx with bitmap and sequential scans off. The
// statements that walk an index range of rows that come and go (pending
// origins, visits in flight) need it:
//   - a plain index scan flags the index entries of the rows it finds dead
//     (gone since the last vacuum), so that the next scans step over them
//     without reading their rows again, whereas the bitmap scan the planner
//     picks when it expects few rows reads every one of them at every call
//     (0.2–1 s a call once a million visits have come and gone, with
//     autovacuum behind);
//   - the planner cannot estimate a comparison of two columns
//     (last_scheduled < last_visit) and reads the whole table rather than
//     the small partial index that holds exactly those rows;
//   - a batch joined with listed_origin_pending (recording, results): the
//     table holds a few thousand origins on many more pages, which the
//     churn of grabs and results leaves behind, and the planner hashed all
//     of them (22,520 pages, ~20 ms of a batch's statement on the 10M set)
//     rather than probe its key once per row of the batch.
func withIndexScans(ctx context.Context, tx querier, fn func() error) error {
	if _, err := tx.Exec(ctx, strings.Join(indexScansOnly, "; ")); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, strings.Join(defaultScans, "; "))
	return err
}

// The settings of withIndexScans, one statement each, and those that
// restore the defaults.
var (
	indexScansOnly = []string{"SET LOCAL enable_bitmapscan = off", "SET LOCAL enable_seqscan = off"}
	defaultScans   = []string{"SET LOCAL enable_bitmapscan TO DEFAULT", "SET LOCAL enable_seqscan TO DEFAULT"}
)

// queueAll queues each of statements in b.
func queueAll(b *pgx.Batch, statements []string) {
	for _, sql := range statements {
		b.Queue(sql)
	}
}

// inChunks runs step, which changes at most chunk rows, until it changes
// fewer, and returns how many rows it changed in all.
func inChunks(chunk int, step func() (int, error)) (int, error) {
	total := 0
	for {
		n, err := step()
		total += n
		if err != nil || n < chunk {
			return total, err
		}
	}
}

// translate maps driver errors to revisit errors once, at the boundary.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var rerr *revisit.Error
	if errors.As(err, &rerr) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &revisit.Error{Code: revisit.CodeNotFound, Message: err.Error()}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", "57", "53": // connection, operator intervention, resources
			return fmt.Errorf("%w: %w", revisit.Errorf(revisit.CodeUnavailable, "database unavailable"), err)
		}
		return err
	}
	if lostConnection(err) {
		return fmt.Errorf("%w: %w", revisit.Errorf(revisit.CodeUnavailable, "database unavailable"), err)
	}
	return err
}

// lostConnection reports whether err is the database's connection failing
// rather than a statement: it could not connect, timed out, or the
// connection broke or was closed under the call (a reset, an end of file,
// any network error).
func lostConnection(err error) bool {
	var (
		connErr *pgconn.ConnectError
		netErr  net.Error
	)
	return errors.As(err, &connErr) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.SafeToRetry(err) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED)
}

// isUniqueViolation reports whether err is a unique-constraint violation.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// ensureStatistics gives the planner statistics of the listed origins,
// their pending rows and the visit stats, in tx, when listed_origin holds
// rows but has none: a fresh store after its first recorded batch (with
// autovacuum off or not round yet), or a store restored from a dump. It
// costs one flag check once this process has seen statistics.
//
// Without column statistics every equality looks equally selective, and
// lookups chose an index that leads with a column every origin of a lister
// or visit type shares: recording's probe of an origin's own key
// (lister_id, url, visit_type) walked listed_origin_lister_scheduled, so
// that a 10M load fell from ~20,000 origins/s to under 300 once the table
// held 70,000 rows; a result's copy onto listed_origin, which looks rows up
// by (url, visit_type), took a policy index over the hash index of url,
// which answers only the URL. Statistics of a first batch already tell
// these apart; the planner scales them as the table grows. ANALYZE runs in
// tx, so that a batch and its statistics commit or fail together.
func (s *Store) ensureStatistics(ctx context.Context, tx pgx.Tx) error {
	if s.analyzed.Load() {
		return nil
	}
	var rows, stats bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM listed_origin), EXISTS (SELECT FROM pg_stats
		WHERE schemaname = current_schema() AND tablename = 'listed_origin')`).Scan(&rows, &stats)
	switch {
	case err != nil:
		return err
	case stats:
		s.analyzed.Store(true)
		return nil
	case !rows:
		return nil
	}
	_, err = tx.Exec(ctx, "ANALYZE listed_origin, listed_origin_pending, visit_stats")
	return err
}

// withIndexLookups runs fn in tx with planner statistics (ensureStatistics)
// and index scans only (withIndexScans), once the picks that grabs set
// aside are in the pending table (flushPicks): the way every statement that
// looks listed or pending rows up by key runs.
func (s *Store) withIndexLookups(ctx context.Context, tx pgx.Tx, fn func() error) error {
	if err := s.ensureStatistics(ctx, tx); err != nil {
		return err
	}
	return withIndexScans(ctx, tx, func() error {
		if err := flushPicks(ctx, tx); err != nil {
			return err
		}
		return fn()
	})
}

// Maintain vacuums the tables that grabs, results and recording churn,
// and refreshes their planner statistics (VACUUM (ANALYZE)). Dead rows
// left in listed_origin by the moves to listed_origin_pending cost every
// later write: on the 10M set, after an orchestrator run of a million
// visits, visit-status processing ran 40 % slower until a vacuum
// (docs/deploy/README.md, on autovacuum). URLs waiting to be indexed for
// search stay in origin_url_backlog (IndexOriginURLs moves them).
func (s *Store) Maintain(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, "VACUUM (ANALYZE) listed_origin, listed_origin_pending, listed_origin_picked, visit_stats, visit_in_flight, lister, origin_url, origin_url_backlog")
	return translate(wrap(err, "vacuum"))
}
