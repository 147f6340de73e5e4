package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/bench"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/store"
)

func (a *app) benchCommand() *cobra.Command {
	var (
		cpuProfile string
		stop       func() error
	)
	b := &cobra.Command{
		Use:   "bench",
		Short: "Measure revisit against the targets of docs/performance.md",
		// The root's hook sets the output format: run it, then start the
		// profile.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := cmd.Root().PersistentPreRunE(cmd, args); err != nil {
				return err
			}
			if cpuProfile == "" {
				return nil
			}
			var err error
			stop, err = startCPUProfile(cpuProfile)
			return err
		},
		PersistentPostRunE: func(*cobra.Command, []string) error {
			if stop == nil {
				return nil
			}
			return stop()
		},
	}
	b.PersistentFlags().StringVar(&cpuProfile, "cpu-profile", "",
		"write a CPU profile of this process over the run to `file` (read it with go tool pprof)")
	b.AddCommand(a.benchStoreCommand(), a.benchFeedbackCommand(), a.benchBrokerCommand(), a.benchOrchestratorCommand(), a.benchListenerCommand(), a.benchAPICommand(), a.benchRPCCommand(),
		a.benchJournalCommand(), a.benchImportCommand(), a.benchDrainCommand())
	return b
}

func (a *app) benchAPICommand() *cobra.Command {
	var (
		clients  int
		duration time.Duration
		console  bool
		only     []string
	)
	cmd := &cobra.Command{
		Use:   "api --server URL [--console]",
		Short: "Time API reads under concurrent clients (P8, or the console's pages with --console: P11) against a running revisit serve",
		Long: `Has --clients clients read, one request at a time each, for --duration:
` + strings.Join(bench.APIGroups()[0].Paths, ", ") + ` (P8, 200 clients,
p99 ≤ 50 ms); with --console, what the console's pages ask (P11, 20
clients): the overview's summary and history (p99 ≤ 100 ms), origins'
pages (p99 ≤ 100 ms), searches by URL prefix and substring (p99 ≤ 200
ms), on the first 1,000 origins the server lists, and the origins page's
views of their visit type, first and second pages (p99 ≤ 100 ms). --only
keeps some groups of reads, to see what they cost alone. Reports the latency
percentiles of each group, and the errors (any answer but 200). Run it
against a server with data (for example after revisit bench store on the
same store), from another machine or on a quiet one: the clients share the
CPU with the server.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.server == "" {
				return usagef("--server URL is required")
			}
			groups := bench.APIGroups()
			var err error
			if console {
				if groups, err = bench.ConsoleGroups(cmd.Context(), a.server, a.token, 1000); err != nil {
					return fmt.Errorf("bench api: %w", err)
				}
				if !cmd.Flags().Changed("clients") {
					clients = bench.ConsoleClients
				}
			}
			if groups, err = onlyGroups(groups, only); err != nil {
				return err
			}
			rep, err := bench.RunAPI(cmd.Context(), bench.APIConfig{Server: a.server, Token: a.token,
				Clients: clients, Duration: duration, Groups: groups})
			if err != nil {
				return fmt.Errorf("bench api: %w", err)
			}
			ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
			rw := a.rows(cols("reads", "clients", "requests", "errors", "p50_ms", "p99_ms", "max_ms",
				"target_p99_ms", "met", "first_error"))
			for _, g := range rep.Groups {
				if err := rw.Row(g.Name, rep.Clients, g.Requests, g.Errors, ms(g.P50), ms(g.P99), ms(g.Max),
					ms(g.Target), g.Met(), g.FirstError); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	cmd.Flags().IntVar(&clients, "clients", bench.APIClients, "concurrent clients (default 200, 20 with --console)")
	cmd.Flags().DurationVar(&duration, "duration", 10*time.Second, "how long the clients read")
	cmd.Flags().BoolVar(&console, "console", false, "time the console's pages (P11) instead of P8's reads")
	cmd.Flags().StringSliceVar(&only, "only", nil, `only these groups of reads, by name ("origins browse", …): to see what one costs alone`)
	return cmd
}

// onlyGroups returns the groups named in only, all of them when only is
// empty; a name that is not a group's is a usage error listing them.
func onlyGroups(groups []bench.APIGroup, only []string) ([]bench.APIGroup, error) {
	if len(only) == 0 {
		return groups, nil
	}
	var out []bench.APIGroup
	for _, name := range only {
		i := slices.IndexFunc(groups, func(g bench.APIGroup) bool { return g.Name == name })
		if i < 0 {
			names := make([]string, len(groups))
			for j, g := range groups {
				names[j] = strconv.Quote(g.Name)
			}
			return nil, usagef("--only: no group of reads %q (%s)", name, strings.Join(names, ", "))
		}
		out = append(out, groups[i])
	}
	return out, nil
}

func (a *app) benchRPCCommand() *cobra.Command {
	var (
		size           string
		batches, grabs int
	)
	cmd := &cobra.Command{
		Use:   "rpc",
		Short: "Time the Software Heritage RPC against the direct store path (P9) on the reference data set",
		Long: `Serves the Software Heritage RPC over the store on a loopback port and
measures, on the reference data set (loaded first unless a previous bench
run left it in the store): recording batches of 1000 origins, half new,
through origins/record and directly, in turn (P9 asks the RPC for 80 % of
the direct rate), and grabs of 1000 git origins of every policy through
origins/grab_next and directly (P9 asks the RPC for a p50 of 15 ms). The
RPC's times include the client's encoding of its requests, not its
decoding of the answers (the Python client spends its own). Use an
empty store: the run adds origins and marks visits.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			a.adviseOnServer(cmd)
			rep, err := bench.RunRPC(cmd.Context(), bench.RPCConfig{URL: url, Origins: n,
				RecordBatches: batches, Grabs: grabs, Progress: a.progressWriter()})
			if err != nil {
				return fmt.Errorf("bench rpc: %w", err)
			}
			rw := a.rows(cols("measure", "calls", "returned", "rpc", "direct", "target", "met"))
			ratio := rep.RecordRatio()
			if err := rw.Row("record 1000-origin batches, half new (origins/s)", batches, batches*1000,
				math.Round(rep.RecordRPC), math.Round(rep.RecordDirect),
				fmt.Sprintf("P9 ≥ %.0f %% of direct: %.0f %%", 100*bench.RPCRecordRatio, 100*ratio),
				ratio >= bench.RPCRecordRatio); err != nil {
				return err
			}
			for i, l := range rep.GrabsRPC {
				d := rep.GrabsDirect[i]
				if err := rw.Row("grab p50 ms: "+l.Case, l.Calls, l.Returned, ms(l.P50), ms(d.P50),
					fmt.Sprintf("P9 ≤ %g ms", ms(bench.RPCGrabTarget)), l.P50 <= bench.RPCGrabTarget); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "origins", "1M", "data set `size`: 1M, 10M, or any count")
	f.IntVar(&batches, "record-batches", 100, "batches of 1000 origins recorded through each path")
	f.IntVar(&grabs, "grabs", 30, "grabs of 1000 timed per policy through each path")
	return cmd
}

func (a *app) benchFeedbackCommand() *cobra.Command {
	var (
		size                       string
		statuses, batches, workers int
	)
	cmd := &cobra.Command{
		Use:   "feedback",
		Short: "Time visit-status processing (results → visit stats, P4) on the reference data set",
		Long: `Processes visit statuses of random origins of the reference data set
(loaded first unless a previous bench run left it in the store) in batches,
through the same processing as revisit visit-status ingest, and reports
statuses per second. --workers batches are processed at once, as
revisit visit-status ingest does by default and concurrent API requests do.
Beside the rate, what a status cost the database: the server's processor
time when it runs on this host (db_cpu_us) and the bytes written to its
write-ahead log (wal_bytes, PostgreSQL); measure on an idle server.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if statuses <= 0 || batches <= 0 || workers <= 0 {
				return usagef("--statuses, --batch and --workers must be positive")
			}
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			progress := a.progressWriter()
			a.adviseOnServer(cmd)
			rep, err := bench.RunFeedback(cmd.Context(), bench.FeedbackConfig{URL: url, Origins: n,
				Statuses: statuses, Batch: batches, Workers: workers, Progress: progress})
			if err != nil {
				return fmt.Errorf("bench feedback: %w", err)
			}
			rw := a.rows(cols("statuses", "workers", "stats_changed", "ignored", "disabled", "statuses_per_s", "target_per_s", "met",
				"db_cpu_us", "wal_bytes"))
			if err := rw.Row(append([]any{rep.Statuses, rep.Workers, rep.Changed, rep.Ignored, rep.Disabled, math.Round(rep.PerSecond),
				bench.FeedbackTarget, rep.PerSecond >= bench.FeedbackTarget}, costCells(rep.Cost)...)...); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "origins", "1M", "data set `size`: 1M, 10M, or any count")
	f.IntVar(&statuses, "statuses", 200_000, "visit statuses to process")
	f.IntVar(&batches, "batch", 1000, "statuses per batch")
	f.IntVar(&workers, "workers", feedback.DefaultWorkers, "batches processed at once (1: one after the other)")
	return cmd
}

func (a *app) benchBrokerCommand() *cobra.Command {
	var (
		messages, batch, queues int
		queueArgs               []string
	)
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Time publishing visit messages with confirms to the configured broker",
		Long: `Publishes visit messages, encoded as the orchestrator encodes them, in
batches with publisher confirms, into a scratch durable queue that is
deleted afterwards, and checks that the queue holds every confirmed one.
With the embedded broker, this measures confirmed writes into the store.

--queues N publishes to N scratch queues at once, one publisher each, as
the orchestrator's loops publish for their visit types (the messages are
split evenly; the rate is their total over the wall time).

--queue-arg declares the RabbitMQ scratch queue with an argument, to try
what a policy would set on the workers' queues, e.g.
--queue-arg x-queue-mode=lazy --queue-arg x-queue-version=2 (integers are
sent as int32).`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if messages <= 0 || batch <= 0 || queues <= 0 {
				return usagef("--messages, --batch and --queues must be positive")
			}
			args, err := parseQueueArgs(queueArgs)
			if err != nil {
				return err
			}
			sb, err := a.scratchBroker(cmd)
			if err != nil {
				return err
			}
			progress := a.progressWriter()
			rep, err := bench.RunBroker(cmd.Context(), bench.BrokerConfig{Broker: sb, Messages: messages,
				Batch: batch, Queues: queues, QueueArgs: args, Progress: progress})
			if err != nil {
				return fmt.Errorf("bench broker: %w", err)
			}
			rw := a.rows(cols(append([]string{"messages", "queues", "confirmed", "returned", "failed", "queue_depth_after",
				"confirmed_per_s", "target_per_s", "met"}, cpuColumns...)...))
			if err := rw.Row(append([]any{rep.Messages, rep.Queues, rep.Confirmed, rep.Returned, rep.Failed, rep.Depth,
				math.Round(rep.PerSecond), bench.PublishTarget, rep.PerSecond >= bench.PublishTarget},
				cpuCells(rep.CPU)...)...); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	cmd.Flags().IntVar(&messages, "messages", 200_000, "messages to publish")
	cmd.Flags().IntVar(&batch, "batch", 1000, "messages per publish call")
	cmd.Flags().IntVar(&queues, "queues", 1, "scratch queues published to at once, one publisher each")
	cmd.Flags().StringArrayVar(&queueArgs, "queue-arg", nil, "scratch queue argument `KEY=VALUE` (RabbitMQ; repeatable)")
	return cmd
}

func (a *app) benchOrchestratorCommand() *cobra.Command {
	var (
		size           string
		visits, perRnd int
	)
	cmd := &cobra.Command{
		Use:   "orchestrator",
		Short: "Time the orchestrator end to end: grab, mark, in-flight records, publish with confirms (P2, P5)",
		Long: `Loads the reference data set into the store (unless a previous run left it
there), points load-git at a scratch durable queue of the configured broker,
and runs the real orchestrator on git until --visits visits are published
with confirms, sampling this process's memory. The scratch queue is deleted
afterwards. A later run first ends, untimed, the visits an earlier run left
in flight (expired, then forgotten), so that each run starts with nothing in
flight.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if visits <= 0 || perRnd <= 0 {
				return usagef("--visits and --max-per-round must be positive")
			}
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			sb, err := a.scratchBroker(cmd)
			if err != nil {
				return err
			}
			progress := a.progressWriter()
			a.adviseOnServer(cmd)
			rep, err := bench.RunOrchestrator(cmd.Context(), bench.OrchestratorConfig{URL: c.Store, Origins: n,
				Broker: sb, Visits: visits, MaxPerRound: perRnd, Progress: progress})
			if err != nil {
				return fmt.Errorf("bench orchestrator: %w", err)
			}
			rw := a.rows(cols(append([]string{"origins", "visits", "seconds", "visits_per_s", "target_per_s", "met",
				"rss_start_mib", "rss_max_mib", "rss_end_mib", "rss_target_mib", "queue_depth_after"}, cpuColumns...)...))
			if err := rw.Row(append([]any{rep.Origins, rep.Visits, math.Round(rep.Seconds*10) / 10, math.Round(rep.PerSecond),
				bench.OrchestratorTarget, rep.PerSecond >= bench.OrchestratorTarget,
				math.Round(rep.RSSStartMiB), math.Round(rep.RSSMaxMiB), math.Round(rep.RSSEndMiB),
				bench.RSSTargetMiB, rep.Depth}, cpuCells(rep.CPU)...)...); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	cmd.Flags().StringVar(&size, "origins", "1M", "data set size: 1M, 10M, or any count")
	cmd.Flags().IntVar(&visits, "visits", 1_000_000, "visits to publish")
	cmd.Flags().IntVar(&perRnd, "max-per-round", 10_000, "visits per round at most")
	return cmd
}

func (a *app) benchDrainCommand() *cobra.Command {
	var (
		size           string
		workers, queue int
		rate           float64
		seconds        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "drain",
		Short: "Measure how long workers find the queue empty while origins are due (issue 53)",
		Long: `Loads the reference data set into the store (unless a previous run left it
there; every origin is due), points load-git at a scratch queue of the
embedded broker over the store, bounded to --queue messages, and runs the
real orchestrator with its default waits. Once the queue is full, --workers
workers take its visits one at a time, together at --rate visits a second,
for --duration; the figure is the fraction of their time they found the
queue empty.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if workers <= 0 || queue <= 0 || rate <= 0 || seconds <= 0 {
				return usagef("--workers, --queue, --rate and --duration must be positive")
			}
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			a.adviseOnServer(cmd)
			rep, err := bench.RunDrain(cmd.Context(), bench.DrainConfig{URL: c.Store, Origins: n, Workers: workers,
				Rate: rate, QueueLength: queue, Duration: seconds, Progress: a.progressWriter()})
			if err != nil {
				return fmt.Errorf("bench drain: %w", err)
			}
			rw := a.rows(cols("workers", "rate_per_s", "queue_length", "seconds", "visits", "visits_per_s", "rounds",
				"idle_percent", "target_percent", "met"))
			if err := rw.Row(rep.Workers, rep.Rate, rep.Queue, math.Round(rep.Seconds*10)/10, rep.Visits,
				math.Round(rep.PerSecond), rep.Rounds, math.Round(rep.Idle*10000)/100, bench.DrainTarget*100,
				rep.Idle <= bench.DrainTarget); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	cmd.Flags().StringVar(&size, "origins", "100000", "data set size: 1M, 10M, or any count")
	cmd.Flags().IntVar(&workers, "workers", 25, "workers taking visits")
	cmd.Flags().Float64Var(&rate, "rate", 500, "visits a second the workers take together")
	cmd.Flags().IntVar(&queue, "queue", 1000, "the queue's length limit (load-git's max_queue_length)")
	cmd.Flags().DurationVar(&seconds, "duration", time.Minute, "how long the workers work")
	return cmd
}

func (a *app) benchListenerCommand() *cobra.Command {
	var (
		size   string
		visits int
	)
	cmd := &cobra.Command{
		Use:   "listener",
		Short: "Time visit results from Celery workers' events to closed visits and updated stats",
		Long: `Loads the reference data set into the store (unless a previous run left it
there), dispatches --visits git visits (untimed), then publishes for each
the events a Celery worker sends (task-received, task-started,
task-succeeded with an eventful result) to a scratch events exchange of
the configured RabbitMQ, while the listener of revisit listener consumes
them, until every visit is closed. The scratch exchange and queue are
deleted afterwards.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if visits <= 0 {
				return usagef("--visits: must be positive, not %d", visits)
			}
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(c.Broker, "amqp://") && !strings.HasPrefix(c.Broker, "amqps://") {
				return usagef("--broker: the listener reads Celery events from RabbitMQ: want an amqp:// URL, not %q", c.Broker)
			}
			a.adviseOnServer(cmd)
			rep, err := bench.RunListener(cmd.Context(), bench.ListenerConfig{URL: c.Store, Origins: n,
				BrokerURL: c.Broker, Visits: visits, Progress: a.progressWriter()})
			if err != nil {
				return fmt.Errorf("bench listener: %w", err)
			}
			rw := a.rows(cols(append([]string{"origins", "visits", "events", "seconds", "results_per_s"}, cpuColumns...)...))
			if err := rw.Row(append([]any{rep.Origins, rep.Visits, rep.Events, math.Round(rep.Seconds*100) / 100,
				math.Round(rep.PerSecond)}, cpuCells(rep.CPU)...)...); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	cmd.Flags().StringVar(&size, "origins", "1M", "data set size: 1M, 10M, or any count")
	cmd.Flags().IntVar(&visits, "visits", 100_000, "visits dispatched, then reported done")
	return cmd
}

// parseQueueArgs parses KEY=VALUE queue arguments; integer values become
// int32, as RabbitMQ expects them.
func parseQueueArgs(kvs []string) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	args := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--queue-arg %q: want KEY=VALUE", kv)
		}
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			args[k] = int32(n)
		} else {
			args[k] = v
		}
	}
	return args, nil
}

func (a *app) benchStoreCommand() *cobra.Command {
	var (
		size, baselinePath             string
		grabs, count, batches, writers int
	)
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Load the reference data set and time grab_next_visits (P1, P6) and recording (P3)",
		Long: `Loads the reference data set of docs/performance.md into the store
(deterministic; a later run on the same store reuses it), then times
grab_next_visits (select and mark, committed) for every visit type and
policy, and recording batches of 1000 origins, half new, half updates.
Use an empty store: the run adds origins and marks visits.

Beside the rates, what the load and the recording cost the database per
origin: the server's processor time when it runs on this host (db_cpu_us)
and the bytes written to its write-ahead log (wal_bytes, PostgreSQL); both
count all the server does meanwhile, so measure on an idle server. Beside
each grab's latency, what a grab cost the server (db_cpu_us) and this
process (revisit_cpu_us) in processor time, and how many of the machine's
processors were busy meanwhile (cores_busy): over the timed calls, or,
for the grabs back to back, over their whole run, which then also holds
what the store does beside them (PostgreSQL moves each grab's picks to
its pending table). A cores_busy close to the machine's count says that
the grabs waited for processors. Then the disk space of every table and
index once the data set is loaded, in all and per origin.

With --baseline, the JSON output (--format json) of a run on a smaller
set, it also reports P1g: how much each case's grab p50 grew from there
(run the 1M set first, then the 10M set with its output as the baseline).
Cases that ran short of eligible origins in either run are left out.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if writers <= 0 {
				return usagef("--record-writers: must be positive, not %d", writers)
			}
			var baseline grabBaseline
			if baselinePath != "" {
				if baseline, err = readGrabBaseline(baselinePath); err != nil {
					return err
				}
			}
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			progress := a.progressWriter()
			a.adviseOnServer(cmd)
			rep, err := bench.RunStore(cmd.Context(), bench.StoreConfig{URL: url, Origins: n, Grabs: grabs,
				Count: count, RecordBatches: batches, RecordWriters: writers, Progress: progress})
			if err != nil {
				return fmt.Errorf("bench store: %w", err)
			}
			caps, err := store.CapabilitiesOf(url)
			if err != nil {
				return err
			}
			target := bench.GrabTargetFor(caps)
			rw := a.rows(cols("measure", "calls", "returned", "p50_ms", "p99_ms", "max_ms", "target", "met",
				"db_cpu_us", "wal_bytes", "revisit_cpu_us", "cores_busy", "bytes", "bytes_per_origin"))
			for _, l := range rep.Grabs {
				// The target is for select and mark in the steady state.
				measure, name, met := "grab "+l.Case, target.Name, any(target.Met(l))
				switch l.Mode {
				case bench.SelectOnly:
					measure, name, met = "select only: "+l.Case, "", ""
				case bench.BackToBack:
					measure, name, met = fmt.Sprintf("grab, no results between (%d resumed): %s", l.Resumed, l.Case), "", ""
				}
				if err := rw.Row(measure, l.Calls, l.Returned, ms(l.P50), ms(l.P99), ms(l.Max), name, met,
					math.Round(l.CPU.PostgresMicros), "", math.Round(l.CPU.RevisitMicros), math.Round(l.BusyCores*100)/100,
					"", ""); err != nil {
					return err
				}
			}
			for _, l := range rep.Grabs {
				growth, ok := baseline.growth(l)
				if !ok {
					continue
				}
				if err := rw.Row("growth from the baseline: grab "+l.Case, l.Calls, l.Returned, ms(l.P50), "", "",
					fmt.Sprintf("P1g %.2f×", growth), growth <= bench.GrowthTarget, "", "", "", "", "", ""); err != nil {
					return err
				}
			}
			if rep.Loaded {
				if err := rw.Row(append([]any{fmt.Sprintf("load %d origins (origins/s; the database's cost per origin)", rep.Origins),
					1, rep.Origins, "", "", "", fmt.Sprintf("%.0f/s", rep.LoadPS), ""}, costCells(rep.LoadCost, "", "", "", "")...)...); err != nil {
					return err
				}
			}
			measure := "record 1000-origin batches, half new (origins/s)"
			if writers > 1 {
				measure = fmt.Sprintf("record 1000-origin batches, half new, %d at once (origins/s)", writers)
			}
			if err := rw.Row(append([]any{measure, batches, batches * 1000, "", "", "", fmt.Sprintf("P3 %.0f/s", rep.RecordPS),
				rep.RecordPS >= bench.RecordTarget}, costCells(rep.RecordCost, "", "", "", "")...)...); err != nil {
				return err
			}
			if rep.IndexPS > 0 {
				if err := rw.Row("then index their new URLs for search (URLs/s)", "", "", "", "", "",
					fmt.Sprintf("%.0f/s", rep.IndexPS), "", "", "", "", "", "", ""); err != nil {
					return err
				}
				if err := rw.Row(append([]any{"record and index, in all (origins/s)", batches, batches * 1000, "", "", "",
					fmt.Sprintf("%.0f/s", rep.RecordIndexedPS), ""}, costCells(rep.RecordIndexedCost, "", "", "", "")...)...); err != nil {
					return err
				}
			}
			if len(rep.Footprint) > 0 {
				var all int64
				for _, r := range rep.Footprint {
					all += r.Bytes
				}
				if err := rw.Row("footprint: all tables and indexes", "", "", "", "", "", "", "", "", "", "", "",
					all, math.Round(float64(all)/float64(rep.Origins)*10)/10); err != nil {
					return err
				}
			}
			for _, r := range rep.Footprint {
				what := "table"
				if r.Index {
					what = "index on " + r.Table
				}
				if err := rw.Row(fmt.Sprintf("footprint: %s (%s)", r.Name, what), "", "", "", "", "", "", "", "", "", "", "",
					r.Bytes, math.Round(r.PerOrigin*10)/10); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "origins", "1M", "data set `size`: 1M, 10M, or any count (250k, 5000)")
	f.IntVar(&grabs, "grabs", 30, "grabs timed per visit type and policy")
	f.IntVar(&count, "count", 1000, "origins per grab")
	f.IntVar(&batches, "record-batches", 100, "batches of 1000 origins timed for P3")
	f.IntVar(&writers, "record-writers", 1, "P3 batches recorded at once, as origin record --writers does")
	f.StringVar(&baselinePath, "baseline", "", "JSON output of a run on a smaller set (`file`): report P1g against it")
	return cmd
}

// grabBaseline holds, by case ("git oldest_scheduled_first"), the grabs of
// an earlier bench store run.
type grabBaseline map[string]baselineGrabs

// baselineGrabs is a case's line of an earlier run: origins returned per
// call, and p50 in ms.
type baselineGrabs struct{ returned, p50 float64 }

// readGrabBaseline reads the grab rows of the JSON output of an earlier
// bench store run.
func readGrabBaseline(path string) (grabBaseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("--baseline %s: not the JSON output of revisit bench store --format json: %v", path, err)
	}
	base := grabBaseline{}
	for i, r := range rows {
		measure, _ := r["measure"].(string)
		c, ok := strings.CutPrefix(measure, "grab ")
		if !ok {
			continue
		}
		returned, ok1 := r["returned"].(float64)
		p50, ok2 := r["p50_ms"].(float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("--baseline %s: row %d (%s): returned and p50_ms must be numbers", path, i+1, measure)
		}
		base[c] = baselineGrabs{returned, p50}
	}
	if len(base) == 0 {
		return nil, fmt.Errorf("--baseline %s: no grab rows: not the output of revisit bench store --format json", path)
	}
	return base, nil
}

// growth returns how many times l's p50 is the baseline's for the same case:
// not ok when l is not a timed grab of the steady state, or when either run
// of the case fell short of its count (it then proves nothing, as for P1).
func (b grabBaseline) growth(l bench.Latency) (float64, bool) {
	base, ok := b[l.Case]
	if !ok || l.Mode != bench.Visited || l.Returned < l.Count || base.returned < float64(l.Count) || base.p50 <= 0 {
		return 0, false
	}
	return ms(l.P50) / base.p50, true
}

// ms returns a duration in milliseconds, rounded to two decimals.
func ms(d time.Duration) float64 { return math.Round(d.Seconds()*100_000) / 100 }

// scratchBroker opens the configured broker for a benchmark that publishes
// into a scratch queue and deletes it afterwards.
func (a *app) scratchBroker(cmd *cobra.Command) (bench.ScratchBroker, error) {
	b, err := a.openBroker(cmd, false)
	if err != nil {
		return nil, err
	}
	sb, ok := b.(bench.ScratchBroker)
	if !ok {
		return nil, errors.New("this broker cannot delete a scratch queue")
	}
	return sb, nil
}

// progressWriter is where benchmarks report progress: standard error on a
// terminal, nowhere otherwise.
func (a *app) progressWriter() io.Writer {
	if a.stderrIsTerminal() {
		return a.env.Stderr
	}
	return nil
}

// costCells renders what an operation cost the database per unit of work
// (db_cpu_us and wal_bytes, whole), then the cells after.
func costCells(c bench.DBCost, after ...any) []any {
	return append([]any{math.Round(c.CPUMicros), math.Round(c.WALBytes)}, after...)
}

// cpuColumns name the cells of cpuCells.
var cpuColumns = []string{"revisit_cpu_us", "postgres_cpu_us", "rabbitmq_cpu_us"}

// cpuCells renders a bench's processor time per unit of work, in whole µs.
func cpuCells(c bench.CPU) []any {
	return []any{math.Round(c.RevisitMicros), math.Round(c.PostgresMicros), math.Round(c.RabbitMQMicros)}
}

func (a *app) benchJournalCommand() *cobra.Command {
	var (
		size       string
		statuses   int
		batches    []int
		partitions int
	)
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Time the journal client (Kafka → visit stats) against visit-status ingest on the reference data set",
		Long: `For each --batch size, processes --statuses visit statuses of random origins
of the reference data set (loaded first unless a previous bench run left it
in the store) through the pipeline of revisit visit-status ingest, then as
many others through the journal client, read from an in-process Kafka
cluster (kfake) where they were produced beforehand, encoded as the
Software Heritage journal encodes them. The journal path is asked for at
least 90 % of the ingest path's statuses a second.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bench.ParseSize(size)
			if err != nil {
				return usageError{err}
			}
			if statuses <= 0 || partitions <= 0 || len(batches) == 0 || slices.Min(batches) <= 0 {
				return usagef("--statuses, --batch and --partitions must be positive")
			}
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			a.adviseOnServer(cmd)
			rep, err := bench.RunJournal(cmd.Context(), bench.JournalConfig{URL: url, Origins: n, Statuses: statuses,
				Batches: batches, Partitions: partitions, Progress: a.progressWriter()})
			if err != nil {
				return fmt.Errorf("bench journal: %w", err)
			}
			rw := a.rows(cols("statuses", "batch", "journal_per_s", "ingest_per_s", "target", "met"))
			for _, r := range rep.Runs {
				if err := rw.Row(rep.Statuses, r.Batch, math.Round(r.Journal), math.Round(r.Ingest),
					fmt.Sprintf("≥ %.0f %% of ingest: %.0f %%", 100*bench.JournalRatio, 100*r.Ratio()),
					r.Ratio() >= bench.JournalRatio); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "origins", "1M", "data set `size`: 1M, 10M, or any count")
	f.IntVar(&statuses, "statuses", 200_000, "visit statuses through each path, for each batch size")
	f.IntSliceVar(&batches, "batch", []int{journal.DefaultBatchSize, 1000}, "batch `sizes` to compare")
	f.IntVar(&partitions, "partitions", 4, "partitions of the topic")
	return cmd
}

func (a *app) benchImportCommand() *cobra.Command {
	var (
		source                string
		origins, stats, tasks string
	)
	cmd := &cobra.Command{
		Use:   "import --source postgres://...",
		Short: "Time revisit import swh against a bare COPY of the same tables (P12)",
		Long: `Builds, in a new schema of the PostgreSQL database --source names (dropped
at the end), an upstream scheduler database of the sizes given (ten
listers, one origin in a hundred listed by two, a run for every other
task), copies its tables with a bare COPY out of it and into tables of the
same shape on the same server (the ceiling), imports it into the store,
changes 1 % of its origins and stats, and catches up. P12 asks the import
for 15 minutes at 10M origins, 6M stats and 1M tasks, the catch-up for a
minute, and 200 MB of memory. Use an empty store.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if source == "" {
				return usagef("--source: missing (a PostgreSQL database to build the upstream database in)")
			}
			var sizes [3]int
			for i, s := range []string{origins, stats, tasks} {
				n, err := bench.ParseSize(s)
				if err != nil {
					return usageError{err}
				}
				sizes[i] = n
			}
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			rep, err := bench.RunImport(cmd.Context(), bench.ImportConfig{Source: source, Store: url, Origins: sizes[0],
				Stats: sizes[1], Tasks: sizes[2], Progress: a.progressWriter()})
			if err != nil {
				return fmt.Errorf("bench import: %w", err)
			}
			rows := int64(rep.Origins + rep.Origins/100 + rep.Stats + rep.Tasks + rep.Runs)
			rw := a.rows(cols("measure", "rows", "seconds", "rows_per_s", "target", "met"))
			for _, r := range []struct {
				what   string
				rows   int64
				took   time.Duration
				target string
				met    any
			}{
				{"bare COPY of the same tables (ceiling)", rows, rep.Copy, "", ""},
				{"import", rows, rep.Import, fmt.Sprintf("P12 ≤ %s; %.1f× the ceiling", bench.ImportTarget,
					rep.Import.Seconds()/rep.Copy.Seconds()), rep.Import <= bench.ImportTarget},
				{"catch-up after 1 % changed", rep.CatchUpRows, rep.CatchUp, fmt.Sprintf("P12 ≤ %s", bench.CatchUpTarget),
					rep.CatchUp <= bench.CatchUpTarget},
				{"peak memory (MB)", 0, 0, fmt.Sprintf("P12 ≤ %d MB: %d MB", bench.ImportRSSTarget>>20, rep.MaxRSS>>20),
					rep.MaxRSS <= bench.ImportRSSTarget},
			} {
				rate := 0.0
				if r.took > 0 {
					rate = math.Round(float64(r.rows) / r.took.Seconds())
				}
				if err := rw.Row(r.what, r.rows, math.Round(r.took.Seconds()*10)/10, rate, r.target, r.met); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "PostgreSQL `URL` of a database to build the upstream database in (a schema of its own)")
	f.StringVar(&origins, "origins", "10M", "listed origins of the upstream database")
	f.StringVar(&stats, "stats", "6M", "visit stats of the upstream database")
	f.StringVar(&tasks, "tasks", "1M", "tasks of the upstream database")
	return cmd
}
