package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/demo"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
)

// demoRefusedFlags name real services or change what the demo runs:
// revisit serve --demo refuses them.
var demoRefusedFlags = []string{"store", "broker", "roles"}

// demoConfig returns the configuration of revisit serve --demo: c with its
// store, broker and journal set aside (saying so: the demo writes into
// none of them), for the embedded broker and, until startDemo creates the
// temporary one, no store.
func (a *app) demoConfig(cmd *cobra.Command, c config.Config) (config.Config, error) {
	for _, name := range demoRefusedFlags {
		if changed(cmd.Flags(), name) {
			return c, usagef("--demo and --%s: the demo runs on a temporary store with the embedded broker "+
				"and every default role; drop one of the two", name)
		}
	}
	if len(c.API.Tokens) > 0 && writeToken(c.API.Tokens) == "" {
		return c, errors.New("demo: the demo's workers need a write token among api.tokens")
	}
	if !c.IsDefault("store") {
		a.demoNotice("ignoring the store %s (%s): the demo never writes into it", store.Redact(c.Store), c.Source("store"))
	}
	if c.Broker != config.BrokerEmbedded {
		a.demoNotice("ignoring the broker %s (%s): the demo's workers take their visits from the embedded broker",
			store.Redact(c.Broker), c.Source("broker"))
	}
	if c.Journal.Enabled() {
		a.demoNotice("ignoring journal.brokers: the demo's results come from its own workers")
	}
	c.Store, c.Broker, c.Journal = "", config.BrokerEmbedded, config.Default().Journal
	if len(c.Orchestrator.SchedulingPolicy) > 0 {
		a.demoNotice("keeping orchestrator.scheduling_policy (%s): its cooldowns hold origins back for hours and days, "+
			"the demo's own for minutes", c.Source("orchestrator.scheduling_policy"))
	} else {
		policies, err := demoPolicies()
		if err != nil {
			return c, err
		}
		c.Orchestrator.SchedulingPolicy = policies
		c.Orchestrator.NoOriginsBackoff = config.Duration(demo.NoOriginsBackoff)
	}
	*a.cfg = c
	return c, nil
}

// demoPolicies are the demo's weighted policies: each visit type's
// defaults, with the demo's cooldowns of minutes (demo.Cooldowns).
func demoPolicies() (map[string][]config.PolicyUse, error) {
	vts, err := demo.VisitTypes()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	policies := map[string][]config.PolicyUse{}
	for _, vt := range vts {
		for _, s := range orchestrator.DefaultShares(vt) {
			w := s.Weight
			policies[vt] = append(policies[vt], config.PolicyUse{Policy: string(s.Policy), Weight: &w,
				Cooldowns: config.NewCooldowns(demo.Cooldowns)})
		}
	}
	return policies, nil
}

// The demo's temporary directory: its name, and the file in it naming the
// process that made it (holder.New).
const (
	demoDirPattern = "revisit-demo-"
	demoOwnerFile  = "owner"
)

// removeLeftoverDemos removes the temporary directories of demos whose
// process is gone without removing them (a kill -9): their owner file
// names a process of this host that no longer runs.
func (a *app) removeLeftoverDemos() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), demoDirPattern+"*"))
	for _, dir := range dirs {
		owner, err := os.ReadFile(filepath.Join(dir, demoOwnerFile))
		if err != nil || !holder.Gone(string(owner)) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			a.log.Warn("demo: removing the temporary store a killed demo left", "dir", dir, "err", err)
		}
	}
}

// startDemo opens the temporary SQLite store of revisit serve --demo and
// seeds it. It returns c on that store, the demo to run once the server
// listens, and stop, which closes the store and removes its directory.
func (a *app) startDemo(cmd *cobra.Command, c config.Config) (_ config.Config, _ *demo.Demo, stop func(), err error) {
	a.removeLeftoverDemos()
	dir, err := os.MkdirTemp("", demoDirPattern)
	if err != nil {
		return c, nil, nil, fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, demoOwnerFile), []byte(holder.New()), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return c, nil, nil, fmt.Errorf("demo: %w", err)
	}
	stop = func() {
		a.close()
		if err := os.RemoveAll(dir); err != nil {
			a.log.Warn("demo: removing the temporary store", "dir", dir, "err", err)
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	path := filepath.Join(dir, "revisit.db")
	c.Store = "sqlite://" + path
	*a.cfg, a.storeNoticed = c, true
	st, err := a.openStore(cmd)
	if err != nil {
		return c, nil, nil, err
	}
	d := demo.New(st, demo.Config{Token: writeToken(c.API.Tokens), Clock: a.env.Clock,
		Logger: a.log.With("role", "demo")})
	if err := d.Seed(cmd.Context()); err != nil {
		return c, nil, nil, fmt.Errorf("demo: %w", err)
	}
	a.demoNotice("a demonstration on a temporary store, %s, removed at exit: %d origins of the lister %q "+
		"visited by simulated workers", path, demo.DefaultOrigins, demo.ListerName)
	return c, d, stop, nil
}

// demoNotice tells the user, on standard error, what --demo does.
func (a *app) demoNotice(format string, args ...any) {
	fmt.Fprintf(a.env.Stderr, "revisit: demo: "+format+"\n", args...)
}

// writeToken returns the first write token of tokens, empty if none.
func writeToken(tokens []config.Token) string {
	for _, t := range tokens {
		if t.Scope == config.ScopeWrite {
			return t.Token
		}
	}
	return ""
}
