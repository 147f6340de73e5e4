// Package visitsend sends dispatched visits to a worker queue: it builds
// the Celery message of each visit (semantics.md §5), publishes them, marks
// the visits whose messages were confirmed sent and releases the others,
// keeping as lost those whose message may be in the queue anyway. The
// orchestrator, the first visits and the commands that send visits to a
// named queue all send this way.
package visitsend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/leased"
)

// Listers is what Messages needs of a store.
type Listers interface {
	// ListerGetByIDs returns the listers with those ids that exist.
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
}

// Messages builds the task messages of visits. It keeps the listers it
// looked up, so that each is read once; it is not safe for concurrent use.
type Messages struct {
	st Listers
	// origin is the sender named in the messages.
	origin  string
	listers map[uuid.UUID]revisit.Lister
}

// NewMessages returns a builder reading listers from st and naming origin
// (revisit@host) as the sender of its messages.
func NewMessages(st Listers, origin string) *Messages {
	return &Messages{st: st, origin: origin, listers: map[uuid.UUID]revisit.Lister{}}
}

// Build returns the message of each visit, in order, for the worker task
// task (a task type's backend_name); the message id is the visit's id.
func (m *Messages) Build(ctx context.Context, task string, visits []revisit.Visit) ([]celery.Message, error) {
	return m.build(ctx, celery.Task{Name: task, Origin: m.origin}, visits)
}

// build returns the message of each visit, in order, as Build does, with
// the name, sender and priority of like.
func (m *Messages) build(ctx context.Context, like celery.Task, visits []revisit.Visit) ([]celery.Message, error) {
	origins := make([]revisit.ListedOrigin, len(visits))
	for i, v := range visits {
		origins[i] = v.Origin
	}
	kwargs, err := m.Kwargs(ctx, origins)
	if err != nil {
		return nil, err
	}
	msgs := make([]celery.Message, len(visits))
	for i, v := range visits {
		t := like
		t.ID, t.Kwargs = v.ID, kwargs[i]
		msg, err := celery.NewMessage(t)
		if err != nil {
			return nil, fmt.Errorf("message for %s: %w", v.Origin.URL, err)
		}
		msgs[i] = msg
	}
	return msgs, nil
}

// Kwargs returns the keyword arguments of a visit of each origin, in
// order: its url, its lister's name and instance name (null when it has
// none), and its extra loader arguments, which win on a clash.
func (m *Messages) Kwargs(ctx context.Context, origins []revisit.ListedOrigin) ([]map[string]any, error) {
	if err := m.loadListers(ctx, origins); err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(origins))
	for i, o := range origins {
		lister := m.listers[o.ListerID]
		kwargs := map[string]any{"url": o.URL, "lister_name": lister.Name, "lister_instance_name": nil}
		if lister.InstanceName != "" {
			kwargs["lister_instance_name"] = lister.InstanceName
		}
		for k, a := range o.ExtraLoaderArguments {
			kwargs[k] = a
		}
		out[i] = kwargs
	}
	return out, nil
}

// loadListers fetches the listers of origins not yet known.
func (m *Messages) loadListers(ctx context.Context, origins []revisit.ListedOrigin) error {
	var missing []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, o := range origins {
		id := o.ListerID
		if _, ok := m.listers[id]; !ok && !seen[id] {
			seen[id] = true
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ls, err := m.st.ListerGetByIDs(ctx, missing)
	if err != nil {
		return fmt.Errorf("listers: %w", err)
	}
	for _, l := range ls {
		m.listers[l.ID] = l
	}
	return nil
}

// Records is what Record and Release need of a store: the in-flight
// records of the visits.
type Records interface {
	// VisitsSent marks pending visits sent.
	VisitsSent(ctx context.Context, ids []string, at time.Time) (int, error)
	// VisitsRelease forgets pending visits whose messages were not
	// delivered, or keeps them as lost when they may have been.
	VisitsRelease(ctx context.Context, ids []string, maybePublished bool) (int, error)
}

// Outcome is what became of the messages of a batch of visits.
type Outcome struct {
	// Sent counts the visits whose messages the broker confirmed.
	Sent int
	// Failed counts those whose messages were not delivered (released),
	// Unsure those whose messages may have been (kept as lost, so that
	// their results still count).
	Failed, Unsure int
	// Err is the first publication's error, when one was not confirmed.
	Err error
}

// NotSent counts the visits whose messages were not confirmed.
func (o Outcome) NotSent() int { return o.Failed + o.Unsure }

// Record applies the outcome of publishing the message of each visit,
// pubs[i] being visits[i]'s: the confirmed visits are marked sent at at,
// the others released. It records even when ctx is over (a stop in the
// middle of a round), within leased.CleanupTimeout. When marking the
// visits sent fails they stay pending (a recovery releases them) and the
// Outcome is zero.
func Record(ctx context.Context, st Records, visits []revisit.Visit, pubs []broker.Publication, at time.Time) (Outcome, error) {
	var o Outcome
	var sent, failed, unsure []string
	for i, p := range pubs {
		switch {
		case p.Outcome == broker.Confirmed:
			sent = append(sent, visits[i].ID)
			continue
		case errors.Is(p.Err, broker.ErrUnconfirmed):
			unsure = append(unsure, visits[i].ID)
		default:
			failed = append(failed, visits[i].ID)
		}
		if o.Err == nil {
			o.Err = p.Err
		}
	}
	cctx, cancel := leased.CleanupContext(ctx)
	defer cancel()
	if _, err := st.VisitsSent(cctx, sent, at); err != nil {
		return Outcome{}, fmt.Errorf("record %d confirmed visits: %w", len(sent), err)
	}
	o.Sent, o.Failed, o.Unsure = len(sent), len(failed), len(unsure)
	for _, r := range []struct {
		ids            []string
		maybePublished bool
	}{{failed, false}, {unsure, true}} {
		if len(r.ids) == 0 {
			continue
		}
		if _, err := st.VisitsRelease(cctx, r.ids, r.maybePublished); err != nil {
			return o, fmt.Errorf("release %d unconfirmed visits: %w", len(r.ids), err)
		}
	}
	return o, nil
}

// Release gives back the origins of visits whose messages were never
// published, within leased.CleanupTimeout whatever became of the caller's
// context; when it fails, the recovery of their visit type does it later.
func Release(st Records, visits []revisit.Visit) error {
	if len(visits) == 0 {
		return nil
	}
	ids := make([]string, len(visits))
	for i, v := range visits {
		ids[i] = v.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), leased.CleanupTimeout)
	defer cancel()
	if _, err := st.VisitsRelease(ctx, ids, false); err != nil {
		return fmt.Errorf("release %d visits: %w", len(ids), err)
	}
	return nil
}
