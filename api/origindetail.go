package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// OriginDetail is the body of GET /api/v1/origins/detail: what revisit
// knows of one origin (a URL and a visit type) at Now, and when and why it
// will be visited next.
type OriginDetail struct {
	URL       string    `json:"url"`
	VisitType string    `json:"visit_type"`
	Now       time.Time `json:"now"`
	// Listed holds a row per lister that lists the origin.
	Listed []ListedRow `json:"listed"`
	// VisitStats are null before the origin's first visit or schedule.
	VisitStats *VisitStats `json:"visit_stats"`
	// RecentResults are the origin's last results, newest first: at most
	// revisit.RecentResultsKept, from those its stats have kept (since
	// migration 00024).
	RecentResults []RecentResult `json:"recent_results"`
	NextVisit     NextVisit      `json:"next_visit"`
	// Cooldowns are those of semantics §3.1, with the lengths of
	// CooldownsFrom.
	Cooldowns []CooldownState `json:"cooldowns"`
	// CooldownsFrom says whose cooldowns the detail applies: "orchestrator"
	// (those of the orchestrator running in the server's process, for the
	// origin's visit type) or "defaults".
	CooldownsFrom string `json:"cooldowns_from"`
	// Eligible reports whether a grab with those cooldowns may pick the
	// origin now: it has an enabled row and no cooldown holds it.
	Eligible bool `json:"eligible"`
	// InFlight are the visits dispatched and not yet ended, oldest first.
	InFlight []VisitInFlight `json:"in_flight"`
}

// ListedRow is a lister's row of an origin, with the lister's name and
// the policies whose condition the row meets, cooldowns aside.
type ListedRow struct {
	ListedOrigin
	Lister   string   `json:"lister"`
	Policies []string `json:"policies"`
}

// NextVisit places the origin on its visit type's virtual clock, the order
// of origins_without_last_update (semantics §3.2, §7 rule 6).
type NextVisit struct {
	// OriginPosition is the origin's next_visit_queue_position; null
	// before its first visit.
	OriginPosition *int64 `json:"next_visit_queue_position"`
	// QueuePosition is the visit type's queue position.
	QueuePosition int64 `json:"queue_position"`
	// AheadSeconds is OriginPosition - QueuePosition: how far ahead of the
	// visit type's clock the origin is due (behind when negative).
	AheadSeconds *int64 `json:"ahead_seconds"`
	// WithoutLastUpdate reports that a row of the origin has no
	// last_update, which origins_without_last_update orders by the
	// position; the position matters to no other policy.
	WithoutLastUpdate bool   `json:"without_last_update"`
	Explanation       string `json:"explanation"`
}

// CooldownState is one cooldown as it stands for the origin.
type CooldownState struct {
	Cooldown string          `json:"cooldown"`
	Length   config.Duration `json:"length"`
	// Since is what the cooldown counts from: the last schedule, or the
	// failed or not-found last visit.
	Since *time.Time `json:"since"`
	Holds bool       `json:"holds"`
	// Until is the last instant the cooldown holds the origin.
	Until       *time.Time `json:"until"`
	Explanation string     `json:"explanation"`
}

// RecentResult is one of an origin's last results.
type RecentResult struct {
	Date time.Time `json:"date"`
	// Status is successful, failed or not_found.
	Status string `json:"status"`
	// Eventful reports that the visit brought a snapshot other than the
	// one before, or said it was eventful.
	Eventful bool `json:"eventful"`
}

// VisitInFlight is a visit of the origin dispatched to workers and not yet
// ended (semantics §6).
type VisitInFlight struct {
	ID          string     `json:"id"`
	State       string     `json:"state"`
	Policy      string     `json:"policy"`
	ListerID    uuid.UUID  `json:"lister_id"`
	ScheduledAt time.Time  `json:"scheduled_at"`
	SentAt      *time.Time `json:"sent_at"`
	Owner       string     `json:"owner"`
}

func (s *Server) handleOriginDetail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key := revisit.OriginKey{URL: q.Get("url"), VisitType: q.Get("visit_type")}
	err := revisit.ValidateVisitType(key.VisitType)
	if err == nil {
		err = revisit.ValidateOriginURL(key.URL)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, err := LoadOriginDetail(r.Context(), s.st, key, s.now(), s.cooldownsOf(key.VisitType))
	s.reply(w, r, d, err)
}

// Cooldowns are the cooldowns an origin's detail applies, and whose they
// are (OriginDetail.CooldownsFrom).
type Cooldowns struct {
	revisit.Cooldowns
	From string
}

// DefaultCooldowns are the cooldowns of semantics §3.1.
func DefaultCooldowns() Cooldowns {
	return Cooldowns{Cooldowns: revisit.DefaultCooldowns(), From: "defaults"}
}

// cooldownsOf returns the cooldowns of the orchestrator of this process
// for visitType, those of its first policy with a weight, or else the
// defaults.
func (s *Server) cooldownsOf(visitType string) Cooldowns {
	if s.cfg.Orchestrator == nil {
		return DefaultCooldowns()
	}
	for _, sh := range s.cfg.Orchestrator.Shares(visitType) {
		if sh.Weight > 0 {
			c := Cooldowns{Cooldowns: revisit.DefaultCooldowns(), From: "orchestrator"}
			if sh.Grab.Cooldowns != nil {
				c.Cooldowns = *sh.Grab.Cooldowns
			}
			return c
		}
	}
	return DefaultCooldowns()
}

// OriginDetailStore is what LoadOriginDetail reads of a store.
// store.Store implements it.
type OriginDetailStore interface {
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	VisitsOfOrigin(ctx context.Context, key revisit.OriginKey) ([]revisit.Visit, error)
	QueuePositionGet(ctx context.Context, visitType string) (int64, error)
}

// LoadOriginDetail reads what st keeps of the origin key and explains it
// as of now under the cooldowns cd: the body of GET
// /api/v1/origins/detail. An origin of which st knows nothing is a
// not-found error.
func LoadOriginDetail(ctx context.Context, st OriginDetailStore, key revisit.OriginKey, now time.Time, cd Cooldowns) (OriginDetail, error) {
	d := OriginDetail{URL: key.URL, VisitType: key.VisitType, Now: now, CooldownsFrom: cd.From}
	page, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{URLs: []string{key.URL}, VisitType: key.VisitType,
		Enabled: revisit.AnyEnabled})
	if err != nil {
		return d, err
	}
	stats, err := st.VisitStatsGet(ctx, []revisit.OriginKey{key})
	if err != nil {
		return d, err
	}
	visits, err := st.VisitsOfOrigin(ctx, key)
	if err != nil {
		return d, err
	}
	if len(page.Origins) == 0 && len(stats) == 0 && len(visits) == 0 {
		return d, revisit.Errorf(revisit.CodeNotFound, "no origin %s of visit type %s", key.URL, key.VisitType)
	}
	vs := revisit.NewVisitStats(key)
	if len(stats) > 0 {
		vs = stats[0]
		js := NewVisitStats(vs)
		d.VisitStats = &js
	}
	d.RecentResults = mapSlice(vs.Recent, func(r revisit.RecentResult) RecentResult {
		return RecentResult{Date: r.Date, Status: string(r.Status), Eventful: r.Eventful}
	})
	if d.Listed, err = listedRows(ctx, st, page.Origins, vs); err != nil {
		return d, err
	}
	position, err := st.QueuePositionGet(ctx, key.VisitType)
	if err != nil {
		return d, err
	}
	d.NextVisit = newNextVisit(key.VisitType, vs, position, page.Origins)
	held := false
	for _, c := range cd.Cooldowns.States(vs, d.Now) {
		held = held || c.Holds
		d.Cooldowns = append(d.Cooldowns, CooldownState{Cooldown: c.Cooldown, Length: config.Duration(c.Length),
			Since: c.Since, Holds: c.Holds, Until: c.Until, Explanation: explainCooldown(c)})
	}
	d.Eligible = !held && slices.ContainsFunc(page.Origins, func(o revisit.ListedOrigin) bool { return o.Enabled })
	d.InFlight = mapSlice(visits, func(v revisit.Visit) VisitInFlight {
		return VisitInFlight{ID: v.ID, State: string(v.State), Policy: string(v.Policy), ListerID: v.Origin.ListerID,
			ScheduledAt: v.ScheduledAt, SentAt: v.SentAt, Owner: v.Owner}
	})
	return d, nil
}

// listedRows returns the rows of an origin whose stats are vs, each with
// its lister's name (read from st) and the policies it qualifies for.
func listedRows(ctx context.Context, st OriginDetailStore, rows []revisit.ListedOrigin, vs revisit.VisitStats) ([]ListedRow, error) {
	ids := mapSlice(rows, func(o revisit.ListedOrigin) uuid.UUID { return o.ListerID })
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	ls, err := st.ListerGetByIDs(ctx, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	listers := make(map[uuid.UUID]revisit.Lister, len(ls))
	for _, l := range ls {
		listers[l.ID] = l
	}
	out := make([]ListedRow, len(rows))
	for i, o := range rows {
		l := listers[o.ListerID]
		out[i] = ListedRow{ListedOrigin: NewListedOrigin(o), Lister: listerLabel(l), Policies: []string{}}
		for _, p := range revisit.Policies {
			if p.Qualifies(o, vs, l) {
				out[i].Policies = append(out[i].Policies, string(p))
			}
		}
	}
	return out, nil
}

// newNextVisit places an origin whose stats are st and whose listed rows
// are rows on its visit type's clock, which stands at position.
func newNextVisit(visitType string, st revisit.VisitStats, position int64, rows []revisit.ListedOrigin) NextVisit {
	n := NextVisit{QueuePosition: position, OriginPosition: st.NextVisitQueuePosition,
		WithoutLastUpdate: slices.ContainsFunc(rows, func(o revisit.ListedOrigin) bool { return o.LastUpdate == nil })}
	if p := st.NextVisitQueuePosition; p != nil {
		ahead := *p - position
		n.AheadSeconds = &ahead
	}
	n.Explanation = explainNextVisit(visitType, n)
	return n
}

// explainNextVisit says where the origin stands on its visit type's clock.
func explainNextVisit(visitType string, n NextVisit) string {
	var where string
	switch {
	case n.OriginPosition == nil:
		where = fmt.Sprintf("No next position yet: no visit of this origin was folded. origins_without_last_update takes "+
			"origins without a position first, oldest first_seen first; the %s queue position is %d.", visitType, n.QueuePosition)
	case *n.AheadSeconds > 0:
		where = fmt.Sprintf("Next visit at position %d of the %s virtual clock, which stands at %d: %s ahead. "+
			"origins_without_last_update takes origins by ascending position and moves the clock to the highest "+
			"position it took, so this origin comes after every eligible one with a lower position.",
			*n.OriginPosition, visitType, n.QueuePosition, config.FormatDuration(time.Duration(*n.AheadSeconds)*time.Second))
	default:
		where = fmt.Sprintf("Next visit at position %d of the %s virtual clock, which stands at %d: due (%s behind). "+
			"origins_without_last_update takes it before any origin with a higher position.",
			*n.OriginPosition, visitType, n.QueuePosition, config.FormatDuration(time.Duration(-*n.AheadSeconds)*time.Second))
	}
	if !n.WithoutLastUpdate {
		where += " Its listers give a last_update, so origins_without_last_update does not consider it: the position " +
			"only matters if they stop giving one."
	}
	return where
}

// explainCooldown says why a cooldown holds the origin, or lets it through.
func explainCooldown(c revisit.CooldownState) string {
	at := func(t *time.Time) string { return t.UTC().Format(time.RFC3339) }
	length := config.FormatDuration(c.Length)
	scheduling := c.Cooldown == revisit.CooldownAbsolute || c.Cooldown == revisit.CooldownScheduled
	switch {
	case c.Length <= 0:
		return "Disabled."
	case c.Holds && c.Cooldown == revisit.CooldownScheduled:
		return fmt.Sprintf("Scheduled at %s and no result since: held until %s (%s later), or until a result comes in.",
			at(c.Since), at(c.Until), length)
	case c.Holds && scheduling:
		return fmt.Sprintf("Scheduled at %s: held until %s (%s later).", at(c.Since), at(c.Until), length)
	case c.Holds:
		return fmt.Sprintf("The last visit %s at %s: held until %s (%s later).", outcome(c.Cooldown), at(c.Since),
			at(c.Until), length)
	case c.VisitedSince:
		return fmt.Sprintf("Passes: a visit ended after the schedule of %s.", at(c.Since))
	case c.Since != nil && scheduling:
		return fmt.Sprintf("Passes: scheduled at %s, more than %s ago.", at(c.Since), length)
	case c.Since != nil:
		return fmt.Sprintf("Passes: the last visit %s at %s, more than %s ago.", outcome(c.Cooldown), at(c.Since), length)
	case scheduling:
		return "Passes: never scheduled."
	}
	return fmt.Sprintf("Passes: the last visit's status is not %s.", c.Cooldown)
}

// outcome words the status of the visit a cooldown counts from.
func outcome(cooldown string) string {
	if cooldown == revisit.CooldownNotFound {
		return "found nothing"
	}
	return "failed"
}
