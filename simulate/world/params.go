package world

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/revisit-sched/revisit/config"
)

// Params are every figure of a world, as a world file (YAML, revisit
// simulate --world FILE) writes them; a file sets those it names and
// Default gives the others. docs/simulate.md says where each default
// comes from.
type Params struct {
	Commits Commits `yaml:"commits"`
	Visits  Visits  `yaml:"visits"`
	Origins Origins `yaml:"origins"`
	// Listers list the origins, each a share of them; a file that names
	// listers replaces the default ones.
	Listers []Lister `yaml:"listers"`
	Forges  Forges   `yaml:"forges"`
}

// Commits are the pace of the origins' commits: an origin has one every c
// seconds since Epoch, c drawn from its URL between MinInterval and
// MaxInterval, evenly on a log scale.
type Commits struct {
	Epoch       time.Time       `yaml:"epoch"`
	MinInterval config.Duration `yaml:"min_interval"`
	MaxInterval config.Duration `yaml:"max_interval"`
}

// Visits are the cost of a visit: MinRunTime plus PerCommit for each
// commit since the previous attempt, at most MaxRunTime, after which the
// visit ends partial.
type Visits struct {
	MinRunTime config.Duration `yaml:"min_run_time"`
	PerCommit  config.Duration `yaml:"per_commit"`
	MaxRunTime config.Duration `yaml:"max_run_time"`
	// FirstLookBack is how far back the commits of an origin's first
	// visit go.
	FirstLookBack config.Duration `yaml:"first_look_back"`
	// FirstVisitCost is Coupled or Independent.
	FirstVisitCost string `yaml:"first_visit_cost"`
}

// The costs of a first visit (Visits.FirstVisitCost).
const (
	// Coupled: the first visit fetches FirstLookBack of the origin's own
	// commits, so that an origin quiet lately is cheap to visit first.
	Coupled = "coupled"
	// Independent: the first visit fetches as many commits as FirstLookBack
	// holds at a pace drawn from the URL apart from the origin's own, so
	// that its cost says nothing of the origin's recent activity (the same
	// spread of costs over the origins as Coupled).
	Independent = "independent"
)

// Origins are the fractions of origins that differ from the others.
type Origins struct {
	// WithoutLastUpdate is the fraction of origins listed without a last
	// update.
	WithoutLastUpdate float64 `yaml:"without_last_update"`
	// Gone is the fraction of origins gone from their forge though still
	// listed: every visit finds nothing (not_found).
	Gone float64 `yaml:"gone"`
	// NewOriginsLoad is, when the simulation does not set the lister's
	// rate, the fraction of the workers' time the first visits of new
	// origins take: the lister finds them at that rate.
	NewOriginsLoad float64 `yaml:"new_origins_load"`
}

// Lister is one lister of the world.
type Lister struct {
	Name string `yaml:"name"`
	// Share is the fraction of the origins it lists; the listers' shares
	// add up to 1.
	Share float64 `yaml:"share"`
	// RelistEvery is how often it lists its origins again.
	RelistEvery config.Duration `yaml:"relist_every"`
	// Incremental listers list again only the origins whose last update
	// changed since their previous run; the others list every origin they
	// know that is not gone.
	Incremental bool `yaml:"incremental"`
}

// Forges host the origins, each an even share of them, and each is down
// for OutageLength once every OutageEvery, at a time of each period drawn
// from the forge's number: a visit then fails at once, fetching nothing.
type Forges struct {
	// Count is how many forges; 0: none is ever down.
	Count        int             `yaml:"count"`
	OutageEvery  config.Duration `yaml:"outage_every"`
	OutageLength config.Duration `yaml:"outage_length"`
}

const (
	day  = 24 * time.Hour
	year = 365 * day
)

// Upstream returns the world of Software Heritage's simulator: its commit
// pace and visit costs, the first visit coupled to recent activity, every
// origin with a last update, none gone, no forge down, one lister.
func Upstream() Params {
	return Params{
		Commits: Commits{Epoch: Epoch, MinInterval: config.Duration(time.Second),
			MaxInterval: config.Duration(MaxInterval)},
		Visits: Visits{MinRunTime: config.Duration(MinRunTime), PerCommit: config.Duration(PerCommit),
			MaxRunTime: config.Duration(MaxRunTime), FirstLookBack: config.Duration(FirstLookBack),
			FirstVisitCost: Coupled},
		Origins: Origins{NewOriginsLoad: 0.25},
		Listers: []Lister{{Name: "example", Share: 1, RelistEvery: config.Duration(time.Hour)}},
	}
}

// Default returns the default world: upstream's commits and visit costs,
// but a first visit whose cost is independent of recent activity, a tenth
// of the origins without a last update, 2 % gone, an incremental lister
// listing again daily and a full one weekly, and 20 forges each down
// 12 hours a month.
func Default() Params {
	p := Upstream()
	p.Visits.FirstVisitCost = Independent
	p.Origins.WithoutLastUpdate, p.Origins.Gone = 0.1, 0.02
	p.Listers = []Lister{
		{Name: "incremental", Share: 0.5, RelistEvery: config.Duration(day), Incremental: true},
		{Name: "full", Share: 0.5, RelistEvery: config.Duration(7 * day)},
	}
	p.Forges = Forges{Count: 20, OutageEvery: config.Duration(30 * day), OutageLength: config.Duration(12 * time.Hour)}
	return p
}

// Parse reads a world file over the default world: keys it leaves out keep
// their default; an unknown key, a value of the wrong type or a figure out
// of bounds is an error naming the key.
func Parse(data []byte) (Params, error) {
	p := Default()
	listers := p.Listers
	p.Listers = nil
	if err := config.DecodeYAML(data, &p); err != nil {
		return Params{}, err
	}
	if p.Listers == nil {
		p.Listers = listers
	}
	return p, p.Validate()
}

// Validate checks every figure; errors name the key as a world file
// writes it.
func (p Params) Validate() error {
	positive := []struct {
		key string
		d   config.Duration
	}{{"commits.min_interval", p.Commits.MinInterval}, {"commits.max_interval", p.Commits.MaxInterval},
		{"visits.min_run_time", p.Visits.MinRunTime}, {"visits.max_run_time", p.Visits.MaxRunTime},
		{"visits.first_look_back", p.Visits.FirstLookBack}}
	for _, f := range positive {
		if f.d <= 0 {
			return fmt.Errorf("%s: %s is not positive", f.key, f.d)
		}
	}
	switch {
	case p.Commits.Epoch.IsZero():
		return errors.New("commits.epoch: missing")
	case p.Commits.MaxInterval <= p.Commits.MinInterval:
		return fmt.Errorf("commits.max_interval: %s is not above min_interval %s", p.Commits.MaxInterval,
			p.Commits.MinInterval)
	case p.Visits.PerCommit < 0:
		return fmt.Errorf("visits.per_commit: %s is negative", p.Visits.PerCommit)
	case p.Visits.MaxRunTime < p.Visits.MinRunTime:
		return fmt.Errorf("visits.max_run_time: %s is below min_run_time %s", p.Visits.MaxRunTime,
			p.Visits.MinRunTime)
	case p.Visits.FirstVisitCost != Coupled && p.Visits.FirstVisitCost != Independent:
		return fmt.Errorf("visits.first_visit_cost: %q is neither %s nor %s", p.Visits.FirstVisitCost, Coupled,
			Independent)
	case len(p.Listers) == 0:
		return errors.New("listers: none; a world needs at least one")
	case p.Forges.Count < 0:
		return fmt.Errorf("forges.count: %d is negative", p.Forges.Count)
	case p.Forges.Count > 0 && (p.Forges.OutageLength <= 0 || p.Forges.OutageEvery <= p.Forges.OutageLength):
		return fmt.Errorf("forges: an outage of %s every %s: want 0 < outage_length < outage_every",
			p.Forges.OutageLength, p.Forges.OutageEvery)
	}
	for key, f := range map[string]float64{"origins.without_last_update": p.Origins.WithoutLastUpdate,
		"origins.gone": p.Origins.Gone, "origins.new_origins_load": p.Origins.NewOriginsLoad} {
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("%s: %g is not between 0 and 1", key, f)
		}
	}
	shares := 0.0
	for i, l := range p.Listers {
		key := fmt.Sprintf("listers[%d]", i)
		switch {
		case l.Name == "":
			return fmt.Errorf("%s.name: missing", key)
		case slices.ContainsFunc(p.Listers[:i], func(o Lister) bool { return o.Name == l.Name }):
			return fmt.Errorf("%s.name: %s is named twice", key, l.Name)
		case !(l.Share > 0 && l.Share <= 1):
			return fmt.Errorf("%s.share: %g is not above 0 and at most 1", key, l.Share)
		case l.RelistEvery <= 0:
			return fmt.Errorf("%s.relist_every: %s is not positive", key, l.RelistEvery)
		}
		shares += l.Share
	}
	if shares < 1-1e-9 || shares > 1+1e-9 {
		return fmt.Errorf("listers: their shares add up to %g, not 1", shares)
	}
	return nil
}

// Describe sums the world up on one line, for a report.
func (p Params) Describe() string {
	s := fmt.Sprintf("first visits' cost %s; %g%% of origins without a last update, %g%% gone; listers",
		p.Visits.FirstVisitCost, p.Origins.WithoutLastUpdate*100, p.Origins.Gone*100)
	for _, l := range p.Listers {
		kind := "full"
		if l.Incremental {
			kind = "incremental"
		}
		s += fmt.Sprintf(" %s (%s, %g%%, every %s)", l.Name, kind, l.Share*100, l.RelistEvery)
	}
	if p.Forges.Count > 0 {
		s += fmt.Sprintf("; %d forges, each down %s every %s", p.Forges.Count, p.Forges.OutageLength,
			p.Forges.OutageEvery)
	}
	return s
}
