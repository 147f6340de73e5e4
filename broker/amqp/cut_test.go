package amqp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
)

// cutProxy forwards TCP to RabbitMQ and, once armed, cuts every connection
// after a number of bytes went from client to server: a connection lost in
// the middle of a batch, at a point the test chooses.
type cutProxy struct {
	ln     net.Listener
	target string
	budget atomic.Int64 // bytes left before the cut; < 0: not armed
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.budget.Store(-1)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, true)
		go p.pipe(c, s, false)
	}
}

// pipe copies src to dst, counting client-to-server bytes against the
// budget.
func (p *cutProxy) pipe(dst, src net.Conn, upstream bool) {
	defer p.wg.Done()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if upstream && p.budget.Load() >= 0 && p.budget.Add(-int64(n)) < 0 {
				p.cut()
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil { // EOF or a closed peer: close the pair
			p.closePair(dst, src)
			return
		}
	}
}

// closePair closes one proxied pair.
func (p *cutProxy) closePair(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range []net.Conn{a, b} {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// cut closes every proxied connection and disarms.
func (p *cutProxy) cut() {
	p.budget.Store(-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func TestConnectionCutMidBatchFailsUnconfirmedAndRecovers(t *testing.T) {
	t.Parallel()
	for _, channels := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d channels", channels), func(t *testing.T) {
			t.Parallel()
			testConnectionCut(t, channels)
		})
	}
}

// testConnectionCut cuts the connection in the middle of a batch published
// over channels publishing channels.
func testConnectionCut(t *testing.T, channels int) {
	u, err := url.Parse(celerytest.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	b := openBroker(t, amqp.Config{URL: u.String(), ConfirmWindow: 200, PublishChannels: channels, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	queue := testQueue(t, true)

	msgs := messages(t, 3000)
	proxy.budget.Store(400 << 10) // cut after ~400 KiB of the batch
	start := time.Now()
	pubs, err := b.Publish(context.Background(), queue, msgs)
	if err != nil {
		t.Fatalf("publish: %v (some messages were sent, so no call error)", err)
	}
	n := countOutcomes(pubs)
	var unconfirmed, notSent int
	for _, p := range pubs {
		switch {
		case p.Outcome == broker.Confirmed:
		case errors.Is(p.Err, broker.ErrUnconfirmed):
			unconfirmed++
		case errors.Is(p.Err, broker.ErrNotSent):
			notSent++
		default:
			t.Fatalf("unexpected publication %+v", p)
		}
	}
	t.Logf("cut mid-batch after %s: %d confirmed, %d unconfirmed, %d not sent",
		time.Since(start).Round(time.Millisecond), n[broker.Confirmed], unconfirmed, notSent)
	if n[broker.Confirmed] == 0 || unconfirmed == 0 || notSent == 0 || n[broker.Confirmed]+unconfirmed+notSent != len(msgs) {
		t.Fatalf("want some confirmed, some unconfirmed and some unsent; got %v", n)
	}

	// Reconnects by itself through the proxy.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	more := messages(t, 20)
	again, err := b.Publish(ctx, queue, more)
	if err != nil || countOutcomes(again)[broker.Confirmed] != len(more) {
		t.Fatalf("publish after the cut: %v %v", err, countOutcomes(again))
	}

	inQueue := drain(t, queue)
	for _, p := range append(pubs, again...) {
		if p.Outcome == broker.Confirmed && !inQueue[p.ID] {
			t.Fatalf("confirmed message %s is not in the queue", p.ID)
		}
	}
}
