package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revisit-sched/revisit/store/internal/wake"
)

// eligibleChannel names the NOTIFY channel of the news that origins of a
// visit type (the payload) may have become eligible. It depends on the
// schema, so that deployments in other schemas of the database (tests,
// one schema each) do not wake each other.
const eligibleChannel = `'revisit_eligible_' || left(md5(current_schema()), 16)`

// relistenDelay spaces the attempts to listen again after the listening
// connection failed.
const relistenDelay = time.Second

// eligibility carries store.Notifier's news across processes: the writing
// transactions NOTIFY (notifyEligible), and the first subscription of the
// process starts a listener, on a connection of its own, that wakes up the
// subscribers of the process.
type eligibility struct {
	pool *pgxpool.Pool
	hub  wake.Hub

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func newEligibility(pool *pgxpool.Pool) *eligibility {
	ctx, cancel := context.WithCancel(context.Background())
	return &eligibility{pool: pool, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// SubscribeEligible returns a channel that receives after every change
// that may make origins of visitType eligible, made by any process using
// the database (store.Notifier).
func (s *Store) SubscribeEligible(visitType string) (<-chan struct{}, func()) {
	e := s.eligible
	e.once.Do(func() { go e.listen() })
	return e.hub.Subscribe(visitType)
}

// notifyEligible tells the listeners of every process that origins of
// visitTypes may have become eligible, when tx commits.
func notifyEligible(ctx context.Context, tx pgx.Tx, visitTypes []string) error {
	if len(visitTypes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, "SELECT pg_notify("+eligibleChannel+", vt) FROM unnest($1::text[]) vt", visitTypes)
	return err
}

// listen relays the notifications to the subscribers until close, and
// connects again when its connection fails; every subscriber is woken up
// once listening starts, since news may have come meanwhile.
func (e *eligibility) listen() {
	defer close(e.done)
	for {
		e.session()
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(relistenDelay):
		}
	}
}

// session listens on a connection of its own until it fails or close;
// what it misses while no session listens, the subscribers' own waits
// bound.
func (e *eligibility) session() {
	conn, err := pgx.ConnectConfig(e.ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	var channel string
	if err := conn.QueryRow(e.ctx, "SELECT "+eligibleChannel).Scan(&channel); err != nil {
		return
	}
	if _, err := conn.Exec(e.ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return
	}
	e.hub.NotifyAll()
	for {
		n, err := conn.WaitForNotification(e.ctx)
		if err != nil {
			return
		}
		e.hub.Notify(n.Payload)
	}
}

// close stops the listener, if one started; closing twice is harmless.
func (e *eligibility) close() {
	e.once.Do(func() { close(e.done) }) // no listener will start
	e.cancel()
	<-e.done
}
