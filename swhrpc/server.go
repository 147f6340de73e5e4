// Package swhrpc serves the msgpack RPC of the Software Heritage scheduler
// over revisit's store, so that the unchanged Python client
// (swh.scheduler.api.client.RemoteScheduler) and the programs built on it
// (listers, loaders' schedulers, the archive's tools) use revisit as their
// scheduler: every call is POST /<path> with a msgpack map of parameters,
// answered with a msgpack value (swhwire), or JSON for clients that prefer
// it.
//
// Errors are the error bodies the client turns back into the scheduler's
// exceptions: 400 StaleData, UnknownPolicy and SchedulerException (bad
// input, with a message naming the parameter or field), 503 when the store
// is unavailable (the client retries), 500 otherwise. Lookups of something
// missing answer None, never 404.
//
// With tokens configured, every call needs one (the password of HTTP Basic
// authentication, as in http://user:TOKEN@host/swh/, or Authorization:
// Bearer): a read token for the calls that change nothing, a write token
// for the others.
package swhrpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/kit/access"
)

// Config configures a Server.
type Config struct {
	// Store holds the data served.
	Store Store
	// Tokens are the accepted tokens; none leaves the RPC open.
	Tokens []config.Token
	// Clock tells the time of calls that default to now; nil is time.Now.
	Clock revisit.Clock
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// Server is the http.Handler of the RPC: POST /<path> for each endpoint,
// GET / (a banner) and GET /site-map (the endpoints).
type Server struct {
	st        Store
	clock     revisit.Clock
	log       *slog.Logger
	guard     access.Guard
	endpoints map[string]endpoint
}

// New returns the server cfg describes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{st: cfg.Store, clock: cfg.Clock, log: cfg.Logger,
		guard: access.Guard{Tokens: cfg.Tokens, Basic: true}, endpoints: map[string]endpoint{}}
	for _, e := range endpoints {
		s.endpoints[e.path] = e
	}
	return s
}

// now is the time of the server's clock, to the microsecond.
func (s *Server) now() time.Time { return revisit.Microsecond(s.clock.Now()) }

// endpoint is one path of the RPC.
type endpoint struct {
	path string
	// write says whether the call changes something (a write token).
	write bool
	// doc says what the call does, for the site map.
	doc string
	// bind reads the call's parameters (errors are kept in p) and returns
	// the call, which runs only if every parameter was read well.
	bind func(s *Server, p *record) call
}

// call runs a call whose parameters were read and returns its result.
type call func(ctx context.Context) (any, error)
