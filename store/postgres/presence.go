package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// presence is a connection that a store holding leases keeps open, so
// that other processes can tell whether the holder is still there: its
// backend's pid and start time go with every lease the store takes or
// renews, and PostgreSQL ends a backend as soon as its client's socket
// closes. A holder killed on any host thus frees its leases at once; one
// whose host vanished without closing its sockets frees them when they
// expire, as before.
type presence struct {
	config *pgx.ConnConfig

	mu    sync.Mutex
	conn  *pgx.Conn
	pid   int32
	since time.Time
}

// identity returns the pid and start time of the presence connection's
// backend, connecting again when the connection is gone. ok is false when
// no connection could be made: the lease then names no backend, and only
// its expiry frees it.
func (p *presence) identity(ctx context.Context) (pid int32, since time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil && p.conn.Ping(ctx) == nil {
		return p.pid, p.since, true
	}
	p.closeLocked()
	conn, err := pgx.ConnectConfig(ctx, p.config)
	if err != nil {
		return 0, time.Time{}, false
	}
	err = conn.QueryRow(ctx, "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").
		Scan(&p.pid, &p.since)
	if err != nil {
		_ = conn.Close(ctx)
		return 0, time.Time{}, false
	}
	p.conn = conn
	return p.pid, p.since, true
}

// close closes the presence connection: the leases the store holds are
// free for others to take at once.
func (p *presence) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked()
}

func (p *presence) closeLocked() {
	if p.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.conn.Close(ctx)
		p.conn = nil
	}
}
