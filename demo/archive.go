package demo

import (
	"bytes"
	"encoding/hex"
	"math"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/worker"
)

// The bounds of a demo visit: the world's visits, from world.MinRunTime to
// world.MaxRunTime, take from MinVisit to MaxVisit here, on a log scale.
const (
	MinVisit = 250 * time.Millisecond
	MaxVisit = 4 * time.Second
)

// archive is what the demo's workers know of the origins: when each was
// last visited, the snapshot found then, and which origins are gone from
// their forge. Origins it never heard of are visited for the first time.
type archive struct {
	mu      sync.Mutex
	origins map[revisit.OriginKey]*archived
}

// archived is one origin of the archive.
type archived struct {
	// attempted is when its last visit started; zero if never.
	attempted time.Time
	// snapshot is what its last full visit found.
	snapshot []byte
	// gone origins are not found at every visit.
	gone bool
}

func newArchive() *archive { return &archive{origins: map[revisit.OriginKey]*archived{}} }

// add records what the archive knows of an origin before the demo.
func (a *archive) add(k revisit.OriginKey, o archived) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.origins[k] = &o
}

// visit runs the world's visit of an origin that starts at now, and
// returns how long a demo worker takes on it and what it reports: not
// found if the origin is gone, failed if the world cuts the visit
// (partial, with no snapshot), else eventful when the snapshot differs
// from the last one the archive holds, uneventful otherwise.
func (a *archive) visit(k revisit.OriginKey, now time.Time) (time.Duration, worker.Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.origins[k]
	if o == nil {
		o = &archived{}
		a.origins[k] = o
	}
	if o.gone {
		return MinVisit, worker.Result{Status: "not_found"}
	}
	v := world.NewOrigin(k.URL, k.VisitType).Visit(now, o.attempted)
	o.attempted = now
	took := demoDuration(v.Duration)
	if v.Outcome != world.Full {
		return took, worker.Result{Status: "failed",
			Error: "visit cut after " + world.MaxRunTime.String() + ": too many changes to fetch at once"}
	}
	status := "uneventful"
	if !bytes.Equal(v.Snapshot, o.snapshot) {
		status = "eventful"
	}
	o.snapshot = v.Snapshot
	return took, worker.Result{Status: status, Snapshot: hex.EncodeToString(v.Snapshot)}
}

// demoDuration maps the duration of a world visit to the demo's.
func demoDuration(d time.Duration) time.Duration {
	f := math.Log(float64(d)/float64(world.MinRunTime)) / math.Log(float64(world.MaxRunTime)/float64(world.MinRunTime))
	f = min(max(f, 0), 1)
	return time.Duration(float64(MinVisit) * math.Pow(float64(MaxVisit)/float64(MinVisit), f))
}
