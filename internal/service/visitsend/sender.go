package visitsend

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

// Store is what a Sender needs of a store: the grab that records visits in
// flight, their records, and the listers named in their messages.
type Store interface {
	Listers
	Records
	// VisitsDispatch grabs origins and records one pending visit each.
	VisitsDispatch(ctx context.Context, p revisit.DispatchParams) ([]revisit.Visit, error)
}

// Broker is what a Sender needs of a broker.
type Broker interface {
	// Publish sends msgs to queue and reports the outcome of each.
	Publish(ctx context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error)
	// Depth returns how many messages wait in queue.
	Depth(ctx context.Context, queue string) (int64, error)
}

// HighPriority is the AMQP priority of the visits an operator asks for:
// the embedded broker leases them first, and RabbitMQ delivers them first
// from a queue declared with x-max-priority (Celery's
// task_queue_max_priority); other RabbitMQ queues deliver messages in the
// order they came.
const HighPriority uint8 = 9

// SenderName is how revisit signs the messages it sends (the origin
// header of Celery messages): revisit@host.
func SenderName() string {
	host, _ := os.Hostname()
	return "revisit@" + host
}

// Config configures a Sender.
type Config struct {
	// Owner names the sending process on the visits' records.
	Owner string
	// Origin is the sender named in the messages (revisit@host).
	Origin string
	// Clock is the time the visits are marked sent at, which must be the
	// store's; nil is time.Now.
	Clock revisit.Clock
}

// Sender grabs visits and sends them to a queue, each in flight from its
// grab to its result as the orchestrator's are: their results close them,
// and those without result within their visit type's timeout are offered
// again. It is not safe for concurrent use.
type Sender struct {
	st   Store
	b    Broker
	cfg  Config
	msgs *Messages
}

// NewSender returns a sender grabbing from st and publishing through b.
func NewSender(st Store, b Broker, cfg Config) *Sender {
	return &Sender{st: st, b: b, cfg: cfg, msgs: NewMessages(st, cfg.Origin)}
}

// Messages returns the sender's message builder, for callers that show
// what would be sent without sending it.
func (s *Sender) Messages() *Messages { return s.msgs }

// FreeSlots measures queue and returns how many visits may be sent into
// it before it holds maxLen (revisit.SlotRule without threshold): none
// when it is full or beyond, at most revisit.MaxGrabCount.
func (s *Sender) FreeSlots(ctx context.Context, queue string, maxLen int) (int, error) {
	depth, err := s.b.Depth(ctx, queue)
	if err != nil {
		return 0, fmt.Errorf("depth of queue %s: %w", queue, err)
	}
	return revisit.SlotRule{}.Slots(maxLen, depth), nil
}

// Request is one grab sent to a queue.
type Request struct {
	// Grab chooses the origins; it is not a dry run.
	Grab revisit.GrabParams
	// Task is the worker task of the messages: the backend_name of the
	// visit type's load task type.
	Task string
	// Queue is where the messages go.
	Queue string
	// Lease, when set, fences the grab: it happens only while the
	// sender's owner holds this lease.
	Lease string
}

// Result is what a Send did.
type Result struct {
	// Visits are the visits grabbed, in the grab's order.
	Visits []revisit.Visit
	Outcome
}

// Fill sends to r.Queue as many visits as it has free slots below maxLen
// (FreeSlots), at most limit when limit is positive; r.Grab.Count is set
// here. It returns the free slots found and what Send did.
func (s *Sender) Fill(ctx context.Context, r Request, maxLen, limit int) (int, Result, error) {
	slots, err := s.FreeSlots(ctx, r.Queue, maxLen)
	if err != nil {
		return 0, Result{}, err
	}
	r.Grab.Count = slots
	if limit > 0 {
		r.Grab.Count = min(slots, limit)
	}
	if r.Grab.Count == 0 {
		return slots, Result{}, nil
	}
	res, err := s.Send(ctx, r)
	return slots, res, err
}

// Send grabs r.Grab, records each visit in flight, publishes their
// messages to r.Queue and records the outcome (Record). The visits of
// messages not published are released; the error says why.
func (s *Sender) Send(ctx context.Context, r Request) (Result, error) {
	visits, err := s.st.VisitsDispatch(ctx, revisit.DispatchParams{Grab: r.Grab, Owner: s.cfg.Owner, Lease: r.Lease})
	if err != nil {
		return Result{}, fmt.Errorf("grab %d %s: %w", r.Grab.Count, r.Grab.Policy, err)
	}
	res := Result{Visits: visits}
	if len(visits) == 0 {
		return res, nil
	}
	res.Outcome, err = s.SendVisits(ctx, r.Task, r.Queue, nil, visits)
	return res, err
}

// SendVisits publishes the messages of visits dispatched already (and
// pending) to queue, for the worker task task, with the AMQP priority
// when given, and records the outcome (Record). When their messages
// cannot be built, the visits are released.
func (s *Sender) SendVisits(ctx context.Context, task, queue string, priority *uint8, visits []revisit.Visit) (Outcome, error) {
	msgs, err := s.msgs.build(ctx, celery.Task{Name: task, Origin: s.msgs.origin, Priority: priority}, visits)
	if err != nil {
		if rerr := Release(s.st, visits); rerr != nil {
			err = fmt.Errorf("%w (and %w)", err, rerr)
		}
		return Outcome{}, err
	}
	// Publish's error is also in each publication's outcome.
	pubs, _ := s.b.Publish(ctx, queue, msgs)
	return Record(ctx, s.st, visits, pubs, s.cfg.Clock.Now())
}

// OriginStore is what SendOrigin needs of a store: a Sender's, and the
// dispatch of one origin.
type OriginStore interface {
	Store
	// VisitsDispatchOrigin marks one origin scheduled and records its
	// visit pending; ErrConflict when one is in flight, unless forced.
	VisitsDispatchOrigin(ctx context.Context, p revisit.OriginDispatchParams) (revisit.Visit, error)
}

// SendOrigin dispatches the visit of one origin that an operator asks for
// (p, whose Owner is cfg.Owner) and sends its message at once, with
// HighPriority, to the queue of the visit type's load task type tt,
// whatever the queue's depth: the visit is then in flight as the
// orchestrator's are. A visit of the origin in flight already is the
// store's ErrConflict (unless p.Force); a message the broker did not
// confirm is ErrUnavailable, saying what became of its visit.
func SendOrigin(ctx context.Context, st OriginStore, b Broker, cfg Config, tt revisit.TaskType,
	p revisit.OriginDispatchParams) (revisit.Visit, error) {
	p.Owner = cfg.Owner
	v, err := st.VisitsDispatchOrigin(ctx, p)
	if err != nil {
		return v, err
	}
	priority := HighPriority
	out, err := NewSender(st, b, cfg).SendVisits(ctx, tt.BackendName, tt.BackendName, &priority, []revisit.Visit{v})
	switch {
	case err != nil:
		return v, err
	case out.Unsure > 0:
		return v, revisit.Errorf(revisit.CodeUnavailable, "the broker did not confirm the message "+
			"to queue %s (%v); it may be queued all the same: its visit is kept as lost, so that its result counts",
			tt.BackendName, out.Err)
	case out.Failed > 0:
		return v, revisit.Errorf(revisit.CodeUnavailable,
			"the message was not sent to queue %s (%v); nothing is in flight", tt.BackendName, queueProblem(out.Err))
	}
	return v, nil
}

// queueProblem explains a queue the broker does not know.
func queueProblem(err error) error {
	if errors.Is(err, broker.ErrQueueMissing) {
		return errors.New("the queue does not exist: no worker declared it yet")
	}
	return err
}
