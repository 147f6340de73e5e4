package demo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/examples"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/tasktypes"
)

// The shares of the origins Seed lists.
const (
	// VisitedShare is the share visited successfully before the demo,
	// between an hour and a week before it starts.
	VisitedShare = 0.75
	// UnknownUpdateShare is the share listed without a last update, as
	// forges that do not tell.
	UnknownUpdateShare = 0.15
	// GoneShare is the share gone from their forge: every visit of them
	// finds nothing.
	GoneShare = 0.02
)

// How long before the demo its origins visited before were visited: from
// visitedAfter to visitedBefore.
const (
	visitedAfter  = time.Hour
	visitedBefore = 7 * 24 * time.Hour
)

// recordChunk bounds the origins of one record.
const recordChunk = 1000

// VisitTypes are the visit types of the demo: those of the example task
// types, in their order.
func VisitTypes() ([]string, error) {
	ts, err := exampleTaskTypes()
	var vts []string
	for _, t := range ts {
		if vt, ok := t.VisitType(); ok {
			vts = append(vts, vt)
		}
	}
	return vts, err
}

// exampleTaskTypes are the example task types, their queues bounded by
// QueueLength.
func exampleTaskTypes() ([]revisit.TaskType, error) {
	ts, err := tasktypes.Parse("examples/task-types.yaml", examples.TaskTypes)
	for i := range ts {
		ts[i].MaxQueueLength = min(ts[i].MaxQueueLengthOrDefault(), QueueLength)
	}
	return ts, err
}

// Seed registers the example task types (examples/task-types.yaml, their
// queues bounded by QueueLength) and lists the demo's origins, spread over
// their visit types, with the visits some of them had before the demo.
func (d *Demo) Seed(ctx context.Context) error {
	ts, err := exampleTaskTypes()
	if err != nil {
		return err
	}
	for i := range ts {
		if vt, ok := ts[i].VisitType(); ok {
			d.queues[vt] = ts[i].BackendName
			d.types = append(d.types, vt)
		}
	}
	if _, _, err := tasktypes.Register(ctx, d.st, ts); err != nil {
		return err
	}
	if d.lister, err = d.st.ListerGetOrCreate(ctx, ListerName, ""); err != nil {
		return fmt.Errorf("lister %s: %w", ListerName, err)
	}
	now := d.now()
	origins := make([]revisit.ListedOrigin, 0, d.cfg.Origins)
	var history []feedback.VisitStatus
	for range d.cfg.Origins {
		o, visit := d.newOrigin(now, true)
		origins = append(origins, o)
		if visit != nil {
			history = append(history, *visit)
		}
	}
	for chunk := range slices.Chunk(origins, recordChunk) {
		if _, err := d.st.ListedOriginsRecord(ctx, chunk); err != nil {
			return fmt.Errorf("recording %d origins: %w", len(chunk), err)
		}
	}
	if _, err := feedback.Process(ctx, d.st, history, d.rand.Float64, feedback.Horizon{Clock: d.cfg.Clock}); err != nil {
		return fmt.Errorf("folding the visits before the demo: %w", err)
	}
	return d.updateMetrics(ctx)
}

// newOrigin draws the next origin of the demo's lister: its visit type in
// turn, a last update from the world unless the forge does not tell, and,
// for an origin listed at the start (seeding), maybe a visit before the
// demo. The archive learns what its workers will need to know of it.
func (d *Demo) newOrigin(now time.Time, seeding bool) (revisit.ListedOrigin, *feedback.VisitStatus) {
	d.listed++
	if d.rand.Float64() < UnknownUpdateShare {
		d.noUpdate[d.listed] = true
	}
	listed := d.listing(d.listed, now)
	vt, o := listed.VisitType, world.NewOrigin(listed.URL, listed.VisitType)
	var known archived
	var visit *feedback.VisitStatus
	switch r := d.rand.Float64(); {
	case r < GoneShare:
		known.gone = true
	case seeding && r < GoneShare+VisitedShare:
		at := now.Add(-visitedAfter - time.Duration(d.rand.Int64N(int64(visitedBefore-visitedAfter))))
		known.attempted, known.snapshot = at, o.Snapshot(at)
		visit = &feedback.VisitStatus{Origin: o.URL, VisitType: vt, Status: feedback.StatusFull, Date: at,
			Snapshot: known.snapshot}
	}
	d.archive.add(listed.Key(), known)
	return listed, visit
}

// listing is the i-th origin of the demo (from 1) as its lister lists it
// at now: its visit type in turn, and its forge's last update then, unless
// the forge does not tell.
func (d *Demo) listing(i int, now time.Time) revisit.ListedOrigin {
	vt := d.types[(i-1)%len(d.types)]
	o := world.NewOrigin(originURL(vt, i), vt)
	listed := revisit.ListedOrigin{ListerID: d.lister.ID, URL: o.URL, VisitType: vt, Enabled: true}
	if !d.noUpdate[i] {
		u := o.LastUpdate(now)
		listed.LastUpdate = &u
	}
	return listed
}

// originURL names the i-th origin of the demo (from 1), of visit type vt.
func originURL(vt string, i int) string {
	switch vt {
	case "git":
		return fmt.Sprintf("https://git.example.org/group-%02d/project-%05d.git", i%40, i)
	case "pypi":
		return fmt.Sprintf("https://pypi.example.org/project/package-%05d/", i)
	}
	return fmt.Sprintf("https://%s.example.org/repository-%05d", vt, i)
}

// updateMetrics refreshes the scheduler metrics of the demo's lister, as
// an operator's periodic `revisit origin update-metrics` would.
func (d *Demo) updateMetrics(ctx context.Context) error {
	if _, err := d.st.MetricsUpdate(ctx, &d.lister.ID, d.now()); err != nil {
		return fmt.Errorf("scheduler metrics of lister %s: %w", ListerName, err)
	}
	return nil
}
