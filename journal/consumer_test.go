package journal_test

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/journaltest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/store"
)

var base = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// running is a consumer run in the background.
type running struct {
	reg  *prometheus.Registry
	c    *journal.Consumer
	stop context.CancelFunc
	done chan error
}

// start runs a consumer of group on brokers into st.
func start(t *testing.T, st store.Store, brokers []string, group string, batch int) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	c, err := journal.New(st, journal.Config{Brokers: brokers, Group: group, BatchSize: batch,
		Metrics: journal.NewMetrics(reg), Rand: rand.Float64})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{reg: reg, c: c, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { r.halt(t) })
	return r
}

// halt stops the consumer and checks it stopped cleanly (once).
func (r *running) halt(t *testing.T) {
	t.Helper()
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	select {
	case err := <-r.done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer did not stop within 30 s")
	}
}

func (r *running) messages(outcome string) int {
	return r.counter("revisit_journal_messages_total", "outcome", outcome)
}

func (r *running) malformed(kind string) int {
	return r.counter("revisit_journal_malformed_total", "kind", kind)
}

// counter reads the counter name{label=value} of the consumer's registry.
func (r *running) counter(name, label, value string) int {
	families, err := r.reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return 0
}

// TestEndToEnd: statuses produced by librdkafka into four partitions, a
// visit's statuses spread over them, end as the stats of processing each
// final status once in date order, on both stores.
func TestEndToEnd(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		brokers := journaltest.Cluster(t, 4)
		w := journaltest.NewWorkload("e2e", 40, 10, 4, 4, base, 1)
		w.Record(t, st)
		journaltest.Produce(t, brokers, w.Statuses)
		requireSpread(t, brokers)

		r := start(t, st, brokers, journal.DefaultGroup, 7)
		journaltest.WaitCommitted(t, brokers, journal.DefaultGroup, time.Minute)
		require.Equal(t, w.Expected(t), w.Outcomes(t, st))
		finals := len(w.Finals())
		require.Equal(t, finals, r.messages(journal.OutcomeFolded), "every final status folded once")
		require.Equal(t, len(w.Statuses)-finals, r.messages(journal.OutcomeIgnored), "created and ongoing")
		require.Equal(t, 0, r.messages(journal.OutcomeMalformed))
		require.NoError(t, r.c.Ready(context.Background()))
		for p, lag := range r.c.Lag() {
			require.Zero(t, lag, "partition %d", p)
		}
	})
}

// requireSpread checks that some visit has statuses on several partitions.
func requireSpread(t *testing.T, brokers []string) {
	t.Helper()
	parts := map[string]map[int32]bool{}
	for p, records := range journaltest.Records(t, brokers) {
		for _, r := range records {
			k, err := journal.DecodeKey(r.Key)
			require.NoError(t, err)
			visit := k.Origin + " " + k.Visit
			if parts[visit] == nil {
				parts[visit] = map[int32]bool{}
			}
			parts[visit][p] = true
		}
	}
	spread := 0
	for _, ps := range parts {
		if len(ps) > 1 {
			spread++
		}
	}
	require.Positive(t, spread, "no visit has statuses on several partitions")
}

// TestMalformedSkipped: malformed values are counted by kind and skipped,
// and the valid message after them is processed.
func TestMalformedSkipped(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		brokers := journaltest.Cluster(t, 1)
		git := "git"
		at := func(i int) string { return base.Add(time.Duration(i) * time.Hour).Format(time.RFC3339Nano) }
		valid := journaltest.Status{Origin: "https://forge.example/ok", Visit: 1, Date: at(1), Status: "full",
			Snapshot: "9b922e6d8d5b803c1582aabe5525b7b91150788e", Type: &git}
		bad := func(s journaltest.Status) journaltest.Status { s.Origin = "https://forge.example/bad"; return s }
		withRaw := func(h string) journaltest.Status { s := bad(valid); s.RawHex = h; return s }
		unknown, shortSnapshot, future := bad(valid), bad(valid), bad(valid)
		unknown.Status = "done"
		shortSnapshot.Snapshot = valid.Snapshot[:38]
		future.Date = time.Now().Add(48 * time.Hour).Format(time.RFC3339Nano)
		last := valid
		last.Date, last.Status, last.Snapshot = at(2), "failed", ""
		statuses := []journaltest.Status{
			valid,
			withRaw("87a66f726967696e"), // truncated
			withRaw("91c0"),             // an array
			withRaw("83a66f726967696ea178a576697369740ba464617465a3616263"), // date as str
			withRaw("81a66f726967696ea2fffe"),                               // non-UTF-8 origin
			unknown, shortSnapshot, future,
			{Origin: "x", Date: at(1), Tombstone: true},
			last,
		}
		journaltest.Produce(t, brokers, statuses)
		r := start(t, st, brokers, journal.DefaultGroup, 200)
		journaltest.WaitCommitted(t, brokers, journal.DefaultGroup, time.Minute)

		for kind, n := range map[string]int{journal.KindMsgpack: 2, journal.KindShape: 2, journal.KindStatus: 1,
			journal.KindSnapshot: 1, journal.KindDate: 1} {
			require.Equal(t, n, r.malformed(kind), kind)
		}
		require.Equal(t, 7, r.messages(journal.OutcomeMalformed))
		require.Equal(t, 1, r.messages(journal.OutcomeTombstone))
		require.Equal(t, 2, r.messages(journal.OutcomeFolded))
		stats, err := st.VisitStatsGet(context.Background(), []revisit.OriginKey{
			{URL: valid.Origin, VisitType: "git"}, {URL: "https://forge.example/bad", VisitType: "git"}})
		require.NoError(t, err)
		require.Len(t, stats, 1, "only the valid origin has stats")
		require.Equal(t, revisit.VisitFailed, *stats[0].LastVisitStatus)
		require.Equal(t, time.Date(2025, 6, 1, 2, 0, 0, 0, time.UTC), stats[0].LastVisit.UTC())
		snap, _ := hex.DecodeString(valid.Snapshot)
		require.Equal(t, snap, stats[0].LastSnapshot)
	})
}

// TestRebalance: a second consumer joins the group mid-way; between them
// every status is folded once, and the stats are those of date order.
func TestRebalance(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		brokers := journaltest.Cluster(t, 4)
		first := journaltest.NewWorkload("before", 30, 8, 3, 4, base, 2)
		second := journaltest.NewWorkload("after", 30, 8, 3, 4, base.Add(24*time.Hour), 3)
		both := journaltest.Workload{Statuses: append(first.Statuses, second.Statuses...),
			Origins: append(first.Origins, second.Origins...)}
		both.Record(t, st)
		const group = "revisit.rebalance"

		a := start(t, st, brokers, group, 5)
		journaltest.Produce(t, brokers, first.Statuses)
		journaltest.WaitCommitted(t, brokers, group, time.Minute)
		b := start(t, st, brokers, group, 5)
		journaltest.WaitMembers(t, brokers, group, 2, time.Minute)
		journaltest.Produce(t, brokers, second.Statuses)
		journaltest.WaitCommitted(t, brokers, group, time.Minute)

		require.Equal(t, both.Expected(t), both.Outcomes(t, st))
		require.Positive(t, b.messages(journal.OutcomeFolded)+b.messages(journal.OutcomeIgnored),
			"the second consumer took partitions")
		require.Equal(t, len(both.Finals()), a.messages(journal.OutcomeFolded)+b.messages(journal.OutcomeFolded),
			"each final status folded once between the two")
	})
}

// TestClosesVisitsInFlight: visits dispatched to the workers before their
// statuses reach the journal are closed by those statuses (they carry no
// message id: by origin and date), on both stores.
func TestClosesVisitsInFlight(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		brokers := journaltest.Cluster(t, 2)
		// The visits are dispatched now, their statuses dated a minute on.
		now := time.Now().UTC()
		w := journaltest.NewWorkload("inflight", 12, 0, 1, 2, now.Add(time.Minute), 3)
		w.Record(t, st)
		visits, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
			VisitType: "git", Count: len(w.Origins), Policy: revisit.OldestScheduledFirst, Now: now}})
		require.NoError(t, err)
		require.Len(t, visits, len(w.Origins))
		ids := make([]string, len(visits))
		for i, v := range visits {
			ids[i] = v.ID
		}
		_, err = st.VisitsSent(ctx, ids, now)
		require.NoError(t, err)

		journaltest.Produce(t, brokers, w.Statuses)
		start(t, st, brokers, journal.DefaultGroup, 5)
		journaltest.WaitCommitted(t, brokers, journal.DefaultGroup, time.Minute)
		left, err := st.VisitsGet(ctx, ids)
		require.NoError(t, err)
		require.Empty(t, left, "every visit closed by its final status")
		require.Equal(t, w.Expected(t), w.Outcomes(t, st))
	})
}
