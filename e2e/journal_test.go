package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/journaltest"
	"github.com/revisit-sched/revisit/journal"
)

// TestJournalKillNine kills revisit journal-client (kill -9) in the middle
// of its batches, checks that every final status below a committed offset
// is in the visit stats (no commit ran ahead of a write), restarts it, and
// checks that the stats end as those of processing each status once in
// date order; then SIGTERM stops it cleanly.
func TestJournalKillNine(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			st, storeURL := embeddedStore(t, engine)
			brokers := journaltest.Cluster(t, 4)
			w := journaltest.NewWorkload("kill", 600, 100, 5, 4, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), 7)
			w.Record(t, st)
			journaltest.Produce(t, brokers, w.Statuses)
			cfg := filepath.Join(t.TempDir(), "revisit.yaml")
			require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "store: %q\njournal:\n  brokers: [%s]\n  batch_size: 10\n",
				storeURL, strings.Join(brokers, ", ")), 0o600))
			total := int64(len(w.Statuses))

			p := startRevisit(t, "--config", cfg, "journal-client")
			celerytest.WaitFor(t, time.Minute, "a first batch committed", func() bool {
				return sum(journaltest.Committed(t, brokers, journal.DefaultGroup)) > 0
			})
			p.kill9(t)
			committed := journaltest.Committed(t, brokers, journal.DefaultGroup)
			t.Logf("killed after %d of %d messages committed", sum(committed), total)
			require.Less(t, sum(committed), total, "the kill came after the end")

			outcomes := w.Outcomes(t, st)
			for partition, records := range journaltest.Records(t, brokers) {
				for _, r := range records[:committed[partition]] {
					m, err := journal.DecodeValue(r.Value)
					require.NoError(t, err)
					if m.Status == "created" || m.Status == "ongoing" {
						continue
					}
					o := outcomes[revisit.OriginKey{URL: m.Origin, VisitType: "git"}]
					require.NotNil(t, o.LastVisit, "partition %d offset %d (%s) committed but not written", partition, r.Offset, m.Origin)
					require.False(t, o.LastVisit.Before(m.Date), "partition %d offset %d (%s) committed but not written",
						partition, r.Offset, m.Origin)
				}
			}

			// The killed member keeps its partitions until its session
			// times out (45 s): the restart waits for that.
			p = startRevisit(t, "--config", cfg, "journal-client")
			journaltest.WaitCommitted(t, brokers, journal.DefaultGroup, 2*time.Minute)
			code, _ := p.interrupt(t, 30*time.Second)
			require.Zero(t, code, "exit code after SIGTERM")
			require.Equal(t, w.Expected(t), w.Outcomes(t, st))
		})
	}
}

func sum(offsets map[int32]int64) int64 {
	var n int64
	for _, o := range offsets {
		n += o
	}
	return n
}
