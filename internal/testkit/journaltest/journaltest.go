// Package journaltest runs, for tests, a Kafka-protocol cluster in the test
// process (kfake), produces journal messages into it with an independent
// client (librdkafka through Debian's python3-confluent-kafka, encoding as
// swh.journal does: produce.py beside this file), builds workloads of visit
// statuses, and computes the visit stats they must end as.
package journaltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/internal/testkit/pytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// Topic is the journal's topic of visit statuses.
const Topic = "swh.journal.objects.origin_visit_status"

// Cluster starts a one-broker cluster with Topic in partitions partitions,
// configured further by opts (kfake.EnableSASL, kfake.TLS…), closed at
// cleanup, and returns its addresses.
func Cluster(t testing.TB, partitions int, opts ...kfake.Opt) []string {
	t.Helper()
	opts = append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), Topic)}, opts...)
	c, err := kfake.NewCluster(opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// Status is one message to produce: a visit status, or (RawHex, Tombstone)
// a message that is not one.
type Status struct {
	Origin   string `json:"origin"`
	Visit    int64  `json:"visit"`
	Date     string `json:"date"`
	Status   string `json:"status"`
	Snapshot string `json:"snapshot,omitempty"`
	// Type is the visit type; nil sends none.
	Type *string `json:"type"`
	// Partition, when set, places the message; else the producer hashes
	// its key.
	Partition *int32 `json:"partition,omitempty"`
	// LegacyDate sends the date as the old datetime envelope.
	LegacyDate bool   `json:"legacy_date,omitempty"`
	RawHex     string `json:"raw_hex,omitempty"`
	Tombstone  bool   `json:"tombstone,omitempty"`
}

// When is the status's date.
func (s Status) When() time.Time {
	d, err := time.Parse(time.RFC3339Nano, s.Date)
	if err != nil {
		panic(err)
	}
	return d
}

// VisitStatus is s as revisit processes it.
func (s Status) VisitStatus() feedback.VisitStatus {
	v := feedback.VisitStatus{Origin: s.Origin, Status: s.Status, Date: s.When()}
	if s.Type != nil {
		v.VisitType = *s.Type
	}
	if s.Snapshot != "" {
		v.Snapshot = snapshotBytes(s.Snapshot)
	}
	return v
}

func snapshotBytes(h string) []byte {
	var b []byte
	_, err := fmt.Sscanf(h, "%x", &b)
	if err != nil {
		panic(err)
	}
	return b
}

// Produce sends statuses to Topic through produce.py, in order.
func Produce(t testing.TB, brokers []string, statuses []Status) {
	t.Helper()
	ProduceWith(t, brokers, statuses, nil)
}

// ProduceWith is Produce with more librdkafka settings, such as
// security.protocol and sasl.username, to reach a cluster that asks for a
// login or TLS.
func ProduceWith(t testing.TB, brokers []string, statuses []Status, settings map[string]string) {
	t.Helper()
	py := pytest.Kafka(t)
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, s := range statuses {
		require.NoError(t, enc.Encode(s))
	}
	extra, err := json.Marshal(settings)
	require.NoError(t, err)
	_, self, _, _ := runtime.Caller(0)
	cmd := pytest.Command(py, filepath.Join(filepath.Dir(self), "produce.py"), brokers[0], Topic, string(extra))
	cmd.Stdin = &in
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "produce.py: %s", out)
}

// ProduceCopied sends statuses to Topic (in partitions partitions) with a
// franz-go client configured by opts, such as a SASL login: produce.py
// encodes them into a scratch cluster, whose records are copied, each to
// its partition, in order. It reaches clusters librdkafka cannot: kfake
// serves SaslHandshake from version 1 only, and librdkafka needs version 0
// before a SCRAM login.
func ProduceCopied(t testing.TB, brokers []string, partitions int, statuses []Status, opts ...kgo.Opt) {
	t.Helper()
	scratch := Cluster(t, partitions)
	Produce(t, scratch, statuses)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for p, records := range Records(t, scratch) {
		copies := make([]*kgo.Record, len(records))
		for i, r := range records {
			copies[i] = &kgo.Record{Topic: Topic, Partition: p, Key: r.Key, Value: r.Value}
		}
		require.NoError(t, cl.ProduceSync(ctx, copies...).FirstErr(), "partition %d", p)
	}
}

// Workload is a set of statuses to produce and the listed origins they are
// about.
type Workload struct {
	Statuses []Status
	Origins  []revisit.ListedOrigin
}

// Record lists the workload's origins in st (under lister "journaltest").
func (w Workload) Record(t testing.TB, st store.Store) {
	t.Helper()
	ctx := context.Background()
	l, err := st.ListerGetOrCreate(ctx, "journaltest", "")
	require.NoError(t, err)
	origins := slices.Clone(w.Origins)
	for i := range origins {
		origins[i].ListerID = l.ID
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
}

// NewWorkload builds the statuses of visits of origins, starting at base:
// origins named prefix-N, N < singles, have one visit whose created,
// ongoing and final statuses the producer spreads over the partitions by
// key; origins N < singles+multi have visits visits each, all on
// partition N % partitions, in date order, so that any consumer sees
// their final statuses in date order. Every seventh single has no type
// (its origin is listed with one), every fifth status carries the old
// date envelope. Outcomes and snapshots come from seed.
func NewWorkload(prefix string, singles, multi, visits, partitions int, base time.Time, seed uint64) Workload {
	rnd := rand.New(rand.NewPCG(seed, 1))
	finals := []string{"full", "full", "partial", "failed", "not_found"}
	git := "git"
	var w Workload
	n := 0
	visit := func(url string, number int64, at time.Time, typ *string, part *int32) {
		final := finals[rnd.IntN(len(finals))]
		snap := ""
		if final == "full" || final == "partial" {
			snap = fmt.Sprintf("%040x", rnd.IntN(3)) // few snapshots: eventful and uneventful visits
		}
		for i, st := range []string{"created", "ongoing", final} {
			s := Status{Origin: url, Visit: number, Date: at.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano),
				Status: st, Type: typ, Partition: part, LegacyDate: n%5 == 4}
			if st == final {
				s.Snapshot = snap
			}
			w.Statuses = append(w.Statuses, s)
			n++
		}
	}
	for i := range singles + multi {
		url := fmt.Sprintf("https://forge.example/%s-%d", prefix, i)
		w.Origins = append(w.Origins, revisit.ListedOrigin{URL: url, VisitType: git, Enabled: true})
		typ := &git
		if i < singles {
			if i%7 == 6 {
				typ = nil
			}
			visit(url, 1, base.Add(time.Duration(i)*time.Second), typ, nil)
			continue
		}
		p := int32(i % partitions)
		for v := range visits {
			visit(url, int64(v+1), base.Add(time.Duration(v)*time.Hour+time.Duration(i)*time.Second), typ, &p)
		}
	}
	return w
}

// Finals returns the final statuses of w, the visit type of the untyped
// ones filled in from the listed origins.
func (w Workload) Finals() []feedback.VisitStatus {
	var out []feedback.VisitStatus
	for _, s := range w.Statuses {
		if s.RawHex != "" || s.Tombstone || s.Status == "created" || s.Status == "ongoing" {
			continue
		}
		v := s.VisitStatus()
		if v.VisitType == "" {
			for _, o := range w.Origins {
				if o.URL == v.Origin {
					v.VisitType = o.VisitType
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// Outcome is what a status leaves in the visit stats, without the queue
// position (random) and the last scheduled time (not a result's).
type Outcome struct {
	LastVisit, LastSuccessful *time.Time
	LastVisitStatus           *revisit.VisitStatus
	LastSnapshot              []byte
	Offset, Successive        int
}

// Outcomes reads the outcomes of the origins of w from st.
func (w Workload) Outcomes(t testing.TB, st store.Store) map[revisit.OriginKey]Outcome {
	t.Helper()
	keys := make([]revisit.OriginKey, len(w.Origins))
	for i, o := range w.Origins {
		keys[i] = revisit.OriginKey{URL: o.URL, VisitType: o.VisitType}
	}
	rows, err := st.VisitStatsGet(context.Background(), keys)
	require.NoError(t, err)
	out := map[revisit.OriginKey]Outcome{}
	for _, s := range rows {
		if s.LastVisit == nil {
			continue
		}
		out[s.Key()] = Outcome{LastVisit: utc(s.LastVisit), LastSuccessful: utc(s.LastSuccessful),
			LastVisitStatus: s.LastVisitStatus, LastSnapshot: s.LastSnapshot,
			Offset: s.NextPositionOffset, Successive: s.SuccessiveVisits}
	}
	return out
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Expected returns the outcomes of processing every final status of w
// once, in date order, on a fresh SQLite store.
func (w Workload) Expected(t testing.TB) map[revisit.OriginKey]Outcome {
	t.Helper()
	st := teststore.SQLite(t)
	w.Record(t, st)
	finals := w.Finals()
	slices.SortStableFunc(finals, func(a, b feedback.VisitStatus) int { return a.Date.Compare(b.Date) })
	_, err := feedback.Process(context.Background(), st, finals, rand.Float64, feedback.Horizon{})
	require.NoError(t, err)
	return w.Outcomes(t, st)
}

// Committed returns the committed offset of group on each partition of
// Topic (absent: none, or no such group yet).
func Committed(t testing.TB, brokers []string, group string) map[int32]int64 {
	t.Helper()
	adm := admin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offsets, err := adm.FetchOffsets(ctx, group)
	out := map[int32]int64{}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return out
	}
	require.NoError(t, err)
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Topic == Topic && o.Err == nil {
			out[o.Partition] = o.At
		}
	})
	return out
}

// Ends returns the end offset of each partition of Topic.
func Ends(t testing.TB, brokers []string) map[int32]int64 {
	t.Helper()
	adm := admin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, Topic)
	require.NoError(t, err)
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// WaitCommitted waits until group has committed the end of every
// partition of Topic.
func WaitCommitted(t testing.TB, brokers []string, group string, within time.Duration) {
	t.Helper()
	ends := Ends(t, brokers)
	deadline := time.Now().Add(within)
	for {
		committed := Committed(t, brokers, group)
		done := true
		for p, end := range ends {
			if end > 0 && committed[p] != end {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, group %s committed %v of %v", within, group, committed, ends)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Records reads back every record of Topic, by partition, in order.
func Records(t testing.TB, brokers []string) map[int32][]*kgo.Record {
	t.Helper()
	ends := Ends(t, brokers)
	total := 0
	for _, e := range ends {
		total += int(e)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[int32][]*kgo.Record{}
	for n := 0; n < total; {
		f := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %d of %d records", n, total)
		f.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			n++
		})
	}
	return out
}

func admin(t testing.TB, brokers []string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// WaitMembers waits until group has n members, each assigned partitions.
func WaitMembers(t testing.TB, brokers []string, group string, n int, within time.Duration) {
	t.Helper()
	adm := admin(t, brokers)
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		groups, err := adm.DescribeGroups(ctx, group)
		cancel()
		if err == nil {
			if g, ok := groups[group]; ok && g.State == "Stable" && len(g.Members) == n {
				assigned := 0
				for _, m := range g.Members {
					if c, ok := m.Assigned.AsConsumer(); ok && len(c.Topics) > 0 && len(c.Topics[0].Partitions) > 0 {
						assigned++
					}
				}
				if assigned == n {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s has not %d members with partitions after %s (last error: %v)", group, n, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
