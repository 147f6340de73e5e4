// Package demo is `revisit serve --demo`: a scheduler at work on a
// temporary store. Seed registers the example task types and lists a few
// thousand origins of the lister "demo", some of them visited before; Run
// visits them with simulated workers that speak the embedded broker's HTTP
// protocol (package worker) to the server, lists a few more origins a
// minute, and lists again origins whose forge changed. Its policies hold
// origins back minutes (Cooldowns), not days. Origins and visit outcomes follow the world of revisit simulate
// (package simulate/world), with its durations scaled down to seconds.
package demo

import (
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// Notice says, on every page of the console, what the demo is.
const Notice = "A demonstration: simulated forges and workers on a temporary store, removed when the server stops; " +
	"origins are held back minutes after a visit instead of days."

// ListerName names the demo's lister.
const ListerName = "demo"

// QueueLength bounds the queue of each demo task type: the example task
// types' queues (1,000 and 5,000) would take every origin of the demo in
// one round, where a short queue shows the orchestrator filling it round
// after round as the workers drain it.
const QueueLength = 100

// Cooldowns are the cooldowns of the demo's policies: its visits take
// seconds where real ones take minutes, and its forges change in minutes
// where real ones change in days, so that origins become eligible again
// while someone watches (the real defaults, 12 h to 31 days, would leave
// every origin held back after the first few minutes).
var Cooldowns = revisit.Cooldowns{Absolute: time.Minute, Scheduled: 3 * time.Minute, Failed: 5 * time.Minute,
	NotFound: 10 * time.Minute}

// NoOriginsBackoff is how long the demo's loops wait when no origin is
// eligible: origins come out of their cooldowns by the minute.
const NoOriginsBackoff = 10 * time.Second

// UpdatesPerListing is how many of its origins the demo's lister lists
// again at each listing, their forges having changed just then: the
// policy of lag has work at any minute.
const UpdatesPerListing = 20

// Defaults of Config.
const (
	DefaultOrigins   = 3000
	DefaultWorkers   = 3
	DefaultListEvery = 15 * time.Second
)

// Config configures a Demo. Zero fields take the defaults.
type Config struct {
	// Origins is how many origins Seed lists.
	Origins int
	// Workers is how many visits of each visit type run at once.
	Workers int
	// ListEvery is how often the lister lists one more origin.
	ListEvery time.Duration
	// Token is the bearer token of the workers: a write token of the
	// server's api.tokens; empty when it has none.
	Token string
	// Clock is the server's clock; nil is time.Now.
	Clock revisit.Clock
	// Logger receives what goes wrong; nil discards.
	Logger *slog.Logger
}

// Demo is one demonstration: the origins it listed, what its workers
// found, and its lister.
type Demo struct {
	cfg Config
	st  store.Store
	// queues maps each visit type to its queue, the backend name of its
	// task type.
	queues map[string]string
	// types are the visit types, in the task types' order.
	types   []string
	lister  revisit.Lister
	archive *archive
	// rand draws the origins' histories and outcomes; listed counts the
	// origins listed, to name the next one; noUpdate holds those whose
	// forge tells no last update. They belong to Seed, then to the lister.
	rand     *rand.Rand
	listed   int
	noUpdate map[int]bool
}

// New returns a demo that will seed and run on st.
func New(st store.Store, cfg Config) *Demo {
	if cfg.Origins <= 0 {
		cfg.Origins = DefaultOrigins
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ListEvery <= 0 {
		cfg.ListEvery = DefaultListEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Demo{cfg: cfg, st: st, queues: map[string]string{}, archive: newArchive(),
		rand: rand.New(rand.NewPCG(41, 1)), noUpdate: map[int]bool{}}
}

func (d *Demo) now() time.Time { return d.cfg.Clock.Now().UTC() }
