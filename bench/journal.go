package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/swhwire"
)

// JournalConfig configures RunJournal.
type JournalConfig struct {
	URL      string
	Origins  int
	Statuses int
	// Batches are the batch sizes to compare, each through both paths.
	Batches []int
	// Partitions is the number of partitions of the topic.
	Partitions int
	Progress   io.Writer
}

// JournalRun is one batch size through both paths, in statuses/s.
type JournalRun struct {
	Batch   int     `json:"batch"`
	Journal float64 `json:"journal_per_s"`
	Ingest  float64 `json:"ingest_per_s"`
}

// Ratio is the journal path's rate over the ingest path's.
func (r JournalRun) Ratio() float64 { return r.Journal / r.Ingest }

// JournalReport is what RunJournal measured.
type JournalReport struct {
	Statuses int          `json:"statuses"`
	Runs     []JournalRun `json:"runs"`
}

// JournalRatio is the target: the journal path processes at least
// 90 % of the statuses a second that visit-status ingest does.
const JournalRatio = 0.9

// RunJournal compares, for each batch size, the journal client reading
// statuses from an in-process Kafka cluster (kfake) with the same number
// of statuses (of the same random origins of the reference data set, as
// bench feedback draws them) through the pipeline of visit-status ingest.
// The messages are produced, encoded as the journal encodes them, before
// the journal's clock starts, which is at its first read of the store:
// joining the group is left out, as a one-off.
func RunJournal(ctx context.Context, cfg JournalConfig) (JournalReport, error) {
	rep := JournalReport{Statuses: cfg.Statuses}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(max(cfg.Partitions, 1)), journal.DefaultPrefix+"."+journal.ObjectType))
	if err != nil {
		return rep, err
	}
	defer cluster.Close()
	rng := rand.New(rand.NewPCG(uint64(se.now.Unix()), 5))
	next := 0
	draw := func() []feedback.VisitStatus {
		statuses := make([]feedback.VisitStatus, cfg.Statuses)
		for i := range statuses {
			statuses[i] = randomStatus(rng, se, next)
			next++
		}
		return statuses
	}
	horizon := feedback.Horizon{Clock: se.clk.Now}
	for i, batch := range cfg.Batches {
		run := JournalRun{Batch: batch}
		if run.Ingest, err = ingestRate(ctx, se, draw(), batch, horizon); err != nil {
			return rep, err
		}
		if err := produce(ctx, cluster.ListenAddrs(), draw()); err != nil {
			return rep, err
		}
		first := &firstCall{session: se}
		c, err := journal.New(first, journal.Config{Brokers: cluster.ListenAddrs(), Group: fmt.Sprintf("revisit.bench.%d", i),
			BatchSize: batch, MaxMessages: cfg.Statuses, Horizon: horizon})
		if err != nil {
			return rep, err
		}
		if err := c.Run(ctx); err != nil {
			return rep, err
		}
		run.Journal = float64(cfg.Statuses) / time.Since(first.at).Seconds()
		rep.Runs = append(rep.Runs, run)
	}
	return rep, nil
}

// ingestRate processes statuses as visit-status ingest does and returns
// the statuses processed a second.
func ingestRate(ctx context.Context, st feedback.Store, statuses []feedback.VisitStatus, batch int, h feedback.Horizon) (float64, error) {
	start := time.Now()
	p := feedback.NewPipeline(ctx, st, feedback.PipelineConfig{Workers: feedback.DefaultWorkers, BatchSize: batch, Horizon: h})
	for _, v := range statuses {
		if err := p.Add(v); err != nil {
			break
		}
	}
	if err := p.Close(); err != nil {
		return 0, err
	}
	return float64(len(statuses)) / time.Since(start).Seconds(), nil
}

// produce writes statuses to the journal's topic, keyed and encoded as
// swh.journal writes them.
func produce(ctx context.Context, brokers []string, statuses []feedback.VisitStatus) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(journal.DefaultPrefix+"."+journal.ObjectType))
	if err != nil {
		return err
	}
	defer cl.Close()
	records := make([]*kgo.Record, 0, 1000)
	flush := func() error {
		err := cl.ProduceSync(ctx, records...).FirstErr()
		records = records[:0]
		return err
	}
	for k, v := range statuses {
		key, value, err := journalMessage(v, int64(k+1))
		if err != nil {
			return err
		}
		records = append(records, &kgo.Record{Key: key, Value: value})
		if len(records) == cap(records) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// journalMessage encodes v as visit number visit of its origin: the key
// and value of its journal message.
func journalMessage(v feedback.VisitStatus, visit int64) (key, value []byte, err error) {
	key, err = swhwire.Encode(map[string]any{"origin": v.Origin, "visit": fmt.Sprint(visit),
		"date": v.Date.UTC().Format("2006-01-02 15:04:05.999999-07:00")})
	if err != nil {
		return nil, nil, err
	}
	var snapshot any
	if v.Snapshot != nil {
		snapshot = v.Snapshot
	}
	value, err = swhwire.Encode(swhwire.Map{{Key: "origin", Value: v.Origin}, {Key: "visit", Value: visit},
		{Key: "date", Value: v.Date}, {Key: "status", Value: v.Status}, {Key: "snapshot", Value: snapshot},
		{Key: "type", Value: v.VisitType}, {Key: "metadata", Value: nil}})
	return key, value, err
}

// firstCall is a journal.Store that notes when it is first read.
type firstCall struct {
	*session
	once sync.Once
	at   time.Time
}

func (f *firstCall) VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	f.once.Do(func() { f.at = time.Now() })
	return f.session.VisitStatsGet(ctx, keys)
}
