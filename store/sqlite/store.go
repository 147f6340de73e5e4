// Package sqlite is the SQLite implementation of store.Store, revisit's
// embedded default: one database file, no server, no cgo (modernc.org/sqlite).
//
// The store holds two handles on the file: a writer with a single connection,
// through which every write runs in a BEGIN IMMEDIATE transaction (so writes,
// and grabs in particular, are serialized), and a pool of read-only
// connections that WAL lets run beside the writer. A store can also live in
// memory (OpenMemory), for stores thrown away after use. Both hand their
// connections out in the order callers asked for them (turns.go), and
// reads are prepared once. docs/store.md describes the schema, which
// mirrors the PostgreSQL one.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/internal/front"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

var (
	_ store.Store      = (*Store)(nil)
	_ store.Migrator   = (*Store)(nil)
	_ store.Notifier   = (*Store)(nil)
	_ store.GrabWalker = (*Store)(nil)
)

// maxCachedStatements bounds the writer's prepared-statement cache; grab
// queries vary only with the policy and which filters are present, so the
// cache stays far below it in practice.
const maxCachedStatements = 256

// Store is a revisit store in one SQLite database file. It is safe for
// concurrent use.
type Store struct {
	// Front holds the methods the two stores share, run by engine.
	*front.Front
	w *sql.DB // one connection: every write, in BEGIN IMMEDIATE transactions
	r *sql.DB // read-only pool; w itself in a store held in memory
	// writeTurns and readTurns hand w's and r's connections out in the
	// order callers asked for them.
	writeTurns, readTurns turns
	opts                  store.Options

	mu        sync.Mutex
	stmts     map[string]*sql.Stmt // prepared on w, keyed by SQL text
	wanted    map[string]struct{}  // met by stmt, to prepare on w after the transaction
	readStmts map[string]*sql.Stmt // prepared on r, keyed by SQL text

	// eligible wakes up the subscribers of store.Notifier.
	eligible wake.Hub

	// listed counts the committed write transactions that added or
	// changed listed rows; listedNow, under the write turn, says that the
	// one in progress does (wroteListed). Grabs read it to resume the walk
	// of the previous grab of the same parameters (walks, writeTokenOf).
	listed    atomic.Int64
	listedNow bool
	walks     grabsql.Walks

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating it if missing) the SQLite database at path, applies
// the pending migrations and returns the store.
func Open(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if path == "" {
		return nil, revisit.Invalidf("path", "missing SQLite database path")
	}
	if opts.MustExist {
		if err := mustExist(path); err != nil {
			return nil, err
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return nil, revisit.Errorf(revisit.CodeInvalid, "sqlite: cannot create the store %s: its directory %s does not exist "+
				"(create it first)", path, dir)
		}
	}
	return open(ctx, path, fileDSN(path), opts)
}

// OpenMemory opens a new store held in memory under name, which no other
// open store of the process may bear: what it holds is gone once it is
// closed, and it holds at most 1 GiB (some 1.5 million origins). It is for
// stores thrown away after use (the simulator's), which it spares the
// file and its write-ahead log.
func OpenMemory(ctx context.Context, name string, opts store.Options) (*Store, error) {
	if name == "" {
		return nil, revisit.Invalidf("name", "missing in-memory SQLite database name")
	}
	return open(ctx, name, memoryDSN(name), opts)
}

// open opens the database that dsn's writer and reader connection strings
// name, applies the pending migrations and returns the store; name names
// the database in errors. An empty reader string leaves the store one
// connection, the writer's, whose reads and writes take turns.
func open(ctx context.Context, name string, dsn func(writer bool) string, opts store.Options) (*Store, error) {
	w, err := sql.Open("sqlite", dsn(true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", name, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, writeTurns: newTurns(1), opts: opts, stmts: make(map[string]*sql.Stmt)}
	s.Front = front.New(engine{s})
	// The writer connects first: it sets the journal mode before any
	// reader exists.
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, translate(fmt.Sprintf("open %s", name), err)
	}
	if err := s.Migrate(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	readerDSN := dsn(false)
	if readerDSN == "" {
		s.r, s.readTurns, s.readStmts = w, s.writeTurns, make(map[string]*sql.Stmt)
		return s, nil
	}
	r, err := sql.Open("sqlite", readerDSN)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", name, err)
	}
	n := max(4, 2*runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, translate(fmt.Sprintf("open %s", name), err)
	}
	s.r, s.readTurns, s.readStmts = r, newTurns(n), make(map[string]*sql.Stmt)
	return s, nil
}

// mustExist returns an ErrNotFound when no file is at path.
func mustExist(path string) error {
	_, err := os.Stat(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if abs, absErr := filepath.Abs(path); absErr == nil {
		path = abs
	}
	return revisit.Errorf(revisit.CodeNotFound, "no SQLite store at %s", path)
}

// fileDSN returns the modernc connection strings of the file at path, for
// the writer (WAL, foreign keys, immediate transactions) or for a reader
// (query only).
//
// Sizes: a grab of 1000 scattered origins dirties some 4000 pages (visit
// stats, listed rows, the two indexes on last_scheduled); the writer's page
// cache (64 MiB) holds a whole such transaction without spilling, statement
// journals stay in memory, reads go through a memory map, and the WAL is
// checkpointed every 10000 pages (about 40 MiB) and truncated to 64 MiB.
func fileDSN(path string) func(writer bool) string {
	// The path is the path part of a file: URI; escape what would end it.
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return func(writer bool) string {
		q := append(pragmas(writer), "_pragma=mmap_size(268435456)")
		if writer {
			q = append(q, "_pragma=journal_mode(WAL)", "_pragma=synchronous(NORMAL)",
				"_pragma=wal_autocheckpoint(10000)", "_pragma=journal_size_limit(67108864)")
		}
		return "file:" + p + "?" + strings.Join(q, "&")
	}
}

// memoryDSN returns the connection string of the in-memory database name
// (SQLite's memdb file system), whose rollback journal stays in memory
// too, for the writer only: the store has no reader connection. A reader
// drops its whole page cache each time it finds the database written
// since its previous read, and copies back every page it then reads:
// that took a sixth of a simulation's time, whose reads and writes come
// one at a time anyway (docs/performance.md, P7).
func memoryDSN(name string) func(writer bool) string {
	p := "/" + url.PathEscape(name)
	return func(writer bool) string {
		if !writer {
			return ""
		}
		q := append(pragmas(writer), "vfs=memdb", "_pragma=journal_mode(MEMORY)")
		return "file:" + p + "?" + strings.Join(q, "&")
	}
}

// pragmas returns the settings of every writer or reader connection.
func pragmas(writer bool) []string {
	q := []string{"_pragma=busy_timeout(10000)", "_pragma=foreign_keys(1)", "_pragma=temp_store(MEMORY)"}
	if writer {
		return append(q, "_txlock=immediate", "_pragma=cache_size(-65536)")
	}
	return append(q, "_pragma=query_only(1)", "_pragma=cache_size(-16384)")
}

// Close closes both handles; closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		for _, st := range s.stmts {
			_ = st.Close()
		}
		for _, st := range s.readStmts {
			_ = st.Close()
		}
		s.stmts, s.readStmts = nil, nil
		s.mu.Unlock()
		var errs []error
		if s.r != nil && s.r != s.w {
			errs = append(errs, s.r.Close())
		}
		errs = append(errs, s.w.Close())
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("sqlite: close: %w", err)
		}
	})
	return s.closeErr
}

// now returns the store clock's time at the precision the store keeps.
func (s *Store) now() time.Time { return revisit.Microsecond(s.opts.Clock.Now()) }

// write runs fn in one write transaction (BEGIN IMMEDIATE on the single
// writer connection, taken in turn) and commits it, or rolls it back if fn
// fails. Errors come back translated, naming op.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if err := s.writeTurns.take(ctx); err != nil {
		return translate(op, err)
	}
	defer s.writeTurns.give()
	s.listedNow = false
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return translate(op, stopped(ctx, err))
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return translate(op, stopped(ctx, err))
	}
	if err := tx.Commit(); err != nil {
		return translate(op, stopped(ctx, err))
	}
	if s.listedNow {
		s.listed.Add(1)
	}
	s.prepareWanted(ctx)
	return nil
}

// stopped returns the context's error in place of err when ctx ended: a
// transaction whose context ends is rolled back under the caller, whose
// statements then fail with "statement is closed" or "transaction has
// already been committed or rolled back", which say nothing of the cause.
func stopped(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		return cause
	}
	return err
}

// wroteListed notes that the write transaction in progress adds or
// changes listed rows: once it commits, the walks of earlier grabs end.
func (s *Store) wroteListed() { s.listedNow = true }

// writeToken is what tells a grab, in its write transaction, whether
// listed rows may have changed since an earlier grab: the write
// transactions of this store that changed them, and SQLite's count of the
// commits of other connections to the file (PRAGMA data_version).
type writeToken struct{ listed, others int64 }

// writeTokenOf reads the write token in tx, a write transaction.
func (s *Store) writeTokenOf(ctx context.Context, tx *sql.Tx) (writeToken, error) {
	t := writeToken{listed: s.listed.Load()}
	err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&t.others)
	return t, err
}

// stmt returns the statement of query for tx. Statements are prepared once
// on the writer and kept for the store's life; the first use prepares on tx
// (the writer's only connection is tx's) and asks write to keep a
// store-level statement once tx is over.
func (s *Store) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.stmts[query]
	if !ok && s.stmts != nil && len(s.stmts)+len(s.wanted) < maxCachedStatements {
		if s.wanted == nil {
			s.wanted = make(map[string]struct{})
		}
		s.wanted[query] = struct{}{}
	}
	s.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// prepareWanted prepares on the writer the statements stmt met for the
// first time. A failure only means the statement is prepared again later.
// The lock is not held while preparing: preparing waits for the writer
// connection, which a transaction calling stmt may hold.
func (s *Store) prepareWanted(ctx context.Context) {
	s.mu.Lock()
	queries := make([]string, 0, len(s.wanted))
	for q := range s.wanted {
		queries = append(queries, q)
	}
	clear(s.wanted)
	s.mu.Unlock()
	for _, q := range queries {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		s.mu.Lock()
		if _, dup := s.stmts[q]; dup || s.stmts == nil {
			_ = st.Close()
		} else {
			s.stmts[q] = st
		}
		s.mu.Unlock()
	}
}

// SubscribeEligible returns a channel that receives after every change
// that may make origins of visitType eligible (store.Notifier).
func (s *Store) SubscribeEligible(visitType string) (<-chan struct{}, func()) {
	return s.eligible.Subscribe(visitType)
}

// notified returns err; when it is nil, the change committed, and it wakes
// up the subscribers of visitTypes first.
func (s *Store) notified(err error, visitTypes []string) error {
	if err == nil {
		s.eligible.Notify(visitTypes...)
	}
	return err
}
