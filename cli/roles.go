package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/retention"
	"github.com/revisit-sched/revisit/runner"
	"github.com/revisit-sched/revisit/store"
)

// role is a long-running service of revisit: it runs until ctx is done
// (then returns nil after a clean stop) or it cannot go on (an error).
type role struct {
	name string
	run  func(ctx context.Context) error
}

// runRoles runs roles together until ctx is done or one of them fails; a
// failure stops the others and is returned.
func runRoles(ctx context.Context, roles ...role) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, r := range roles {
		g.Go(func() error {
			if err := r.run(ctx); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// newRegistry returns a private Prometheus registry with the process and Go
// collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// metricsRole serves reg on addr at /metrics, for roles run without
// revisit serve, with the API's /healthz (the process runs) and /readyz
// (st answers).
func metricsRole(addr string, reg *prometheus.Registry, st store.Store) (role, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return role{}, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	health := api.New(api.Config{Store: st})
	mux.Handle("GET /healthz", health)
	mux.Handle("GET /readyz", health)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return role{name: "metrics", run: func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}}, nil
}

// newOrchestrator builds the orchestrator of the configured visit types
// (none: every load-* task type).
func (a *app) newOrchestrator(c config.Config, st store.Store, b broker.Broker, visitTypes []string,
	reg prometheus.Registerer) (*orchestrator.Orchestrator, error) {
	cfg := c.Orchestrator.Config()
	cfg.VisitTypes, cfg.Logger, cfg.Metrics = visitTypes, a.log.With("role", "orchestrator"), orchestrator.NewMetrics(reg)
	cfg.SingleProcess = st.Capabilities().SingleProcess
	return orchestrator.New(st, b, cfg)
}

// listenerRole builds the listener of worker events.
func (a *app) listenerRole(c config.Config, st store.Store, b broker.Broker, reg prometheus.Registerer) role {
	l := listener.New(st, b, listener.Config{Logger: a.log.With("role", "listener"), Metrics: listener.NewMetrics(reg),
		Clock: a.env.Clock, MaxFuture: time.Duration(c.Results.MaxFuture),
		Runs: func(ctx context.Context, events []celery.Event) ([]celery.Event, error) {
			return runner.HandleEvents(ctx, st, events)
		}})
	return role{name: "listener", run: l.Run}
}

// retentionRoles returns the periodic retention of generic tasks when the
// configuration's retention section enables it, else nothing.
func (a *app) retentionRoles(c config.Config, st store.Store) ([]role, error) {
	r := c.Retention
	if !r.Enabled() {
		return nil, nil
	}
	p, err := retention.NewPeriodic(st, retention.Config{OlderThan: time.Duration(r.OlderThan),
		Interval: time.Duration(r.Interval), ArchiveDir: r.ArchiveDir, Encoder: archiveEncoder{},
		Clock: a.env.Clock, Logger: a.log.With("role", "retention")})
	if err != nil {
		return nil, err
	}
	return []role{{name: "retention", run: p.Run}}, nil
}

// rolesCommand is the shape of the commands that run roles: they open the
// store and broker, build their roles, add the metrics endpoint when asked
// and run until interrupted.
func (a *app) runRoleCommand(cmd *cobra.Command, metricsAddr string,
	build func(c config.Config, st store.Store, b broker.Broker, reg *prometheus.Registry) ([]role, error)) (err error) {
	defer func() {
		// A stop requested while starting is a clean stop, as later.
		if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
			err = nil
		}
	}()
	c, err := a.config(cmd)
	if err != nil {
		return err
	}
	st, err := a.openStore(cmd)
	if err != nil {
		return err
	}
	a.adviseOnServer(cmd)
	b, err := a.openBroker(cmd, false)
	if err != nil {
		return err
	}
	reg := newRegistry()
	roles, err := build(c, st, b, reg)
	if err != nil {
		return err
	}
	return a.runWithMetrics(cmd.Context(), metricsAddr, reg, st, roles)
}

// runWithMetrics runs roles, with the metrics endpoint serving reg on
// metricsAddr unless it is "" (and its health routes, of st).
func (a *app) runWithMetrics(ctx context.Context, metricsAddr string, reg *prometheus.Registry, st store.Store,
	roles []role) error {
	if metricsAddr != "" {
		m, err := metricsRole(metricsAddr, reg, st)
		if err != nil {
			return err
		}
		roles = append(roles, m)
		fmt.Fprintf(a.env.Stderr, "revisit: metrics on http://%s/metrics\n", metricsAddr)
	}
	return runRoles(ctx, roles...)
}

func (a *app) scheduleRecurrentCommand() *cobra.Command {
	var (
		visitTypes  []string
		results     bool
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "schedule-recurrent [--visit-type VT]...",
		Short: "Keep every visit type's worker queue full with the origins that most need a visit",
		Long: `Runs the orchestrator (one supervised loop per visit type: every load-* task
type, or those named with --visit-type) until SIGINT or SIGTERM, then finishes
the round in flight within the grace period and exits 0. It exits non-zero
when every loop has failed repeatedly, so that a service manager restarts it.

Several processes may run against one PostgreSQL store: each visit type is
driven by one of them at a time, and another takes over within the lease TTL
when it dies. The embedded SQLite store runs a single orchestrator.

Unless --results=false, the process also listens to worker events and records
visit results (run "revisit listener" separately otherwise). Waits, timeouts
and policy weights come from the orchestrator section of the configuration.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRoleCommand(cmd, metricsAddr, func(c config.Config, st store.Store, b broker.Broker,
				reg *prometheus.Registry) ([]role, error) {
				for _, vt := range visitTypes {
					if err := revisit.ValidateVisitType(vt); err != nil {
						return nil, flagged(err, map[string]string{"visit_type": "--visit-type"})
					}
					if _, err := loadTaskType(cmd.Context(), st, vt); err != nil {
						return nil, fmt.Errorf("--visit-type %s: %w", vt, err)
					}
				}
				o, err := a.newOrchestrator(c, st, b, visitTypes, reg)
				if err != nil {
					return nil, err
				}
				roles := []role{{name: "orchestrator", run: o.Run}}
				if results {
					roles = append(roles, a.listenerRole(c, st, b, reg))
				}
				return roles, nil
			})
		},
	}
	cmd.Flags().StringArrayVar(&visitTypes, "visit-type", nil, "drive this visit `type` only (repeatable; default: every load-* task type)")
	cmd.Flags().BoolVar(&results, "results", true, "also record the results that workers report")
	cmd.Flags().StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDRESS`/metrics")
	return cmd
}

func (a *app) listenerCommand() *cobra.Command {
	var metricsAddr string
	cmd := &cobra.Command{
		Use:   "listener",
		Short: "Record what workers report: visit results and task runs",
		Long: `Consumes worker events (Celery events through RabbitMQ, or the results of the
embedded broker's workers) until SIGINT or SIGTERM: a visit's result updates
its origin's visit stats and closes its in-flight record. Each batch is
acknowledged once recorded, so nothing is lost when the process or the
database stops.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRoleCommand(cmd, metricsAddr, func(c config.Config, st store.Store, b broker.Broker,
				reg *prometheus.Registry) ([]role, error) {
				return []role{a.listenerRole(c, st, b, reg)}, nil
			})
		},
	}
	cmd.Flags().StringVar(&metricsAddr, "metrics-listen", "", "serve Prometheus metrics at http://`ADDRESS`/metrics")
	return cmd
}
