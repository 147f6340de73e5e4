package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
)

// OrchestratorConfig configures RunOrchestrator.
type OrchestratorConfig struct {
	// URL is the store; the reference data set of Origins origins is
	// loaded unless a previous run left it there.
	URL     string
	Origins int
	// Broker receives the visits, in a scratch queue deleted afterwards.
	Broker ScratchBroker
	// Visits is how many visits to publish before stopping.
	Visits int
	// MaxPerRound caps the visits of one round.
	MaxPerRound int
	Progress    io.Writer
}

// OrchestratorReport is what RunOrchestrator measured.
type OrchestratorReport struct {
	URL       string  `json:"store"`
	Origins   int     `json:"origins"`
	Visits    int64   `json:"visits"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"visits_per_s"`
	// RSS of the process, in MiB: after the data set was opened, the
	// highest sample while publishing, and the last one.
	RSSStartMiB float64 `json:"rss_start_mib"`
	RSSMaxMiB   float64 `json:"rss_max_mib"`
	RSSEndMiB   float64 `json:"rss_end_mib"`
	// Depth is the scratch queue's depth at the end: the published visits.
	Depth int64 `json:"queue_depth_after"`
	// CPU is the processor time per visit published.
	CPU CPU `json:"cpu_per_visit"`
}

// The orchestrator's targets (issue 4): P2 and P5.
const (
	OrchestratorTarget = 20_000
	RSSTargetMiB       = 150
)

// RunOrchestrator drives git visits of the reference data set through the
// real orchestrator (grab, mark, in-flight records, publish with confirms)
// into a scratch queue until cfg.Visits are published, sampling the
// process's memory as it goes (P2, P5).
func RunOrchestrator(ctx context.Context, cfg OrchestratorConfig) (OrchestratorReport, error) {
	rep := OrchestratorReport{URL: store.Redact(cfg.URL), Origins: cfg.Origins}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()

	queue := "revisit.bench." + uuid.NewString()[:8]
	if d, ok := cfg.Broker.(queueDeclarer); ok {
		if err := d.DeclareQueue(ctx, queue); err != nil {
			return rep, err
		}
	}
	defer cfg.Broker.DeleteQueue(context.WithoutCancel(ctx), queue)
	// Room for every visit, and more: the queue never counts as full
	// (min_free_ratio), so the figure is the orchestrator's own.
	tt := revisit.TaskType{Type: "load-git", BackendName: queue, MaxQueueLength: 2*cfg.Visits + cfg.MaxPerRound}
	if err := se.prepareGit(ctx, tt); err != nil {
		return rep, err
	}

	reg := prometheus.NewRegistry()
	o, err := orchestrator.New(se, cfg.Broker, orchestrator.Config{VisitTypes: []string{"git"},
		MaxPerRound: cfg.MaxPerRound, RoundJitter: time.Millisecond, NoOriginsBackoff: time.Second,
		Owner: "bench", Metrics: orchestrator.NewMetrics(reg), Clock: se.clk.Now})
	if err != nil {
		return rep, err
	}
	rep.RSSStartMiB = rssMiB()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	cpu := sampleCPU()
	start := time.Now()
	go func() { done <- o.Run(runCtx) }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for rep.Visits < int64(cfg.Visits) {
		select {
		case err := <-done:
			return rep, fmt.Errorf("the orchestrator stopped: %v", err)
		case <-ctx.Done():
			stop()
			<-done
			return rep, ctx.Err()
		case <-tick.C:
		}
		rep.Visits = published(reg)
		rep.RSSMaxMiB = max(rep.RSSMaxMiB, rssMiB())
		progress(cfg.Progress, "%d visits published, %.0f/s, RSS %.0f MiB", rep.Visits,
			float64(rep.Visits)/time.Since(start).Seconds(), rssMiB())
	}
	rep.Seconds = time.Since(start).Seconds()
	stop()
	if err := <-done; err != nil {
		return rep, err
	}
	rep.Visits = published(reg)
	rep.CPU = cpu.per(sampleCPU(), rep.Visits)
	rep.PerSecond = float64(rep.Visits) / rep.Seconds
	rep.RSSEndMiB = rssMiB()
	rep.Depth, err = cfg.Broker.Depth(ctx, queue)
	return rep, err
}

// prepareGit points load-git at tt's queue (creating the task type, or
// replacing it), ends the visits an earlier run left in flight and
// maintains the store, so that every run starts alike.
func (se *session) prepareGit(ctx context.Context, tt revisit.TaskType) error {
	if err := se.TaskTypeCreate(ctx, tt); errors.Is(err, revisit.ErrConflict) {
		if err := se.TaskTypeUpdate(ctx, tt); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if err := forgetVisits(ctx, se, "git"); err != nil {
		return err
	}
	return se.maintain(ctx)
}

// forgetVisits ends, untimed, the visits an earlier run left in flight
// (its queue is gone): they are expired, which gives their origins their
// eligibility back, and forgotten, so that every run starts with nothing
// in flight instead of paying for the previous run's visits in its first
// round. Ending them leaves as many dead rows as the previous run made,
// so the run then maintains the store again.
func forgetVisits(ctx context.Context, s store.Store, visitType string) error {
	if _, err := s.VisitsRecover(ctx, visitType, false); err != nil {
		return err
	}
	end := time.Now().AddDate(100, 0, 0)
	if _, err := s.VisitsExpire(ctx, visitType, end); err != nil {
		return err
	}
	_, err := s.VisitsForgetLost(ctx, visitType, end)
	return err
}

// published reads revisit_visits_published_total from reg.
func published(reg *prometheus.Registry) int64 {
	mfs, _ := reg.Gather()
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "revisit_visits_published_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int64(n)
}

// rssMiB returns the resident set size of this process in MiB (Linux), 0
// when unknown.
func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := bytes.Fields(data)
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return 0
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
}
