package amqp

import (
	"net"
	"sync"
)

// maxPendingWrite bounds the bytes a coalescingConn holds for its writer;
// a Write beyond it waits for the socket.
const maxPendingWrite = 1 << 20

// coalescingConn is a net.Conn whose writes are gathered by one writer
// goroutine, which sends whatever has accumulated in a single system call.
// amqp091-go flushes its buffer after every message, so a publisher pays a
// write(2) per message (~4 µs of CPU, and a read on RabbitMQ's side); here
// the messages written while the previous write is in progress leave
// together. Nothing waits for a timer: a write that finds the writer idle
// leaves at once.
//
// Write returns once the bytes are queued; a socket error is returned by
// the next Write and closes the connection, so that its reader fails and
// the connection's owner sees it lost (publishers rely on confirms, never
// on a Write's result).
type coalescingConn struct {
	net.Conn

	mu      sync.Mutex
	room    sync.Cond // signalled when the writer took the pending bytes
	pending []byte
	spare   []byte
	err     error // the first write error, or net.ErrClosed after Close
	closing bool
	wake    chan struct{} // capacity 1: the writer has work
	stopped chan struct{} // closed when the writer returned
}

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	cc.room.L = &cc.mu
	go cc.writeLoop()
	return cc
}

// Write queues p for the writer goroutine.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	for c.err == nil && !c.closing && len(c.pending) > 0 && len(c.pending)+len(p) > maxPendingWrite {
		c.room.Wait()
	}
	switch {
	case c.err != nil:
		err := c.err
		c.mu.Unlock()
		return 0, err
	case c.closing:
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// writeLoop sends the pending bytes until the connection closes or a
// write fails.
func (c *coalescingConn) writeLoop() {
	defer close(c.stopped)
	for range c.wake {
		c.mu.Lock()
		out := c.pending
		c.pending, c.spare = c.spare[:0], nil
		closing := c.closing
		c.room.Broadcast()
		c.mu.Unlock()
		if len(out) > 0 {
			if _, err := c.Conn.Write(out); err != nil {
				c.mu.Lock()
				if c.err == nil {
					c.err = err
				}
				c.room.Broadcast()
				c.mu.Unlock()
				_ = c.Conn.Close()
				return
			}
		}
		c.mu.Lock()
		c.spare = out[:0]
		c.mu.Unlock()
		if closing {
			return
		}
	}
}

// Close sends what is pending (a connection.close frame, typically), then
// closes the socket.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	already := c.closing
	c.closing = true
	c.room.Broadcast()
	c.mu.Unlock()
	if !already {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	<-c.stopped
	return c.Conn.Close()
}
