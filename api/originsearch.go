package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// OriginSearchPage is one page of GET /api/v1/origins/search: listed rows
// in (url, visit_type, lister_id) order. next_page_token is absent once
// every match has been read; a page may be short, even empty, and still
// have one (revisit.OriginSearchPage).
type OriginSearchPage struct {
	Origins       []OriginMatch `json:"origins"`
	NextPageToken string        `json:"next_page_token,omitempty"`
}

// OriginMatch is a listed row a search found, with the last visit of its
// origin.
type OriginMatch struct {
	ListedOrigin
	LastVisit       *time.Time `json:"last_visit"`
	LastVisitStatus *string    `json:"last_visit_status"`
}

// NewOriginMatch returns the JSON form of m.
func NewOriginMatch(m revisit.OriginMatch) OriginMatch {
	out := OriginMatch{ListedOrigin: NewListedOrigin(m.ListedOrigin), LastVisit: m.LastVisit}
	if m.LastVisitStatus != nil {
		st := string(*m.LastVisitStatus)
		out.LastVisitStatus = &st
	}
	return out
}

// Domain returns m as revisit holds it.
func (m OriginMatch) Domain() revisit.OriginMatch {
	om := revisit.OriginMatch{ListedOrigin: m.ListedOrigin.Domain(), LastVisit: m.LastVisit}
	if m.LastVisitStatus != nil {
		st := revisit.VisitStatus(*m.LastVisitStatus)
		om.LastVisitStatus = &st
	}
	return om
}

// originSearchParams are the query parameters of GET /api/v1/origins/search.
var originSearchParams = []Param{
	{Name: "q", Type: "string", Description: "the start of the URLs (prefix), or a part of them (substring, 3 characters or more); case counts"},
	{Name: "match", Type: "string", Description: "prefix (default) or substring"},
	{Name: "lister", Type: "string", Description: "only the rows of this lister: NAME or NAME/INSTANCE"},
	{Name: "visit_type", Type: "string"},
	{Name: "enabled", Type: "string", Description: "true, false or any (default)"},
	{Name: "limit", Type: "integer", Description: "page size, 1 to 10000 (default 1000)"},
	{Name: "page_token", Type: "string", Description: "the next_page_token of the previous page"},
}

func (s *Server) handleOriginSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search := revisit.OriginSearch{Query: q.Get("q"), VisitType: q.Get("visit_type"), Enabled: revisit.AnyEnabled,
		PageToken: q.Get("page_token")}
	var err error
	search.Match, err = revisit.ParseURLMatch(q.Get("match"))
	if err == nil && q.Get("enabled") != "" {
		search.Enabled, err = revisit.ParseEnabledFilter(q.Get("enabled"))
	}
	if err == nil {
		search.Limit, err = queryLimit(r, revisit.PageSize)
	}
	if err == nil {
		err = search.Validate()
	}
	if err == nil {
		search.ListerID, err = s.listerNamed(r.Context(), "lister", q.Get("lister"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.st.OriginsSearch(r.Context(), search)
	s.reply(w, r, OriginSearchPage{Origins: mapSlice(page.Origins, NewOriginMatch), NextPageToken: page.NextPageToken}, err)
}

// listerNamed returns the id of the lister that the parameter field names
// as NAME or NAME/INSTANCE; nil when spec is empty. A lister that does not
// exist is an invalid-input error naming field.
func (s *Server) listerNamed(ctx context.Context, field, spec string) (*uuid.UUID, error) {
	if spec == "" {
		return nil, nil
	}
	name, instance, _ := strings.Cut(spec, "/")
	switch {
	case name == "":
		return nil, revisit.Invalidf(field, "%q has no lister name (NAME or NAME/INSTANCE)", spec)
	case strings.ContainsFunc(spec, unicode.IsControl):
		return nil, revisit.Invalidf(field, "%q contains control characters", spec)
	}
	l, err := s.st.ListerGet(ctx, name, instance)
	if revisit.Code(err) == revisit.CodeNotFound {
		return nil, revisit.Invalidf(field, "no lister %q", spec)
	}
	if err != nil {
		return nil, err
	}
	return &l.ID, nil
}

// OriginBrowsePage is one page of GET /api/v1/origins/browse, in the order
// of its view; a page may be short, even empty, and still have a
// next_page_token (revisit.OriginBrowsePage).
type OriginBrowsePage struct {
	Origins       []BrowsedOrigin `json:"origins"`
	NextPageToken string          `json:"next_page_token,omitempty"`
	PrevPageToken string          `json:"prev_page_token,omitempty"`
}

// BrowsedOrigin is a listed row of a browse, with its last visit and when
// it was last scheduled.
type BrowsedOrigin struct {
	OriginMatch
	LastScheduled *time.Time `json:"last_scheduled"`
}

// originBrowseParams are the query parameters of GET /api/v1/origins/browse.
var originBrowseParams = []Param{
	{Name: "visit_type", Type: "string", Description: "the visit type whose origins to browse (required)"},
	{Name: "view", Type: "string", Description: "scheduled (default: by the time last scheduled, never scheduled first) " +
		"or failures (the origins whose last visit failed or found nothing, by its time)"},
	{Name: "order", Type: "string", Description: "asc (default: oldest first) or desc (newest first)"},
	{Name: "lister", Type: "string", Description: "only the rows of this lister: NAME or NAME/INSTANCE"},
	{Name: "enabled", Type: "string", Description: "true (default) or false; with the failures view, also any"},
	{Name: "outcome", Type: "string", Description: "the last visit's: successful, failed, not_found or never (not visited yet)"},
	{Name: "limit", Type: "integer", Description: fmt.Sprintf("page size, %d to %d (default %d)",
		revisit.BrowsePageSize.Min, revisit.BrowsePageSize.Max, revisit.BrowsePageSize.Def)},
	{Name: "page_token", Type: "string", Description: "the next_page_token or prev_page_token of a page of the same view and order"},
}

func (s *Server) handleOriginBrowse(w http.ResponseWriter, r *http.Request) {
	b, err := s.originBrowse(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.st.OriginsBrowse(r.Context(), b)
	out := OriginBrowsePage{NextPageToken: page.NextPageToken, PrevPageToken: page.PrevPageToken,
		Origins: mapSlice(page.Origins, func(o revisit.BrowsedOrigin) BrowsedOrigin {
			return BrowsedOrigin{OriginMatch: NewOriginMatch(o.OriginMatch), LastScheduled: o.LastScheduled}
		})}
	s.reply(w, r, out, err)
}

// originBrowse reads the browse of a request's query.
func (s *Server) originBrowse(r *http.Request) (revisit.OriginBrowse, error) {
	q := r.URL.Query()
	b := revisit.OriginBrowse{VisitType: q.Get("visit_type"), PageToken: q.Get("page_token")}
	if b.VisitType == "" {
		return b, revisit.Invalidf("visit_type", "missing: the visit type whose origins to browse")
	}
	var err error
	if b.View, err = revisit.ParseBrowseView(q.Get("view")); err != nil {
		return b, err
	}
	switch q.Get("order") {
	case "", "asc":
	case "desc":
		b.Descending = true
	default:
		return b, revisit.Invalidf("order", "%q is not one of asc, desc", q.Get("order"))
	}
	if b.View == revisit.ViewFailures && q.Get("enabled") == "" {
		b.Enabled = revisit.AnyEnabled
	} else if b.Enabled, err = revisit.ParseEnabledFilter(q.Get("enabled")); err != nil {
		return b, err
	}
	if b.Outcome, err = revisit.ParseOutcomeFilter(q.Get("outcome")); err != nil {
		return b, err
	}
	if b.Limit, err = queryLimit(r, revisit.BrowsePageSize); err != nil {
		return b, err
	}
	if err := b.Validate(); err != nil {
		return b, err
	}
	b.ListerID, err = s.listerNamed(r.Context(), "lister", q.Get("lister"))
	return b, err
}
