package swhrpc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// Listed origins: recording, paging, and choosing the next visits.

func (s *Server) originsRecord(p *record) call {
	origins := required(p, "listed_origins", each(MaxBatch, readListedOrigin))
	return func(ctx context.Context) (any, error) {
		if len(origins) == 0 {
			return []any{}, nil
		}
		stored, err := s.st.ListedOriginsRecordReturning(ctx, origins)
		return listedOriginModels(stored), renamed(err, "origins", "listed_origins")
	}
}

// originsPage is a call of origins/get.
type originsPage struct {
	filter revisit.ListedOriginFilter
	url    *string
	urls   *[]string
}

func (s *Server) originsGet(p *record) call {
	q := originsPage{
		filter: revisit.ListedOriginFilter{
			ListerID:       field(p, "lister_id", optional(asUUID), nil),
			Enabled:        field(p, "enabled", asEnabledFilter, revisit.OnlyEnabled),
			Limit:          field(p, "limit", asLimit(revisit.PageSize), revisit.PageSize.Def),
			AfterListerURL: field(p, "page_token", optional(asPageToken), nil),
		},
		url:  field(p, "url", optional(asStr), nil),
		urls: field(p, "urls", optional(each(MaxBatch, asStr)), nil),
	}
	return func(ctx context.Context) (any, error) {
		origins, full, err := s.listedOrigins(ctx, q)
		if err != nil {
			return nil, err
		}
		var next any
		if full {
			last := origins[len(origins)-1]
			next = []any{last.ListerID.String(), last.URL}
		}
		return swhwire.PagedResult{Results: listedOriginModels(origins), NextPageToken: next}, nil
	}
}

// listedOrigins reads one page of q, and whether it is full (a page may
// follow). The page ends with every visit type of its last URL, so that
// the next page, which starts after that lister and URL, skips none.
func (s *Server) listedOrigins(ctx context.Context, q originsPage) ([]revisit.ListedOrigin, bool, error) {
	f := q.filter
	switch {
	case q.url != nil && q.urls != nil && !slices.Contains(*q.urls, *q.url):
		return nil, false, nil // both filters, nothing matches both
	case q.url != nil:
		f.URLs = []string{*q.url}
	case q.urls != nil:
		if len(*q.urls) == 0 {
			return nil, false, nil
		}
		f.URLs = *q.urls
	}
	page, err := s.st.ListedOriginsGet(ctx, f)
	if err != nil || page.NextPageToken == "" {
		return page.Origins, len(page.Origins) == f.Limit, err
	}
	last := page.Origins[len(page.Origins)-1]
	rest, err := s.st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &last.ListerID, URLs: []string{last.URL},
		Enabled: f.Enabled, Limit: revisit.PageSize.Max})
	if err != nil {
		return nil, false, err
	}
	origins := page.Origins
	for _, o := range rest.Origins {
		if o.VisitType > last.VisitType {
			origins = append(origins, o)
		}
	}
	return origins, true, nil
}

// asEnabledFilter reads enabled: True, False, or None for either.
func asEnabledFilter(field string, v any) (revisit.EnabledFilter, error) {
	if v == nil {
		return revisit.AnyEnabled, nil
	}
	enabled, err := asBool(field, v)
	if !enabled {
		return revisit.OnlyDisabled, err
	}
	return revisit.OnlyEnabled, err
}

// asPageToken reads the token of a page of listed origins: the lister id
// (text) and the URL of the last origin of the previous page.
func asPageToken(field string, v any) (revisit.ListerURL, error) {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return revisit.ListerURL{}, wrongType(field, "a (lister_id, url) pair from the previous page", v)
	}
	id, err := asUUID(field+"[0]", pair[0])
	if err != nil {
		return revisit.ListerURL{}, err
	}
	url, err := asStr(field+"[1]", pair[1])
	return revisit.ListerURL{ListerID: id, URL: url}, err
}

func (s *Server) originsGrabNext(p *record) call {
	defaults := revisit.DefaultCooldowns()
	cooldown := func(name string, def time.Duration) time.Duration {
		return deref(field(p, name, optional(asDuration), &def))
	}
	g := revisit.GrabParams{
		VisitType: required(p, "visit_type", asStr),
		Count:     required(p, "count", asLimit(revisit.GrabCount)),
		Policy:    revisit.Policy(required(p, "policy", asStr)),
		Disabled:  !field(p, "enabled", asBool, true),
		ListerID:  field(p, "lister_uuid", optional(asUUID), nil),
		Now:       deref(field(p, "timestamp", optional(asTime), nil)),
		Cooldowns: &revisit.Cooldowns{
			Absolute:  cooldown("absolute_cooldown", defaults.Absolute),
			Scheduled: cooldown("scheduled_cooldown", defaults.Scheduled),
			Failed:    cooldown("failed_cooldown", defaults.Failed),
			NotFound:  cooldown("not_found_cooldown", defaults.NotFound),
		},
		Sample:         field(p, "tablesample", asSample, 0),
		DryRun:         field(p, "dry_run", asBool, false),
		EveryListedRow: true,
	}
	name := field(p, "lister_name", optional(asStr), nil)
	instance := field(p, "lister_instance_name", optional(asStr), nil)
	return func(ctx context.Context) (any, error) {
		if _, err := revisit.ParsePolicy(string(g.Policy)); err != nil {
			return nil, unknownPolicy(string(g.Policy))
		}
		if g.Now.IsZero() {
			g.Now = s.now()
		}
		if g.ListerID == nil && (name != nil || instance != nil) {
			id, err := s.listerNamed(ctx, name, instance)
			if err != nil || id == nil {
				return []any{}, err // no such lister has no origins
			}
			g.ListerID = id
		}
		origins, err := s.st.GrabNextVisits(ctx, g)
		switch {
		case errors.Is(err, revisit.ErrNotFound):
			return []any{}, nil // an unknown lister has no origins
		case err != nil:
			return nil, err
		}
		return listedOriginModels(origins), nil
	}
}

// listerNamed is the id of the lister a grab names by its name, its
// instance name or both, as upstream filters (either alone matches any of
// the other); nil when none matches. Several matching is refused: a grab
// reads one lister's origins.
func (s *Server) listerNamed(ctx context.Context, name, instance *string) (*uuid.UUID, error) {
	ls, err := s.st.ListerList(ctx)
	if err != nil {
		return nil, err
	}
	var found []revisit.Lister
	for _, l := range ls {
		if (name == nil || l.Name == *name) && (instance == nil || l.InstanceName == *instance) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0].ID, nil
	}
	named := make([]string, len(found))
	for i, l := range found {
		named[i] = l.Name + "/" + l.InstanceName
	}
	return nil, revisit.Invalidf("lister_name", "%d listers match (%s): give lister_name and lister_instance_name, or lister_uuid",
		len(found), strings.Join(named, ", "))
}

// asSample reads tablesample, the percentage of the origins to consider
// (PostgreSQL's TABLESAMPLE), as the fraction GrabParams.Sample is; None
// and 100 consider all.
func asSample(field string, v any) (float64, error) {
	if v == nil {
		return 0, nil
	}
	pct, err := asFloat(field, v)
	switch {
	case err != nil:
		return 0, err
	case pct <= 0 || pct > 100:
		return 0, revisit.Invalidf(field, "%g is not a percentage in (0, 100]", pct)
	case pct == 100:
		return 0, nil
	}
	return pct / 100, nil
}

func listedOriginModels(origins []revisit.ListedOrigin) []any {
	out := make([]any, len(origins))
	for i, o := range origins {
		out[i] = listedOriginModel(o)
	}
	return out
}
