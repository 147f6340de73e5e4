package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/demo"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/kit/crosssite"
	"github.com/revisit-sched/revisit/internal/kit/headerlimit"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
	"github.com/revisit-sched/revisit/internal/service/urlindex"
	"github.com/revisit-sched/revisit/runner"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhrpc"
	"github.com/revisit-sched/revisit/web"
)

// Timeouts of revisit serve. A response may take a whole long poll
// (api.MaxWaitSeconds) before it is written.
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveReadTimeout       = 30 * time.Second
	serveWriteTimeout      = api.MaxWaitSeconds*time.Second + 30*time.Second
	serveIdleTimeout       = 2 * time.Minute
	serveShutdownTimeout   = 15 * time.Second
)

// typesPoll is how often revisit serve's orchestrator and runner look for
// new task types (and, before the first, wait for one).
const typesPoll = 2 * time.Second

// The roles of revisit serve.
const (
	roleAPI          = "api"
	roleOrchestrator = "orchestrator"
	roleListener     = "listener"
	roleRunner       = "runner"
	roleFirstVisits  = "firstvisits"
	roleRPC          = "rpc"
)

// defaultServeRoles run unless --roles names others; the journal role is
// added when journal.brokers is configured.
var defaultServeRoles = []string{roleAPI, roleOrchestrator, roleListener, roleRunner, roleFirstVisits, roleRPC}

var serveRoleNames = append(slices.Clone(defaultServeRoles), roleJournal)

// rpcPath is where the rpc role serves the Software Heritage RPC: its
// clients' URL is http://host:port/swh/.
const rpcPath = "/swh/"

func (a *app) serveCommand() *cobra.Command {
	var (
		listen    string
		roleNames []string
		demoMode  bool
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDRESS] [--roles api,orchestrator,listener,runner,firstvisits,rpc,journal | --demo]",
		Short: "Run revisit: the HTTP API and dashboard, the Software Heritage RPC, the orchestrator, the task runner, the first visits and the result processing",
		Long: `Runs the whole system in one process until interrupted (SIGINT or SIGTERM,
then it stops gracefully):

  api           the JSON API under /api/v1 (OpenAPI document at
                /api/v1/openapi.json), the dashboard at /, and, with the
                embedded broker, the routes where workers lease visits
  orchestrator  keeps every load-* task type's queue full (it waits for the
                first task type, and restarts when task types are added)
  listener      records the results workers report: visit stats, task runs
  runner        dispatches the due tasks of every task type, load-* ones
                included (priority tasks first), and removes their old history when the retention section
                of the configuration sets older_than
  firstvisits   sends the first visits of the listers that have queues of
                their own for them, once their listing finishes (as
                "revisit first-visits run" does)
  rpc           the Software Heritage scheduler RPC under /swh/, for the
                Python RemoteScheduler (url: http://HOST:PORT/swh/); with
                tokens, the token is the password of the URL
                (http://user:TOKEN@HOST:PORT/swh/)
  journal       folds the visit statuses of the Software Heritage journal
                (Kafka) into the visit stats, as "revisit journal-client"
                does; run by default when journal.brokers is configured

With no configuration it uses the SQLite file revisit.db in the current
directory (created and migrated) and the embedded broker. --config selects
PostgreSQL, RabbitMQ and the api section (listen address, tokens); --roles
runs a subset, so that production can run roles as separate services. Every
process serves /healthz, /readyz and /metrics on the listen address.

--demo shows revisit at work without setting anything up: every default
role on a temporary SQLite store (removed at exit) with the embedded
broker, the example task types, 3,000 origins of the lister "demo" and
simulated workers that visit them through the worker routes. It never
writes into the configured store, broker or journal.

Listening beyond loopback requires API tokens (api.tokens in the
configuration): without them anyone who reaches the port could change the
schedule.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.config(cmd)
			if err != nil {
				return err
			}
			if demoMode {
				if c, err = a.demoConfig(cmd, c); err != nil {
					return err
				}
			}
			if !changed(cmd.Flags(), "roles") && c.Journal.Enabled() {
				roleNames = append(roleNames, roleJournal)
			}
			roles, err := parseRoles(roleNames)
			if err != nil {
				return err
			}
			addr := c.API.Listen
			if changed(cmd.Flags(), "listen") {
				addr = listen
				if _, _, err := net.SplitHostPort(addr); err != nil {
					return usagef("--listen: %q is not host:port (as 127.0.0.1:%s, or :%s for every address)",
						addr, strings.TrimPrefix(addr, ":"), strings.TrimPrefix(addr, ":"))
				}
			}
			if !config.IsLoopback(addr) && len(c.API.Tokens) == 0 {
				return fmt.Errorf("serve: refusing to listen on %s without API tokens: anyone who can reach it could "+
					"read and change the schedule; add tokens to the api.tokens section of the configuration, "+
					"or listen on a loopback address (127.0.0.1:5080)", addr)
			}
			var d *demo.Demo
			if demoMode {
				var stop func()
				if c, d, stop, err = a.startDemo(cmd, c); err != nil {
					return err
				}
				defer stop()
			}
			return a.serve(cmd, c, addr, roles, d)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", config.DefaultAPIListen, "the `address` to listen on (host:port; default: api.listen of the configuration)")
	cmd.Flags().StringSliceVar(&roleNames, "roles", defaultServeRoles, "the `roles` to run, comma-separated: "+
		strings.Join(serveRoleNames, ", ")+" (journal by default when journal.brokers is set)")
	cmd.Flags().BoolVar(&demoMode, "demo", false, "a demonstration: every default role on a temporary store, removed at exit, "+
		"with the example task types, 3,000 origins and simulated workers")
	return cmd
}

// parseRoles checks the role names of --roles.
func parseRoles(names []string) (map[string]bool, error) {
	roles := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(serveRoleNames, n) {
			return nil, usagef("--roles: %q is not one of %s", n, strings.Join(serveRoleNames, ", "))
		}
		roles[n] = true
	}
	if len(roles) == 0 {
		return nil, usagef("--roles: name at least one role")
	}
	return roles, nil
}

// serve runs the selected roles and the HTTP server on addr, and the demo
// d against it unless nil.
func (a *app) serve(cmd *cobra.Command, c config.Config, addr string, selected map[string]bool, d *demo.Demo) error {
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
	apiCfg := api.Config{Store: st, Broker: b, Metrics: reg, Tokens: c.API.Tokens, HealthOnly: !selected[roleAPI],
		Clock: a.env.Clock, MaxFuture: time.Duration(c.Results.MaxFuture), Logger: a.log.With("role", "api")}
	var roles []role
	if selected[roleOrchestrator] {
		o, err := a.newOrchestrator(c, st, b, nil, reg)
		if err != nil {
			return err
		}
		apiCfg.Orchestrator, apiCfg.Live = o, o.Queues()
		roles = append(roles, a.followingRole(roleOrchestrator, o.VisitTypes, o.Run))
	}
	if selected[roleListener] {
		roles = append(roles, a.listenerRole(c, st, b, reg))
	}
	if selected[roleRunner] {
		r, err := runner.New(st, b, runner.Config{Logger: a.log.With("role", "runner"), Clock: a.env.Clock,
			Metrics: runner.NewMetrics(reg)})
		if err != nil {
			return err
		}
		roles = append(roles, a.followingRole(roleRunner, r.TaskTypes, r.Run))
		ret, err := a.retentionRoles(c, st)
		if err != nil {
			return err
		}
		roles = append(roles, ret...)
	}
	if selected[roleFirstVisits] {
		f, err := a.newFirstVisits(c, st, b, 0)
		if err != nil {
			return err
		}
		roles = append(roles, role{name: roleFirstVisits, run: f.Run})
	}
	if selected[roleJournal] {
		jc, err := a.newJournalConsumer(c, st, reg, 0)
		if err != nil {
			return err
		}
		apiCfg.Checks = map[string]func(context.Context) error{roleJournal: jc.Ready}
		apiCfg.Journal = jc
		roles = append(roles, role{name: roleJournal, run: jc.Run})
	}
	if selected[roleAPI] {
		if apiCfg.Live == nil {
			apiCfg.Live = livequeue.New(st, b, a.env.Clock)
		}
		hist := history.New(history.Config{Store: st, Metrics: reg, Queues: apiCfg.Live.Queues, Clock: a.env.Clock,
			Logger: a.log.With("role", roleAPI)})
		apiCfg.History = hist
		roles = append(roles, role{name: "history", run: hist.Run})
	}
	// Whatever its roles, a server indexes the URLs recordings listed for
	// the first time: a fleet that serves no search still keeps the
	// backlog empty.
	if ix, ok := st.(store.URLIndexer); ok {
		roles = append(roles, role{name: "url-index", run: func(ctx context.Context) error {
			return urlindex.Run(ctx, ix, urlindex.Config{Logger: a.log.With("role", "url-index")})
		}})
	}
	if q, ok := b.(*embedded.Broker); ok && selected[roleAPI] {
		apiCfg.Queues = q
	} else if selected[roleAPI] {
		a.log.Warn("the broker is RabbitMQ: the worker routes of the embedded broker are not served")
	}
	handler := api.New(apiCfg)
	var h http.Handler = handler
	if selected[roleAPI] {
		notice := ""
		if d != nil {
			notice = demo.Notice
		}
		h = web.Handler(handler, notice)
	}
	if selected[roleRPC] {
		mux := http.NewServeMux()
		mux.Handle(rpcPath, http.StripPrefix(strings.TrimSuffix(rpcPath, "/"), swhrpc.New(swhrpc.Config{
			Store: st, Tokens: c.API.Tokens, Clock: a.env.Clock, Logger: a.log.With("role", roleRPC)})))
		mux.Handle("/", h)
		h = mux
	}
	h = headerlimit.Handler(headerlimit.DefaultMax,
		crosssite.Handler(crosssite.Config{Hosts: c.API.Hosts, Loopback: config.IsLoopback(addr)}, h))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: serveReadHeaderTimeout,
		ReadTimeout: serveReadTimeout, WriteTimeout: serveWriteTimeout, IdleTimeout: serveIdleTimeout}
	roles = append(roles, role{name: "http", run: func(ctx context.Context) error {
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
		}
		handler.Drain()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}})
	if d != nil {
		base := "http://" + ln.Addr().String()
		roles = append(roles, role{name: "demo", run: func(ctx context.Context) error { return d.Run(ctx, base) }})
	}
	what := "health and metrics"
	if selected[roleAPI] {
		what = "dashboard"
	}
	fmt.Fprintf(a.env.Stderr, "revisit: %s at http://%s/\n", what, ln.Addr())
	if selected[roleRPC] {
		fmt.Fprintf(a.env.Stderr, "revisit: Software Heritage RPC at http://%s%s\n", ln.Addr(), rpcPath)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = runRoles(ctx, roles...)
	a.log.Info("stopped")
	return err
}

// followingRole runs a service over the types kinds returns: it waits for
// the first one, and restarts the service (after its graceful stop) when
// the set changes, so that task types added while revisit serve runs are
// driven without a restart.
func (a *app) followingRole(name string, kinds func(context.Context) ([]string, error), run func(context.Context) error) role {
	return role{name: name, run: func(ctx context.Context) error {
		for {
			types, ok := a.waitTypes(ctx, name, kinds)
			if !ok {
				return nil
			}
			runCtx, cancel := context.WithCancel(ctx)
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				watchTypes(runCtx, kinds, types, cancel)
			}()
			err := run(runCtx)
			cancel()
			<-watched
			if err != nil || ctx.Err() != nil {
				return err
			}
			a.log.Info("the task types changed: restarting", "role", name)
		}
	}}
}

// waitTypes returns the types to drive once there is one; false when ctx
// ended first.
func (a *app) waitTypes(ctx context.Context, name string, kinds func(context.Context) ([]string, error)) ([]string, bool) {
	said := ""
	for {
		types, err := kinds(ctx)
		if err == nil {
			return types, true
		}
		if err.Error() != said {
			said = err.Error()
			a.log.Info("waiting", "role", name, "reason", said, "retry", typesPoll)
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(typesPoll):
		}
	}
}

// watchTypes calls changed when the types to drive are no longer types, or
// returns when ctx ends.
func watchTypes(ctx context.Context, kinds func(context.Context) ([]string, error), types []string, changed func()) {
	t := time.NewTicker(typesPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := kinds(ctx)
		if err == nil && !slices.Equal(now, types) {
			changed()
			return
		}
	}
}
