package amqp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestCoalescingConnKeepsOrderAndGathers writes many small frames through
// a pipe whose reader is slower than the writer: every byte arrives, in
// order, in fewer socket writes than frames.
func TestCoalescingConnKeepsOrderAndGathers(t *testing.T) {
	client, server := net.Pipe()
	counted := &countingConn{Conn: client}
	c := newCoalescingConn(counted)

	var want bytes.Buffer
	const frames = 5000
	for i := range frames {
		fmt.Fprintf(&want, "frame %05d;", i)
	}
	got := make(chan []byte)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 512)
		for {
			n, err := server.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				got <- b.Bytes()
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	for i := range frames {
		if _, err := fmt.Fprintf(c, "frame %05d;", i); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("received %d bytes, want %d in order", len(b), want.Len())
	}
	if w := counted.writes.Load(); w >= frames {
		t.Errorf("%d socket writes for %d frames: nothing gathered", w, frames)
	}
}

// TestCoalescingConnCloseSendsPending checks that what was written before
// Close reaches the peer before the socket closes.
func TestCoalescingConnCloseSendsPending(t *testing.T) {
	client, server := net.Pipe()
	c := newCoalescingConn(client)
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(server)
		done <- b
	}()
	if _, err := c.Write([]byte("connection.close")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-done; string(b) != "connection.close" {
		t.Fatalf("peer read %q", b)
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v, want net.ErrClosed", err)
	}
}

// TestCoalescingConnReportsWriteErrors checks that a failed socket write
// fails the next Write and closes the socket, so the reader sees it too.
func TestCoalescingConnReportsWriteErrors(t *testing.T) {
	client, server := net.Pipe()
	c := newCoalescingConn(client)
	server.Close()
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		_, err = c.Write([]byte("frame"))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a closed peer keep succeeding")
	}
	if _, rerr := client.Read(make([]byte, 1)); rerr == nil {
		t.Fatal("the socket stayed open after a failed write")
	}
	_ = c.Close()
}
