package des

// Queue is a bounded FIFO queue of a simulation. A Get waits while the
// queue is empty and a Put while it is full; waiters are served in the
// order they came, each hand-off as an event at the current time.
type Queue[T any] struct {
	sim      *Sim
	capacity int
	items    fifo[T]
	takers   fifo[func(T)]
	putters  fifo[pendingPut[T]]
}

type pendingPut[T any] struct {
	v    T
	done func()
}

// NewQueue returns an empty queue of sim holding at most capacity items
// (capacity ≤ 0: unbounded).
func NewQueue[T any](sim *Sim, capacity int) *Queue[T] {
	return &Queue[T]{sim: sim, capacity: capacity}
}

// Len returns how many items wait in the queue.
func (q *Queue[T]) Len() int { return q.items.len() }

// Cap returns the queue's capacity (≤ 0: unbounded).
func (q *Queue[T]) Cap() int { return q.capacity }

func (q *Queue[T]) full() bool { return q.capacity > 0 && q.items.len() >= q.capacity }

// TryPut adds v unless the queue is full, and reports whether it did.
func (q *Queue[T]) TryPut(v T) bool {
	if q.full() || q.putters.len() > 0 {
		return false
	}
	q.items.push(v)
	q.serve()
	return true
}

// Put adds v as soon as the queue has room, then calls done (nil: nothing
// to call).
func (q *Queue[T]) Put(v T, done func()) {
	q.putters.push(pendingPut[T]{v: v, done: done})
	q.serve()
}

// Get takes the first item as soon as there is one and passes it to fn.
func (q *Queue[T]) Get(fn func(T)) {
	q.takers.push(fn)
	q.serve()
}

// serve admits waiting putters while there is room and hands items to
// waiting takers, each hand-off scheduled now.
func (q *Queue[T]) serve() {
	for {
		switch {
		case q.putters.len() > 0 && !q.full():
			p := q.putters.pop()
			q.items.push(p.v)
			if p.done != nil {
				q.sim.At(q.sim.now, p.done)
			}
		case q.takers.len() > 0 && q.items.len() > 0:
			fn, v := q.takers.pop(), q.items.pop()
			q.sim.At(q.sim.now, func() { fn(v) })
		default:
			return
		}
	}
}

// fifo is a slice-backed first-in first-out list.
type fifo[T any] struct {
	buf  []T
	head int
}

func (f *fifo[T]) len() int { return len(f.buf) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	f.buf = append(f.buf, v)
}

func (f *fifo[T]) pop() T {
	var zero T
	v := f.buf[f.head]
	f.buf[f.head] = zero
	f.head++
	if f.head > 1024 && f.head*2 > len(f.buf) {
		f.buf = append(f.buf[:0], f.buf[f.head:]...)
		f.head = 0
	}
	return v
}
