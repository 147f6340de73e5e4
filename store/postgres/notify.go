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

const (
	// relistenDelay spaces the attempts to listen again after the
	// listening connection failed.
	relistenDelay = time.Second
	// sendSpacing is the least time between two notifications of a
	// process: the changes meanwhile go in the next one.
	sendSpacing = 100 * time.Millisecond
	// sendTimeout bounds the sending of one notification, the last one at
	// close included.
	sendTimeout = 5 * time.Second
)

// eligibility carries store.Notifier's news across processes. The changes
// mark their visit types once committed; a sender NOTIFYs them on a
// connection it opens for that and closes at once. (A NOTIFY sent from a
// connection that stays open, the pool's, kept later reads on PostgreSQL
// 15 from removing dead index entries while no session listened:
// TestFlusherWarmsTheNextGrabUp read every moved row again.) The first
// subscription of the process starts a listener, on a connection of its
// own, that wakes up the subscribers of the process.
type eligibility struct {
	pool *pgxpool.Pool
	hub  wake.Hub

	mu      sync.Mutex
	pending []string
	kick    chan struct{}

	listenOnce, sendOnce sync.Once
	ctx                  context.Context
	cancel               context.CancelFunc
	listened, sent       chan struct{}
}

func newEligibility(pool *pgxpool.Pool) *eligibility {
	ctx, cancel := context.WithCancel(context.Background())
	return &eligibility{pool: pool, ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1),
		listened: make(chan struct{}), sent: make(chan struct{})}
}

// SubscribeEligible returns a channel that receives after every change
// that may make origins of visitType eligible, made by any process using
// the database (store.Notifier).
func (s *Store) SubscribeEligible(visitType string) (<-chan struct{}, func()) {
	e := s.eligible
	e.listenOnce.Do(func() { go e.listen() })
	return e.hub.Subscribe(visitType)
}

// notified returns err; when it is nil, the change committed, and the
// listeners of every process hear soon that origins of visitTypes may
// have become eligible.
func (s *Store) notified(err error, visitTypes []string) error {
	if err == nil && len(visitTypes) > 0 {
		s.eligible.mark(visitTypes)
	}
	return err
}

// mark queues visit types for the next notification.
func (e *eligibility) mark(visitTypes []string) {
	e.sendOnce.Do(func() { go e.send() })
	e.mu.Lock()
	e.pending = append(e.pending, visitTypes...)
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// send notifies the marked visit types until close, then the last ones.
func (e *eligibility) send() {
	defer close(e.sent)
	for {
		select {
		case <-e.kick:
		case <-e.ctx.Done():
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			e.notify(ctx)
			cancel()
			return
		}
		ctx, cancel := context.WithTimeout(e.ctx, sendTimeout)
		e.notify(ctx)
		cancel()
		select {
		case <-time.After(sendSpacing):
		case <-e.ctx.Done():
		}
	}
}

// notify sends one notification of each visit type marked; on failure
// they are lost, and the subscribers' own waits bound what they miss.
func (e *eligibility) notify(ctx context.Context) {
	e.mu.Lock()
	vts := wake.Distinct(e.pending)
	e.pending = nil
	e.mu.Unlock()
	if len(vts) == 0 {
		return
	}
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(ctx, "SELECT pg_notify("+eligibleChannel+", vt) FROM unnest($1::text[]) vt", vts)
}

// listen relays the notifications to the subscribers until close, and
// connects again when its connection fails.
func (e *eligibility) listen() {
	defer close(e.listened)
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
// every subscriber is woken up once it listens, since news may have come
// while no session listened.
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

// close sends the last notification and stops the listener, if they
// started; closing twice is harmless.
func (e *eligibility) close() {
	e.listenOnce.Do(func() { close(e.listened) }) // no listener will start
	e.sendOnce.Do(func() { close(e.sent) })       // no sender will start
	e.cancel()
	<-e.sent
	<-e.listened
}
