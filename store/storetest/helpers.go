package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// base is the instant every fixture's times are relative to; it is a whole
// second so that cooldown boundaries computed from it are exact.
var base = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// Clock is a controllable fake clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t (backwards too).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is one case's store, clock and context, with assertion helpers.
type fixture struct {
	t     *testing.T
	s     store.Store
	clock *Clock
	ctx   context.Context
}

func newFixture(t *testing.T, newStore NewStore) *fixture {
	t.Helper()
	c := NewClock(base)
	return &fixture{t: t, s: newStore(t, c.Now), clock: c, ctx: context.Background()}
}

func at(d time.Duration) time.Time                   { return base.Add(d) }
func tp(t time.Time) *time.Time                      { return &t }
func atp(d time.Duration) *time.Time                 { return tp(at(d)) }
func bp(b bool) *bool                                { return &b }
func sp(s string) *string                            { return &s }
func ip(i int64) *int64                              { return &i }
func stp(s revisit.VisitStatus) *revisit.VisitStatus { return &s }
func noCooldowns() *revisit.Cooldowns                { return &revisit.Cooldowns{} }

// url returns the origin URL of a short fixture name.
func url(name string) string { return "https://forge.example/" + name }

// lister gets or creates the lister name/instance.
func (f *fixture) lister(name, instance string) revisit.Lister {
	f.t.Helper()
	l, err := f.s.ListerGetOrCreate(f.ctx, name, instance)
	require.NoError(f.t, err)
	return l
}

// origin returns an enabled listed origin of lister id, named name.
func origin(id uuid.UUID, name, visitType string) revisit.ListedOrigin {
	return revisit.ListedOrigin{ListerID: id, URL: url(name), VisitType: visitType,
		Enabled: true, ExtraLoaderArguments: map[string]any{}}
}

// record records one batch and requires success.
func (f *fixture) record(batch ...revisit.ListedOrigin) revisit.RecordResult {
	f.t.Helper()
	r, err := f.s.ListedOriginsRecord(f.ctx, batch)
	require.NoError(f.t, err)
	return r
}

// recordReturning records one batch with ListedOriginsRecordReturning and
// requires success.
func (f *fixture) recordReturning(batch ...revisit.ListedOrigin) []revisit.ListedOrigin {
	f.t.Helper()
	got, err := f.s.ListedOriginsRecordReturning(f.ctx, batch)
	require.NoError(f.t, err)
	return got
}

// upsert writes visit stats and requires success.
func (f *fixture) upsert(stats ...revisit.VisitStats) {
	f.t.Helper()
	require.NoError(f.t, f.s.VisitStatsUpsert(f.ctx, stats))
}

// stats reads the stats of one origin; nil when it has none.
func (f *fixture) stats(name, visitType string) *revisit.VisitStats {
	f.t.Helper()
	got, err := f.s.VisitStatsGet(f.ctx, []revisit.OriginKey{{URL: url(name), VisitType: visitType}})
	require.NoError(f.t, err)
	require.LessOrEqual(f.t, len(got), 1)
	if len(got) == 0 {
		return nil
	}
	return &got[0]
}

// all returns every listed origin matching flt, walking every page.
func (f *fixture) all(flt revisit.ListedOriginFilter) []revisit.ListedOrigin {
	f.t.Helper()
	var out []revisit.ListedOrigin
	for i := 0; ; i++ {
		require.Less(f.t, i, 1000, "pagination does not end")
		page, err := f.s.ListedOriginsGet(f.ctx, flt)
		require.NoError(f.t, err)
		out = append(out, page.Origins...)
		if page.NextPageToken == "" {
			return out
		}
		flt.PageToken = page.NextPageToken
	}
}

// get returns the one listed origin (lister, name, visit type), enabled or not.
func (f *fixture) get(listerID uuid.UUID, name, visitType string) revisit.ListedOrigin {
	f.t.Helper()
	got := f.all(revisit.ListedOriginFilter{ListerID: &listerID, URLs: []string{url(name)},
		VisitType: visitType, Enabled: revisit.AnyEnabled})
	require.Len(f.t, got, 1, "listed origin %s %s", name, visitType)
	return got[0]
}

// grab runs GrabNextVisits and requires success.
func (f *fixture) grab(p revisit.GrabParams) []revisit.ListedOrigin {
	f.t.Helper()
	got, err := f.s.GrabNextVisits(f.ctx, p)
	require.NoError(f.t, err, "grab %+v", p)
	return got
}

// grabNames runs a grab and returns the fixture names of the result, in order.
func (f *fixture) grabNames(p revisit.GrabParams) []string {
	f.t.Helper()
	return names(f.grab(p))
}

// names returns the fixture names of origins, in order.
func names(os []revisit.ListedOrigin) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.URL[len(url("")):]
	}
	return out
}

// requireCode requires err to be a *revisit.Error matching sentinel whose
// field is field ("" for an error about no field in particular).
func requireCode(t *testing.T, err error, sentinel error, field string, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, sentinel, msgAndArgs...)
	var e *revisit.Error
	require.ErrorAs(t, err, &e, msgAndArgs...)
	require.Equal(t, field, e.Field, "field of %q%s", err, described(msgAndArgs))
}

// described formats the message and arguments of a require call, after a
// comma, or returns "" when there are none.
func described(msgAndArgs []any) string {
	if len(msgAndArgs) == 0 {
		return ""
	}
	if format, ok := msgAndArgs[0].(string); ok {
		return ", " + fmt.Sprintf(format, msgAndArgs[1:]...)
	}
	return ", " + fmt.Sprint(msgAndArgs...)
}

// requireInvalid requires err to be an invalid-input error naming field.
func requireInvalid(t *testing.T, err error, field string, msgAndArgs ...any) {
	t.Helper()
	requireCode(t, err, revisit.ErrInvalid, field, msgAndArgs...)
}

// requireTime requires got to be want at microsecond precision.
func requireTime(t *testing.T, want, got time.Time, msgAndArgs ...any) {
	t.Helper()
	require.True(t, revisit.Microsecond(want).Equal(got), append([]any{"want %s, got %s", revisit.Microsecond(want), got}, msgAndArgs...)...)
}

// requireTimePtr is requireTime for optional times.
func requireTimePtr(t *testing.T, want, got *time.Time, msgAndArgs ...any) {
	t.Helper()
	if want == nil {
		require.Nil(t, got, msgAndArgs...)
		return
	}
	require.NotNil(t, got, msgAndArgs...)
	requireTime(t, *want, *got, msgAndArgs...)
}

// row describes one listed origin of a grab fixture and, when any stats
// field is set, its visit stats.
type row struct {
	name     string
	lister   int    // index into the fixture's listers
	vt       string // "" is git
	disabled bool
	seen     time.Duration // the clock at record time, relative to base
	update   *time.Time    // last_update

	successful *time.Time // last_successful (and a snapshot unless noSnapshot)
	noSnapshot bool
	visit      *time.Time
	status     revisit.VisitStatus
	scheduled  *time.Time
	qpos       *int64
}

func (r row) visitType() string {
	if r.vt == "" {
		return "git"
	}
	return r.vt
}

func (r row) hasStats() bool {
	return r.successful != nil || r.visit != nil || r.status != "" || r.scheduled != nil || r.qpos != nil
}

func (r row) visitStats() revisit.VisitStats {
	s := revisit.NewVisitStats(revisit.OriginKey{URL: url(r.name), VisitType: r.visitType()})
	s.LastSuccessful = r.successful
	if r.successful != nil && !r.noSnapshot {
		s.LastSnapshot = []byte("snap-" + r.name)
	}
	s.LastVisit = r.visit
	if r.status != "" {
		s.LastVisitStatus = stp(r.status)
	}
	s.LastScheduled = r.scheduled
	s.NextVisitQueuePosition = r.qpos
	return s
}

// load records rows one batch each, in order (so that ids follow the order),
// with the clock at each row's seen, and writes their stats before the
// origins when statsFirst, else after.
func (f *fixture) load(listers []revisit.Lister, statsFirst bool, rows ...row) {
	f.t.Helper()
	var stats []revisit.VisitStats
	for _, r := range rows {
		if r.hasStats() {
			stats = append(stats, r.visitStats())
		}
	}
	if statsFirst && len(stats) > 0 {
		f.upsert(stats...)
	}
	saved := f.clock.Now()
	for _, r := range rows {
		o := origin(listers[r.lister].ID, r.name, r.visitType())
		o.Enabled = !r.disabled
		o.LastUpdate = r.update
		f.clock.Set(at(r.seen))
		f.record(o)
	}
	f.clock.Set(saved)
	if !statsFirst && len(stats) > 0 {
		f.upsert(stats...)
	}
}

// bothStatsOrders runs body as two parallel subtests of t, each on its own
// store: one with stats written before the origins, one after.
func bothStatsOrders(t *testing.T, newStore NewStore, name string, body func(t *testing.T, f *fixture, statsFirst bool)) {
	t.Helper()
	parallel(t, name+"/StatsBeforeOrigins", func(t *testing.T) {
		body(t, newFixture(t, newStore), true)
	})
	parallel(t, name+"/StatsAfterOrigins", func(t *testing.T) {
		body(t, newFixture(t, newStore), false)
	})
}

// sortOrigins sorts origins in (lister_id, url, visit_type) order.
func sortOrigins(os []revisit.ListedOrigin) {
	sort.SliceStable(os, func(i, j int) bool { return originLess(os[i], os[j]) })
}

func originLess(a, b revisit.ListedOrigin) bool {
	if c := bytes.Compare(a.ListerID[:], b.ListerID[:]); c != 0 {
		return c < 0
	}
	if a.URL != b.URL {
		return a.URL < b.URL
	}
	return a.VisitType < b.VisitType
}

type okey struct {
	lister uuid.UUID
	url    string
	vt     string
}

func keyOf(o revisit.ListedOrigin) okey { return okey{o.ListerID, o.URL, o.VisitType} }

func keys(os []revisit.ListedOrigin) []okey {
	out := make([]okey, len(os))
	for i, o := range os {
		out[i] = keyOf(o)
	}
	return out
}
