package feedback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// The real stores satisfy Store.
var _ Store = store.Store(nil)

// Fixed random sources: u = 0, −0.1 and +0.1.
var (
	uZero  = func() float64 { return 0.5 }
	uMinus = func() float64 { return 0 }
	uPlus  = func() float64 { return 1 }
)

const (
	gitURL = "https://example.org/a.git"
	day    = int64(86400)
)

var (
	t0   = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	snap = map[string][]byte{
		"A": id20(0xa), "D": id20(0xd), "E": id20(0xe), "S": id20(0x5), "X": id20(0x99),
	}
	gitKey = revisit.OriginKey{URL: gitURL, VisitType: "git"}
)

// id20 returns a snapshot id of 20 bytes of b.
func id20(b byte) []byte { return bytes.Repeat([]byte{b}, revisit.SnapshotIDLength) }

// d returns the i-th test date, one hour apart.
func d(i int) time.Time { return t0.Add(time.Duration(i) * time.Hour) }

func ptr[T any](v T) *T { return &v }

func msg(status string, i int, snapshot string) VisitStatus {
	m := VisitStatus{Origin: gitURL, VisitType: "git", Status: status, Date: d(i)}
	if snapshot != "" {
		m.Snapshot = snap[snapshot]
	}
	return m
}

// step folds one message into row (nil: no stats) and returns the new row.
func step(t *testing.T, row *revisit.VisitStats, m VisitStatus) (revisit.VisitStats, Result) {
	t.Helper()
	stats := map[revisit.OriginKey]revisit.VisitStats{}
	if row != nil {
		stats[row.Key()] = *row
	}
	res := Fold(stats, nil, []VisitStatus{m}, uZero)
	require.Len(t, res.Stats, 1)
	return res.Stats[0], res
}

func TestValidate(t *testing.T) {
	good := msg(StatusFull, 1, "A")
	require.NoError(t, good.Validate(Horizon{}))
	for _, tc := range []struct {
		name  string
		edit  func(*VisitStatus)
		field string
	}{
		{"missing url", func(v *VisitStatus) { v.Origin = "" }, "url"},
		{"no url", func(v *VisitStatus) { v.Origin = "" }, "url"},
		{"bad visit type", func(v *VisitStatus) { v.VisitType = "Git!" }, "visit_type"},
		{"missing status", func(v *VisitStatus) { v.Status = "" }, "status"},
		{"unknown status", func(v *VisitStatus) { v.Status = "eventful" }, "status"},
		{"zero date", func(v *VisitStatus) { v.Date = time.Time{} }, "date"},
		{"empty snapshot", func(v *VisitStatus) { v.Snapshot = []byte{} }, "snapshot"},
		{"short snapshot", func(v *VisitStatus) { v.Snapshot = []byte{0} }, "snapshot"},
		{"far future date", func(v *VisitStatus) { v.Date = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC) }, "date"},
		{"invalid UTF-8 url", func(v *VisitStatus) { v.Origin = "https://e.org/\xff\xfe" }, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := good
			tc.edit(&v)
			err := v.Validate(Horizon{})
			require.Error(t, err)
			var e *revisit.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, revisit.CodeInvalid, e.Code)
			assert.Equal(t, tc.field, e.Field)
		})
	}
	for _, s := range []string{StatusCreated, StatusOngoing, StatusFailed, StatusNotFound, StatusPartial} {
		v := good
		v.Status = s
		assert.NoError(t, v.Validate(Horizon{}), s)
	}
}

// A status may be dated up to the horizon's tolerance beyond its clock, not
// later: it would make every real result after it late.
func TestValidateHorizon(t *testing.T) {
	now := d(10)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		maxFuture time.Duration
		date      time.Time
		ok        bool
	}{
		{0, now.Add(time.Hour), true},
		{0, now.Add(time.Hour + time.Second), false},
		{time.Minute, now.Add(time.Minute), true},
		{time.Minute, now.Add(2 * time.Minute), false},
		{time.Minute, now.Add(-1000 * time.Hour), true},
	} {
		v := msg(StatusFull, 0, "A")
		v.Date = tc.date
		err := v.Validate(Horizon{Clock: clock, MaxFuture: tc.maxFuture})
		if tc.ok {
			assert.NoError(t, err, "%+v", tc)
			continue
		}
		var e *revisit.Error
		require.ErrorAs(t, err, &e, "%+v", tc)
		assert.Equal(t, "date", e.Field)
		assert.Contains(t, e.Message, "in the future")
	}
	_, err := Process(context.Background(), newFakeStore(), []VisitStatus{msg(StatusFull, 1, ""), msg(StatusFull, 20, "")},
		uZero, Horizon{Clock: clock})
	var e *revisit.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "statuses[1].date", e.Field)
}

// TestVectors are the test vectors of semantics.md §7, folded one message
// at a time (as separate batches) and as one batch.
func TestVectors(t *testing.T) {
	type want struct{ offset, successive int }
	for _, tc := range []struct {
		name    string
		batch   []VisitStatus
		steps   []want
		disable bool
		check   func(t *testing.T, s revisit.VisitStats)
	}{
		{
			name:    "three not_found",
			batch:   []VisitStatus{msg(StatusNotFound, 1, ""), msg(StatusNotFound, 2, ""), msg(StatusNotFound, 3, "")},
			steps:   []want{{4, 1}, {5, 2}, {6, 3}},
			disable: true,
			check: func(t *testing.T, s revisit.VisitStats) {
				assert.Equal(t, revisit.VisitNotFound, *s.LastVisitStatus)
				assert.Nil(t, s.LastSuccessful)
				assert.Nil(t, s.LastSnapshot)
			},
		},
		{
			name:  "E, A, D snapshots",
			batch: []VisitStatus{msg(StatusFull, 1, "E"), msg(StatusPartial, 2, "A"), msg(StatusFull, 3, "D")},
			steps: []want{{4, 1}, {2, 2}, {0, 3}},
			check: func(t *testing.T, s revisit.VisitStats) {
				assert.Equal(t, d(3), *s.LastSuccessful)
				assert.Equal(t, snap["D"], s.LastSnapshot)
				assert.Equal(t, revisit.VisitSuccessful, *s.LastVisitStatus)
			},
		},
	} {
		t.Run(tc.name+"/one by one", func(t *testing.T) {
			var row *revisit.VisitStats
			var res Result
			for i, m := range tc.batch {
				var s revisit.VisitStats
				s, res = step(t, row, m)
				assert.Equal(t, tc.steps[i].offset, s.NextPositionOffset, "offset after message %d", i)
				assert.Equal(t, tc.steps[i].successive, s.SuccessiveVisits, "successive after message %d", i)
				row = &s
			}
			assert.Equal(t, tc.disable, len(res.Disable) == 1)
			tc.check(t, *row)
		})
		t.Run(tc.name+"/one batch", func(t *testing.T) {
			res := Fold(nil, nil, tc.batch, uZero)
			require.Len(t, res.Stats, 1)
			s := res.Stats[0]
			last := tc.steps[len(tc.steps)-1]
			assert.Equal(t, last.offset, s.NextPositionOffset)
			assert.Equal(t, last.successive, s.SuccessiveVisits)
			assert.Equal(t, d(3), *s.LastVisit)
			assert.Equal(t, 3, res.Processed)
			if tc.disable {
				assert.Equal(t, []revisit.OriginKey{gitKey}, res.Disable)
			} else {
				assert.Empty(t, res.Disable)
			}
			tc.check(t, s)
		})
	}
}

func TestDuplicateIgnored(t *testing.T) {
	m := msg(StatusFull, 1, "A")
	res := Fold(nil, nil, []VisitStatus{m, m}, uZero)
	require.Len(t, res.Stats, 1)
	assert.Equal(t, 1, res.Processed)
	assert.Equal(t, 1, res.Ignored)
	assert.Equal(t, 1, res.Late)
	assert.Equal(t, 1, res.Stats[0].SuccessiveVisits)
	assert.Equal(t, 4, res.Stats[0].NextPositionOffset)

	// Again in a later batch: nothing changes.
	again := Fold(map[revisit.OriginKey]revisit.VisitStats{gitKey: res.Stats[0]}, nil, []VisitStatus{m}, uZero)
	assert.Empty(t, again.Stats)
	assert.Equal(t, 1, again.Late)
}

// A replayed result whose date has nanoseconds is still a duplicate once
// its stats went through a store (which keeps microseconds).
func TestDuplicateAtStorePrecision(t *testing.T) {
	m := msg(StatusFailed, 1, "")
	m.Date = m.Date.Add(1500 * time.Nanosecond).In(time.FixedZone("CET", 3600))
	res := Fold(nil, nil, []VisitStatus{m}, uZero)
	require.Len(t, res.Stats, 1)
	stored := res.Stats[0]
	assert.Equal(t, revisit.Microsecond(m.Date), *stored.LastVisit)
	assert.Equal(t, time.UTC, stored.LastVisit.Location())
	again := Fold(map[revisit.OriginKey]revisit.VisitStats{gitKey: stored}, nil, []VisitStatus{m}, uZero)
	assert.Empty(t, again.Stats)
	assert.Equal(t, 1, again.Late)
}

func TestOutcomes(t *testing.T) {
	// A previous successful visit with snapshot S at D1, offset 4.
	prev := revisit.NewVisitStats(gitKey)
	prev.LastVisit, prev.LastSuccessful = ptr(d(1)), ptr(d(1))
	prev.LastVisitStatus = ptr(revisit.VisitSuccessful)
	prev.LastSnapshot = snap["S"]
	prev.SuccessiveVisits = 2

	withEventful := func(m VisitStatus, e bool) VisitStatus { m.Eventful = &e; return m }
	for _, tc := range []struct {
		name     string
		m        VisitStatus
		status   revisit.VisitStatus
		eventful bool
		snapshot string // expected last_snapshot
	}{
		{"failed", msg(StatusFailed, 2, ""), revisit.VisitFailed, false, "S"},
		{"failed with snapshot", msg(StatusFailed, 2, "X"), revisit.VisitFailed, false, "S"},
		{"not_found", msg(StatusNotFound, 2, ""), revisit.VisitNotFound, false, "S"},
		{"full without snapshot", msg(StatusFull, 2, ""), revisit.VisitFailed, false, "S"},
		{"partial without snapshot", msg(StatusPartial, 2, ""), revisit.VisitFailed, false, "S"},
		{"full, same snapshot", msg(StatusFull, 2, "S"), revisit.VisitSuccessful, false, "S"},
		{"partial, same snapshot", msg(StatusPartial, 2, "S"), revisit.VisitSuccessful, false, "S"},
		{"full, new snapshot", msg(StatusFull, 2, "X"), revisit.VisitSuccessful, true, "X"},
		{"partial, new snapshot", msg(StatusPartial, 2, "X"), revisit.VisitSuccessful, true, "X"},
		{"eventful flag only", withEventful(msg(StatusFull, 2, ""), true), revisit.VisitSuccessful, true, "S"},
		{"uneventful flag only", withEventful(msg(StatusFull, 2, ""), false), revisit.VisitSuccessful, false, "S"},
		{"snapshot decides over flag", withEventful(msg(StatusFull, 2, "S"), true), revisit.VisitSuccessful, false, "S"},
		{"failed ignores flag", withEventful(msg(StatusFailed, 2, ""), true), revisit.VisitFailed, false, "S"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := step(t, &prev, tc.m)
			assert.Equal(t, tc.status, *s.LastVisitStatus)
			assert.Equal(t, d(2), *s.LastVisit)
			wantOffset, wantSuccessive := 5, 1
			if tc.eventful {
				wantOffset = 2
			}
			if tc.status == revisit.VisitSuccessful {
				wantSuccessive = 3
				assert.Equal(t, d(2), *s.LastSuccessful)
			} else {
				assert.Equal(t, d(1), *s.LastSuccessful)
			}
			assert.Equal(t, wantOffset, s.NextPositionOffset)
			assert.Equal(t, wantSuccessive, s.SuccessiveVisits)
			assert.Equal(t, snap[tc.snapshot], s.LastSnapshot)
		})
	}

	// Never visited: the offset stays, successive is 1.
	t.Run("first visits", func(t *testing.T) {
		for _, m := range []VisitStatus{
			msg(StatusFailed, 1, ""), msg(StatusNotFound, 1, ""), msg(StatusFull, 1, ""),
			msg(StatusFull, 1, "X"), withEventful(msg(StatusPartial, 1, ""), true),
		} {
			s, _ := step(t, nil, m)
			assert.Equal(t, 4, s.NextPositionOffset, m.Status)
			assert.Equal(t, 1, s.SuccessiveVisits, m.Status)
		}
		s, _ := step(t, nil, withEventful(msg(StatusFull, 1, ""), false))
		assert.Equal(t, revisit.VisitSuccessful, *s.LastVisitStatus)
		assert.Equal(t, d(1), *s.LastSuccessful)
		assert.Nil(t, s.LastSnapshot)
	})
}

func TestOffsetSequences(t *testing.T) {
	for _, tc := range []struct {
		name    string
		start   int // offset of a row visited at D0 (successful, snapshot S)
		batch   []VisitStatus
		offsets []int
	}{
		{"uneventful after eventful", 4, []VisitStatus{msg(StatusFull, 1, "A"), msg(StatusFull, 2, "A"), msg(StatusFull, 3, "A")}, []int{2, 3, 4}},
		{"clamped at 0", 1, []VisitStatus{msg(StatusFull, 1, "A"), msg(StatusFull, 2, "D"), msg(StatusFull, 3, "E")}, []int{0, 0, 0}},
		{"clamped at 10", 9, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFailed, 2, ""), msg(StatusFull, 3, "S")}, []int{10, 10, 10}},
		{"down from 10", 10, []VisitStatus{msg(StatusFull, 1, "A"), msg(StatusFull, 2, "D")}, []int{8, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := revisit.NewVisitStats(gitKey)
			row.LastVisit, row.LastSuccessful = ptr(d(0)), ptr(d(0))
			row.LastVisitStatus = ptr(revisit.VisitSuccessful)
			row.LastSnapshot = snap["S"]
			row.NextPositionOffset = tc.start
			for i, m := range tc.batch {
				row, _ = step(t, &row, m)
				assert.Equal(t, tc.offsets[i], row.NextPositionOffset, "after message %d", i)
			}
		})
	}
}

func TestIntervals(t *testing.T) {
	days := []int64{1, 1, 2, 2, 2, 4, 16, 64, 256, 1024, 4096}
	for offset, want := range days {
		assert.Equal(t, want, IntervalDays(offset), "offset %d", offset)
	}
	assert.Equal(t, int64(1), IntervalDays(-3))
	assert.Equal(t, int64(4096), IntervalDays(42))

	for _, u := range []struct {
		name  string
		rnd   func() float64
		tenth int64 // 10 × (1 + u)
	}{{"u=0", uZero, 10}, {"u=-0.1", uMinus, 9}, {"u=+0.1", uPlus, 11}} {
		for offset := 0; offset <= 10; offset++ {
			t.Run(fmt.Sprintf("%s/offset %d", u.name, offset), func(t *testing.T) {
				// A first visit leaves the offset as it is.
				row := revisit.NewVisitStats(gitKey)
				row.NextPositionOffset = offset
				res := Fold(map[revisit.OriginKey]revisit.VisitStats{gitKey: row}, nil,
					[]VisitStatus{msg(StatusFailed, 1, "")}, u.rnd)
				require.Len(t, res.Stats, 1)
				want := days[offset] * day * u.tenth / 10
				assert.Equal(t, want, *res.Stats[0].NextVisitQueuePosition)
			})
		}
	}
}

func TestJitterClamped(t *testing.T) {
	assert.Equal(t, -Jitter, jitter(func() float64 { return -5 }))
	assert.Equal(t, Jitter, jitter(func() float64 { return 7 }))
	assert.Equal(t, -Jitter, jitter(func() float64 { return float64Nan() }))
	for range 1000 {
		u := jitter(rand.Float64)
		assert.True(t, u >= -Jitter && u < Jitter, u)
	}
}

func float64Nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestBase(t *testing.T) {
	const interval = 2 * day // offset 4
	for _, tc := range []struct {
		name      string
		own       *int64
		positions map[string]int64
		want      int64
	}{
		{"own position", ptr(int64(1000)), map[string]int64{"git": 500}, 1000 + interval},
		{"own zero: visit type's", ptr(int64(0)), map[string]int64{"git": 500}, 500 + interval},
		{"own null: visit type's", nil, map[string]int64{"git": 500}, 500 + interval},
		{"other visit type only: 0", nil, map[string]int64{"hg": 500}, interval},
		{"nothing: 0", nil, nil, interval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := revisit.NewVisitStats(gitKey)
			row.NextVisitQueuePosition = tc.own
			res := Fold(map[revisit.OriginKey]revisit.VisitStats{gitKey: row}, tc.positions,
				[]VisitStatus{msg(StatusFull, 1, "A")}, uZero)
			require.Len(t, res.Stats, 1)
			assert.Equal(t, tc.want, *res.Stats[0].NextVisitQueuePosition)
		})
	}

	// In a batch, the second message starts from the position the first set.
	res := Fold(nil, map[string]int64{"git": 500}, []VisitStatus{msg(StatusFull, 1, "A"), msg(StatusFull, 2, "A")}, uZero)
	require.Len(t, res.Stats, 1)
	assert.Equal(t, 500+interval+4*day, *res.Stats[0].NextVisitQueuePosition) // offset 5 after an uneventful visit
}

func TestIgnored(t *testing.T) {
	stored := revisit.NewVisitStats(gitKey)
	stored.LastVisit = ptr(d(5))
	stored.LastVisitStatus = ptr(revisit.VisitFailed)
	stats := map[revisit.OriginKey]revisit.VisitStats{gitKey: stored}

	res := Fold(stats, nil, []VisitStatus{
		msg(StatusCreated, 6, ""),
		msg(StatusOngoing, 7, ""),
		msg(StatusFull, 4, "A"), // late
		msg(StatusFull, 5, "A"), // same date as last_visit
		{Origin: gitURL, VisitType: "git", Status: "bogus", Date: d(9)},
		{Origin: gitURL, VisitType: "git", Status: StatusFull},
	}, uZero)
	assert.Empty(t, res.Stats)
	assert.Empty(t, res.Disable)
	assert.Equal(t, 0, res.Processed)
	assert.Equal(t, 6, res.Ignored)
	assert.Equal(t, 2, res.Late)
}

// A success that arrives after a later failure is late, so it does not set
// last_successful: the date rule applies to every outcome.
func TestLateSuccessIgnored(t *testing.T) {
	res := Fold(nil, nil, []VisitStatus{msg(StatusFailed, 2, ""), msg(StatusFull, 1, "A")}, uZero)
	require.Len(t, res.Stats, 1)
	assert.Nil(t, res.Stats[0].LastSuccessful)
	assert.Equal(t, 1, res.Late)
}

// Whatever the arrival order, last_visit is the latest date; when that
// latest result is successful, last_successful is it too. The origins
// disabled are those that folding the messages one batch each disables:
// where a stream is cut into batches changes nothing.
func TestPermutations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	urls := []string{"https://example.org/a.git", "https://example.org/b.git", "https://example.org/c.git"}
	var batch []VisitStatus
	latest := map[revisit.OriginKey]time.Time{}
	statuses := []string{StatusFailed, StatusNotFound, StatusFull, StatusPartial, StatusCreated}
	for _, u := range urls {
		for _, vt := range []string{"git", "hg"} {
			n := 2 + r.IntN(6)
			for i := range n {
				m := VisitStatus{Origin: u, VisitType: vt, Status: statuses[r.IntN(len(statuses))], Date: d(i)}
				if r.IntN(2) == 0 {
					m.Snapshot = []byte{byte(r.IntN(3) + 1)}
				}
				if i == n-1 {
					m.Status, m.Snapshot = StatusFull, []byte{9}
				}
				batch = append(batch, m)
				latest[m.Key()] = m.Date
			}
		}
	}
	// Some origins already have stats.
	stats := map[revisit.OriginKey]revisit.VisitStats{}
	old := revisit.NewVisitStats(revisit.OriginKey{URL: urls[0], VisitType: "git"})
	old.LastVisit, old.LastSuccessful = ptr(d(-10)), ptr(d(-20))
	old.LastVisitStatus = ptr(revisit.VisitFailed)
	stats[old.Key()] = old

	for i := range 300 {
		r.Shuffle(len(batch), func(a, b int) { batch[a], batch[b] = batch[b], batch[a] })
		res := Fold(stats, nil, batch, r.Float64)
		require.Len(t, res.Stats, len(latest), "shuffle %d", i)
		for _, s := range res.Stats {
			assert.Equal(t, latest[s.Key()], *s.LastVisit, "shuffle %d %v", i, s.Key())
			assert.Equal(t, latest[s.Key()], *s.LastSuccessful, "shuffle %d %v", i, s.Key())
			assert.Equal(t, []byte{9}, s.LastSnapshot)
		}
		assert.ElementsMatch(t, disabledOneByOne(stats, batch), res.Disable, "shuffle %d", i)
	}
}

// disabledOneByOne folds batch one message a batch, each batch reading the
// stats the previous ones left, and returns the origins any of them
// disabled.
func disabledOneByOne(stats map[revisit.OriginKey]revisit.VisitStats, batch []VisitStatus) []revisit.OriginKey {
	stats = maps.Clone(stats)
	var disabled []revisit.OriginKey
	for _, m := range batch {
		res := Fold(stats, nil, []VisitStatus{m}, uZero)
		for _, s := range res.Stats {
			stats[s.Key()] = s
		}
		for _, k := range res.Disable {
			if !slices.Contains(disabled, k) {
				disabled = append(disabled, k)
			}
		}
	}
	return disabled
}

// TestRecentResults folds seven results of an origin, one batch and one
// message a batch: its stats keep the five newest, newest first, each
// eventful when it brought a snapshot other than the one before or said
// so; a late result and a status still ongoing add nothing.
func TestRecentResults(t *testing.T) {
	eventful := msg(StatusPartial, 4, "")
	eventful.Eventful = ptr(true)
	uneventful := msg(StatusFull, 6, "")
	uneventful.Eventful = ptr(false)
	batch := []VisitStatus{
		msg(StatusFull, 1, "A"),    // first snapshot: eventful
		msg(StatusFull, 2, "A"),    // the same: not eventful
		msg(StatusFailed, 3, ""),   // failed
		eventful,                   // says eventful
		msg(StatusNotFound, 5, ""), // not found
		uneventful,                 // says not eventful
		msg(StatusFull, 7, "D"),    // another snapshot: eventful
		msg(StatusFull, 0, "X"),    // late
		msg(StatusOngoing, 8, ""),  // not over
	}
	want := []revisit.RecentResult{
		{Date: d(7), Status: revisit.VisitSuccessful, Eventful: true},
		{Date: d(6), Status: revisit.VisitSuccessful},
		{Date: d(5), Status: revisit.VisitNotFound},
		{Date: d(4), Status: revisit.VisitSuccessful, Eventful: true},
		{Date: d(3), Status: revisit.VisitFailed},
	}
	res := Fold(nil, nil, batch, uZero)
	require.Len(t, res.Stats, 1)
	assert.Equal(t, want, res.Stats[0].Recent, "one batch")
	assert.Equal(t, 2, res.Ignored)

	var row *revisit.VisitStats
	var history [][]revisit.RecentResult
	for _, m := range batch[:7] {
		s, _ := step(t, row, m)
		history = append(history, s.Recent)
		row = &s
	}
	assert.Equal(t, want, row.Recent, "one message a batch")
	assert.Equal(t, []revisit.RecentResult{{Date: d(1), Status: revisit.VisitSuccessful, Eventful: true}}, history[0])
	assert.Equal(t, []revisit.RecentResult{{Date: d(2), Status: revisit.VisitSuccessful},
		{Date: d(1), Status: revisit.VisitSuccessful, Eventful: true}}, history[1])
	assert.Len(t, history[4], revisit.RecentResultsKept)
	assert.Equal(t, d(1), history[4][4].Date, "five results: the first is still there")
	assert.Equal(t, d(2), history[5][4].Date, "six: the first is gone")
	assert.Equal(t, want[1:], history[5][:4], "the rows read are left alone")

	stored := map[revisit.OriginKey]revisit.VisitStats{gitKey: *row}
	late := Fold(stored, nil, []VisitStatus{msg(StatusFailed, 7, ""), msg(StatusFailed, 6, "")}, uZero)
	assert.Empty(t, late.Stats)
	assert.Equal(t, 2, late.Late)
}

func TestNullNeverOverwritten(t *testing.T) {
	row := revisit.NewVisitStats(gitKey)
	row.LastScheduled = ptr(d(0))
	row.LastSnapshot = snap["S"]
	row.LastSuccessful = ptr(d(-1))
	row.LastVisit = ptr(d(-1))
	row.LastVisitStatus = ptr(revisit.VisitSuccessful)
	stats := map[revisit.OriginKey]revisit.VisitStats{gitKey: row}
	res := Fold(stats, nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFull, 2, "")}, uZero)
	require.Len(t, res.Stats, 1)
	s := res.Stats[0]
	assert.Equal(t, d(0), *s.LastScheduled)
	assert.Equal(t, snap["S"], s.LastSnapshot)
	assert.Equal(t, d(-1), *s.LastSuccessful)

	// The input is left alone.
	assert.Equal(t, d(-1), *stats[gitKey].LastVisit)
	assert.Nil(t, stats[gitKey].NextVisitQueuePosition)
}

func TestDisable(t *testing.T) {
	hgKey := revisit.OriginKey{URL: gitURL, VisitType: "hg"}
	hg := func(m VisitStatus) VisitStatus { m.VisitType = "hg"; return m }
	for _, tc := range []struct {
		name   string
		stored *revisit.VisitStats
		batch  []VisitStatus
		want   []revisit.OriginKey
	}{
		{"three failed", nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFailed, 2, ""), msg(StatusFailed, 3, "")}, []revisit.OriginKey{gitKey}},
		{"two are not enough", nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFailed, 2, "")}, nil},
		{"failed and not_found alternate", nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusNotFound, 2, ""), msg(StatusFailed, 3, "")}, nil},
		{"full without snapshot counts as failed", nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFull, 2, ""), msg(StatusPartial, 3, "")}, []revisit.OriginKey{gitKey}},
		{"a later success in the batch does not spare it", nil, []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFailed, 2, ""), msg(StatusFailed, 3, ""), msg(StatusFull, 4, "A")}, []revisit.OriginKey{gitKey}},
		{"only that visit type", nil, []VisitStatus{
			hg(msg(StatusNotFound, 1, "")), msg(StatusNotFound, 1, ""), hg(msg(StatusNotFound, 2, "")),
			hg(msg(StatusNotFound, 3, "")), msg(StatusFull, 2, "A"),
		}, []revisit.OriginKey{hgKey}},
		{"continues a stored run", &revisit.VisitStats{URL: gitURL, VisitType: "git", LastVisit: ptr(d(0)),
			LastVisitStatus: ptr(revisit.VisitNotFound), NextPositionOffset: 4, SuccessiveVisits: 2},
			[]VisitStatus{msg(StatusNotFound, 1, "")}, []revisit.OriginKey{gitKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stats := map[revisit.OriginKey]revisit.VisitStats{}
			if tc.stored != nil {
				stats[gitKey] = *tc.stored
			}
			res := Fold(stats, nil, tc.batch, uZero)
			assert.Equal(t, tc.want, res.Disable)
		})
	}
}

// fakeStore is a map-backed Store that records its calls.
type fakeStore struct {
	stats     map[revisit.OriginKey]revisit.VisitStats
	positions map[string]int64
	disabled  map[revisit.OriginKey]bool
	gets      [][]revisit.OriginKey
	writes    [][]revisit.VisitStatsWrite
	posGets   []string
	// inFlight are the visits in flight, which closes closes.
	inFlight []revisit.Visit
	closes   [][]revisit.OriginResult
	failOn   string
	// beforeWrite, if set, runs at the start of each write: another writer.
	beforeWrite func(call int)
}

func newFakeStore() *fakeStore {
	return &fakeStore{stats: map[revisit.OriginKey]revisit.VisitStats{}, positions: map[string]int64{}, disabled: map[revisit.OriginKey]bool{}}
}

func (f *fakeStore) calls() int {
	return len(f.gets) + len(f.writes) + len(f.posGets) + len(f.closes)
}

func (f *fakeStore) fail(name string) error {
	if f.failOn == name {
		return revisit.Errorf(revisit.CodeUnavailable, "%s: database down", name)
	}
	return nil
}

func (f *fakeStore) VisitStatsGet(_ context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	f.gets = append(f.gets, keys)
	if err := f.fail("get"); err != nil {
		return nil, err
	}
	var out []revisit.VisitStats
	for _, k := range keys {
		if s, ok := f.stats[k]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// VisitStatsWrite keeps stored values where the new row has null, skips
// the guarded writes whose stored last_visit changed, and disables.
func (f *fakeStore) VisitStatsWrite(_ context.Context, writes []revisit.VisitStatsWrite) (revisit.VisitStatsWriteResult, error) {
	var res revisit.VisitStatsWriteResult
	f.writes = append(f.writes, writes)
	if f.beforeWrite != nil {
		f.beforeWrite(len(f.writes))
	}
	if err := f.fail("write"); err != nil {
		return res, err
	}
	for _, w := range writes {
		s, k := w.Stats, w.Stats.Key()
		old, ok := f.stats[k]
		if w.Guarded && !equalTime(old.LastVisit, w.IfLastVisit) {
			res.Stale = append(res.Stale, k)
			continue
		}
		if ok {
			s.LastSuccessful = cmpOr(s.LastSuccessful, old.LastSuccessful)
			s.LastVisit = cmpOr(s.LastVisit, old.LastVisit)
			s.LastVisitStatus = cmpOr(s.LastVisitStatus, old.LastVisitStatus)
			s.LastScheduled = cmpOr(s.LastScheduled, old.LastScheduled)
			s.NextVisitQueuePosition = cmpOr(s.NextVisitQueuePosition, old.NextVisitQueuePosition)
			if s.LastSnapshot == nil {
				s.LastSnapshot = old.LastSnapshot
			}
			if s.Recent == nil {
				s.Recent = old.Recent
			}
		}
		f.stats[k] = s
		if w.Disable && !f.disabled[k] {
			f.disabled[k] = true
			res.Disabled++
		}
	}
	return res, nil
}

func equalTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func (f *fakeStore) QueuePositionGet(_ context.Context, vt string) (int64, error) {
	f.posGets = append(f.posGets, vt)
	return f.positions[vt], f.fail("position")
}

// VisitsCloseByOrigin removes and returns the sent and lost visits of each
// result's origin scheduled at or before its date.
func (f *fakeStore) VisitsCloseByOrigin(_ context.Context, results []revisit.OriginResult) ([]revisit.Visit, error) {
	f.closes = append(f.closes, results)
	if err := f.fail("close"); err != nil {
		return nil, err
	}
	var closed []revisit.Visit
	f.inFlight = slices.DeleteFunc(f.inFlight, func(v revisit.Visit) bool {
		for _, r := range results {
			if r.Key == v.Key() && v.State != revisit.VisitPending && !v.ScheduledAt.After(r.Date) {
				closed = append(closed, v)
				return true
			}
		}
		return false
	})
	return closed, nil
}

// dispatched returns a visit of key scheduled at day n, in state.
func dispatched(key revisit.OriginKey, n int, state revisit.VisitState) revisit.Visit {
	return revisit.Visit{ID: fmt.Sprintf("%s@%d", key.URL, n), Origin: revisit.ListedOrigin{URL: key.URL, VisitType: key.VisitType},
		State: state, ScheduledAt: d(n)}
}

func TestProcess(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	st.positions["git"] = 1000
	bKey := revisit.OriginKey{URL: "https://example.org/b.git", VisitType: "git"}
	cKey := revisit.OriginKey{URL: "https://example.org/c", VisitType: "pypi"}
	// b has stats that the batch's result for it predates.
	st.stats[bKey] = revisit.VisitStats{URL: bKey.URL, VisitType: "git", LastVisit: ptr(d(10)),
		LastVisitStatus: ptr(revisit.VisitSuccessful), LastScheduled: ptr(d(9)), NextPositionOffset: 4, SuccessiveVisits: 1}
	// a was scheduled already: last_scheduled must survive.
	st.stats[gitKey] = revisit.VisitStats{URL: gitURL, VisitType: "git", LastScheduled: ptr(d(0)), NextPositionOffset: 4, SuccessiveVisits: 1}
	st.inFlight = []revisit.Visit{dispatched(gitKey, 0, revisit.VisitSent), dispatched(bKey, 4, revisit.VisitLost),
		dispatched(cKey, 1, revisit.VisitPending), dispatched(cKey, 3, revisit.VisitSent)}

	batch := []VisitStatus{
		msg(StatusNotFound, 1, ""),
		{Origin: bKey.URL, VisitType: "git", Status: StatusFull, Date: d(5), Snapshot: snap["A"]},
		msg(StatusNotFound, 2, ""),
		{Origin: cKey.URL, VisitType: "pypi", Status: StatusOngoing, Date: d(1)},
		{Origin: cKey.URL, VisitType: "pypi", Status: StatusFull, Date: d(2), Snapshot: snap["E"]},
		msg(StatusNotFound, 3, ""),
	}
	res, err := Process(ctx, st, batch, uZero, Horizon{})
	require.NoError(t, err)

	require.Len(t, st.gets, 1)
	assert.ElementsMatch(t, []revisit.OriginKey{gitKey, bKey, cKey}, st.gets[0])
	assert.ElementsMatch(t, []string{"git", "pypi"}, st.posGets)
	require.Len(t, st.writes, 1)
	require.Len(t, st.writes[0], 2, "only the changed rows")
	gitW, cW := st.writes[0][0], st.writes[0][1]
	assert.Equal(t, gitKey, gitW.Stats.Key())
	assert.Equal(t, cKey, cW.Stats.Key())
	assert.True(t, gitW.Guarded && gitW.IfLastVisit == nil, "guarded by the last_visit read: none")
	assert.True(t, cW.Guarded && cW.IfLastVisit == nil)
	assert.True(t, gitW.Disable, "disabled with the stats that end its third failure")
	assert.False(t, cW.Disable)

	assert.Equal(t, 4, res.Processed)
	assert.Equal(t, 2, res.Ignored)
	assert.Equal(t, 1, res.Late)
	assert.Equal(t, 1, res.Disabled)
	assert.Equal(t, [][]revisit.OriginResult{{{Key: gitKey, Date: d(3)}, {Key: bKey, Date: d(5)}, {Key: cKey, Date: d(2)}}},
		st.closes, "after the write, each origin's latest final status closes, the late one of b too")
	assert.Equal(t, 2, res.Closed, "a's sent visit and b's lost one; c's pending visit and its visit after the result stay")
	assert.Equal(t, []revisit.Visit{dispatched(cKey, 1, revisit.VisitPending), dispatched(cKey, 3, revisit.VisitSent)}, st.inFlight)

	a := st.stats[gitKey]
	assert.Equal(t, d(0), *a.LastScheduled)
	assert.Equal(t, 6, a.NextPositionOffset)
	assert.Equal(t, 3, a.SuccessiveVisits)
	assert.Equal(t, d(3), *a.LastVisit)
	// From the visit type's 1000: offsets 4, 5, 6 give 2, 4 and 16 days.
	assert.Equal(t, 1000+2*day+4*day+16*day, *a.NextVisitQueuePosition)
	c := st.stats[cKey]
	assert.Equal(t, 2*day, *c.NextVisitQueuePosition)
	assert.Equal(t, snap["E"], c.LastSnapshot)
	assert.Equal(t, d(10), *st.stats[bKey].LastVisit)

	// Processing the same batch again changes nothing, and closes what a
	// visit dispatched before its results left in flight since.
	st.inFlight = append(st.inFlight, dispatched(gitKey, 2, revisit.VisitSent))
	res, err = Process(ctx, st, batch, uZero, Horizon{})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Processed)
	assert.Len(t, st.writes, 1)
	assert.Equal(t, 1, res.Closed, "duplicates close too")
}

// TestProcessClosesByOriginOnlyWithoutMessageID: a status that came with
// its message's id leaves the visits of its origin to its path (the
// listener closes that message's visit), whatever its origin's other
// visits.
func TestProcessClosesByOriginOnlyWithoutMessageID(t *testing.T) {
	st := newFakeStore()
	st.inFlight = []revisit.Visit{dispatched(gitKey, 0, revisit.VisitSent)}
	named := msg(StatusFull, 1, "A")
	named.MessageID = "another-visit"
	res, err := Process(context.Background(), st, []VisitStatus{named}, uZero, Horizon{})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Processed)
	assert.Empty(t, st.closes, "no close asked")
	assert.Zero(t, res.Closed)
	assert.Len(t, st.inFlight, 1)

	res, err = Process(context.Background(), st, []VisitStatus{named, msg(StatusFull, 1, "A")}, uZero, Horizon{})
	require.NoError(t, err)
	assert.Equal(t, [][]revisit.OriginResult{{{Key: gitKey, Date: d(1)}}}, st.closes)
	assert.Equal(t, 1, res.Closed, "the same result without its id closes by origin")
}

// TestProcessClosesInBoundedCalls: the origins of a batch larger than
// revisit.MaxOriginResults are closed in several calls, none larger.
func TestProcessClosesInBoundedCalls(t *testing.T) {
	st := newFakeStore()
	batch := make([]VisitStatus, revisit.MaxOriginResults+1)
	for i := range batch {
		batch[i] = VisitStatus{Origin: fmt.Sprintf("https://example.org/%d", i), VisitType: "git", Status: StatusFailed, Date: d(1)}
	}
	_, err := Process(context.Background(), st, batch, uZero, Horizon{})
	require.NoError(t, err)
	require.Len(t, st.closes, 2)
	assert.Len(t, st.closes[0], revisit.MaxOriginResults)
	assert.Len(t, st.closes[1], 1)
}

// TestProcessRefoldsStaleOrigins: an origin that another writer changed
// between Process's read and its write is read and folded again, alone,
// and counted once.
func TestProcessRefoldsStaleOrigins(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	st.positions["git"] = 1000
	bKey := revisit.OriginKey{URL: "https://example.org/b.git", VisitType: "git"}
	// Between the first read and write, another writer records a
	// successful visit of a at d(2), between the batch's two statuses.
	st.beforeWrite = func(call int) {
		if call == 1 {
			st.stats[gitKey] = revisit.VisitStats{URL: gitURL, VisitType: "git", LastVisit: ptr(d(2)),
				LastSuccessful: ptr(d(2)), LastVisitStatus: ptr(revisit.VisitSuccessful), NextPositionOffset: 4,
				SuccessiveVisits: 1, LastSnapshot: snap["A"]}
		}
	}
	batch := []VisitStatus{
		msg(StatusFailed, 1, ""),
		{Origin: bKey.URL, VisitType: "git", Status: StatusFull, Date: d(1), Snapshot: snap["B"]},
		msg(StatusFailed, 3, ""),
		{Origin: gitURL, VisitType: "git", Status: StatusOngoing, Date: d(4)},
	}
	res, err := Process(ctx, st, batch, uZero, Horizon{})
	require.NoError(t, err)

	require.Len(t, st.gets, 2)
	assert.Equal(t, []revisit.OriginKey{gitKey}, st.gets[1], "only the stale origin is read again")
	require.Len(t, st.writes, 2)
	require.Len(t, st.writes[1], 1)
	assert.Equal(t, d(2), *st.writes[1][0].IfLastVisit, "guarded by what the second read found")

	a := st.stats[gitKey]
	assert.Equal(t, d(3), *a.LastVisit)
	assert.Equal(t, revisit.VisitFailed, *a.LastVisitStatus)
	assert.Equal(t, d(2), *a.LastSuccessful, "the other writer's visit is kept")
	assert.Equal(t, 1, a.SuccessiveVisits, "one failure since that success")
	assert.Equal(t, d(1), *st.stats[bKey].LastVisit)

	// Counted once: b's result and a's later failure are processed; a's
	// failure at d(1) turned late (before the other writer's visit), the
	// ongoing status is ignored.
	assert.Equal(t, 2, res.Processed)
	assert.Equal(t, 1, res.Late)
	assert.Equal(t, 2, res.Ignored)
	require.Len(t, res.Stats, 2)
	assert.ElementsMatch(t, []revisit.OriginKey{bKey, gitKey}, []revisit.OriginKey{res.Stats[0].Key(), res.Stats[1].Key()})
}

// TestProcessGivesUpOnEndlessConflicts: an origin rewritten under every
// attempt ends in a conflict error rather than a loop.
func TestProcessGivesUpOnEndlessConflicts(t *testing.T) {
	st := newFakeStore()
	st.beforeWrite = func(call int) {
		st.stats[gitKey] = revisit.VisitStats{URL: gitURL, VisitType: "git", LastVisit: ptr(d(-call))}
	}
	_, err := Process(context.Background(), st, []VisitStatus{msg(StatusFailed, 1, "")}, uZero, Horizon{})
	var e *revisit.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, revisit.CodeConflict, e.Code)
	assert.Len(t, st.writes, maxRounds)
}

func TestProcessInvalid(t *testing.T) {
	st := newFakeStore()
	batch := []VisitStatus{
		msg(StatusNotFound, 1, ""),
		msg(StatusFull, 2, "A"),
		{Origin: gitURL, VisitType: "git", Status: StatusFull},
		{Origin: gitURL, VisitType: "git", Status: "done", Date: d(4)},
	}
	_, err := Process(context.Background(), st, batch, uZero, Horizon{})
	require.Error(t, err)
	var e *revisit.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, revisit.CodeInvalid, e.Code)
	assert.Equal(t, "statuses[2].date", e.Field)
	assert.Contains(t, err.Error(), "statuses[2]")
	assert.Equal(t, 0, st.calls(), "nothing read or written")

	batch[2].Date = d(3)
	_, err = Process(context.Background(), st, batch, uZero, Horizon{})
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "statuses[3].status", e.Field)
	assert.Equal(t, 0, st.calls())
}

func TestProcessStoreErrors(t *testing.T) {
	batch := []VisitStatus{msg(StatusFailed, 1, ""), msg(StatusFailed, 2, ""), msg(StatusFailed, 3, "")}
	for _, tc := range []struct {
		failOn  string
		writes  int
		context string
	}{
		{"get", 0, "reading visit stats"},
		{"position", 0, "queue position of visit type git"},
		{"write", 1, "writing visit stats of 1 origins"},
		{"close", 1, "closing the visits in flight of 1 origins"},
	} {
		t.Run(tc.failOn, func(t *testing.T) {
			st := newFakeStore()
			st.inFlight = []revisit.Visit{dispatched(gitKey, 0, revisit.VisitSent)}
			st.failOn = tc.failOn
			_, err := Process(context.Background(), st, batch, uZero, Horizon{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.context)
			assert.True(t, errors.Is(err, revisit.ErrUnavailable))
			assert.Len(t, st.writes, tc.writes)
			assert.Len(t, st.inFlight, 1, "nothing closed")

			// Processing the batch again, the store back, does both writes
			// and closes the visit, the statuses written already or not.
			st.failOn = ""
			res, err := Process(context.Background(), st, batch, uZero, Horizon{})
			require.NoError(t, err)
			assert.Equal(t, 3, st.stats[gitKey].SuccessiveVisits)
			assert.True(t, st.disabled[gitKey])
			assert.Equal(t, 1, res.Closed)
			assert.Empty(t, st.inFlight)
		})
	}
}

func TestProcessNothingFinal(t *testing.T) {
	st := newFakeStore()
	res, err := Process(context.Background(), st, []VisitStatus{msg(StatusCreated, 1, ""), msg(StatusOngoing, 2, "")}, uZero, Horizon{})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Ignored)
	assert.Equal(t, 0, st.calls())
}
