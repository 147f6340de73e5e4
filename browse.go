package revisit

import (
	"time"

	"github.com/google/uuid"
)

// BrowseView is an order in which an operator browses the listed origins
// of a visit type, each read in the order of one index.
type BrowseView string

// The views of OriginsBrowse.
const (
	// ViewScheduled orders the origins without a visit in flight by the
	// time they were last scheduled, the never scheduled first: oldest
	// first they are those that have waited longest; newest first, those
	// visited last.
	ViewScheduled BrowseView = "scheduled"
	// ViewFailures holds the origins whose last visit failed or found
	// nothing, by the time of that visit.
	ViewFailures BrowseView = "failures"
)

// ParseBrowseView parses "scheduled" or "failures"; empty is scheduled.
func ParseBrowseView(s string) (BrowseView, error) {
	switch BrowseView(s) {
	case "", ViewScheduled:
		return ViewScheduled, nil
	case ViewFailures:
		return ViewFailures, nil
	}
	return "", Invalidf("view", "%q is not one of scheduled, failures", abbreviate(s))
}

// OutcomeFilter selects listed origins by the outcome of their last visit:
// a VisitStatus, OutcomeNever for origins never visited, or empty for any.
type OutcomeFilter string

// OutcomeNever selects the origins never visited.
const OutcomeNever OutcomeFilter = "never"

// ParseOutcomeFilter parses successful, failed, not_found, never or empty.
func ParseOutcomeFilter(s string) (OutcomeFilter, error) {
	if s == "" || OutcomeFilter(s) == OutcomeNever || VisitStatus(s).Valid() {
		return OutcomeFilter(s), nil
	}
	return "", Invalidf("outcome", "%q is not one of successful, failed, not_found, never", abbreviate(s))
}

// BrowsePageSize is the rule of the size of a page of browsed origins.
var BrowsePageSize = Limit{Field: "limit", Min: 1, Max: 1000, Def: 50}

// OriginBrowse selects a page of the listed origins of one visit type for
// a store's OriginsBrowse, in the order of View. ListerID, Enabled and
// Outcome filter the rows; the scheduled view shows enabled or disabled
// origins, not both, since each is one range of its index.
type OriginBrowse struct {
	VisitType string
	View      BrowseView
	// Descending reverses the view's order: newest first.
	Descending bool
	ListerID   *uuid.UUID
	Enabled    EnabledFilter
	Outcome    OutcomeFilter
	// Limit is the page size (BrowsePageSize); zero means its default.
	Limit int
	// PageToken is a NextPageToken or PrevPageToken of a page of the same
	// view and order; empty starts at the beginning.
	PageToken string
}

// Validate checks the browse's visit type, view, filters and limit;
// errors name the API's parameters.
func (b OriginBrowse) Validate() error {
	if err := ValidateVisitType(b.VisitType); err != nil {
		return err
	}
	if _, err := ParseBrowseView(string(b.View)); err != nil {
		return err
	}
	if _, err := ParseOutcomeFilter(string(b.Outcome)); err != nil {
		return err
	}
	if b.View == ViewFailures && b.Outcome != "" && b.Outcome != OutcomeFilter(VisitFailed) &&
		b.Outcome != OutcomeFilter(VisitNotFound) {
		return Invalidf("outcome", "the failures view holds failed and not_found origins, not %s", b.Outcome)
	}
	if b.View != ViewFailures && b.Enabled == AnyEnabled {
		return Invalidf("enabled", "the scheduled view shows enabled (true) or disabled (false) origins, not any")
	}
	if b.Limit != 0 {
		return BrowsePageSize.Check(b.Limit)
	}
	return nil
}

// BrowsedOrigin is a listed row of a browse, with what its view orders
// by.
type BrowsedOrigin struct {
	OriginMatch
	LastScheduled *time.Time
}

// OriginBrowsePage is one page of a browse, in the order of its view. A
// page reads a bounded number of rows of its index, so that filters that
// leave most of them out cost no more than others: a page may then hold
// fewer than Limit rows, or none, and still have a NextPageToken.
// NextPageToken is empty once the last row has been read, PrevPageToken
// on the first page.
type OriginBrowsePage struct {
	Origins                      []BrowsedOrigin
	NextPageToken, PrevPageToken string
}
