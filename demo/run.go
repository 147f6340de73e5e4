package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/worker"
)

// leaseFor is the lease the demo's workers ask for: short, so that the
// longer visits extend it with heartbeats, as real workers do.
const leaseFor = 5 * time.Second

// Run runs the demo on the revisit server at server (http://host:port),
// which serves Seed's store, until ctx ends: per visit type, Workers
// visits at once through the HTTP worker protocol, and the lister. It
// returns nil when ctx ends, or the error of a worker the server refuses.
func (d *Demo) Run(ctx context.Context, server string) error {
	if len(d.types) == 0 {
		return errors.New("demo: Run before Seed")
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, vt := range d.types {
		g.Go(func() error {
			return worker.Run(ctx, worker.Config{Server: server, Queue: d.queues[vt], Name: "demo-" + vt,
				Concurrency: d.cfg.Workers, LeaseFor: leaseFor, Token: d.cfg.Token, Handler: d.visitor(vt),
				Logger: d.cfg.Logger})
		})
	}
	g.Go(func() error {
		d.list(ctx)
		return nil
	})
	return g.Wait()
}

// visitor returns the handler of the visits of visit type vt: it waits
// as long as the visit takes, then reports its outcome.
func (d *Demo) visitor(vt string) worker.Handler {
	return func(ctx context.Context, t worker.Task) (worker.Result, error) {
		var kwargs struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(t.Kwargs, &kwargs); err != nil || kwargs.URL == "" {
			return worker.Result{}, fmt.Errorf("no origin url in the task's kwargs %s", t.Kwargs)
		}
		took, res := d.archive.visit(revisit.OriginKey{URL: kwargs.URL, VisitType: vt}, d.now())
		select {
		case <-time.After(took):
			return res, nil
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}

// list lists, every ListEvery until ctx ends, one new origin and
// UpdatesPerListing origins listed before, whose forges changed just then
// (a last update of now, for those whose forge tells), and refreshes the
// lister's scheduler metrics. Failures are logged,
// and the next listing tries again.
func (d *Demo) list(ctx context.Context) {
	t := time.NewTicker(d.cfg.ListEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := d.now()
		o, _ := d.newOrigin(now, false)
		origins := []revisit.ListedOrigin{o}
		for range UpdatesPerListing {
			o := d.listing(1+d.rand.IntN(d.listed-1), now)
			if o.LastUpdate != nil {
				o.LastUpdate = &now // its forge changed: a visit of it is due
			}
			origins = append(origins, o)
		}
		_, err := d.st.ListedOriginsRecord(ctx, origins)
		if err == nil {
			err = d.updateMetrics(ctx)
		}
		if err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("demo: listing a new origin", "url", o.URL, "err", err)
		}
	}
}
