package revisit

import (
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// URLMatch is how an origin search compares its query with origin URLs.
type URLMatch string

// The ways of matching a URL; both compare bytes, case included.
const (
	// MatchPrefix finds the URLs that start with the query (every URL for
	// an empty query).
	MatchPrefix URLMatch = "prefix"
	// MatchSubstring finds the URLs that contain the query.
	MatchSubstring URLMatch = "substring"
)

// MinSubstringLength is the length, in characters, of the shortest query of
// a substring search: PostgreSQL's trigram index answers from three
// characters on, and a shorter query would read every URL.
const MinSubstringLength = 3

// ParseURLMatch parses "prefix" or "substring"; empty is prefix.
func ParseURLMatch(s string) (URLMatch, error) {
	switch URLMatch(s) {
	case "", MatchPrefix:
		return MatchPrefix, nil
	case MatchSubstring:
		return MatchSubstring, nil
	}
	return "", Invalidf("match", "%q is not one of prefix, substring", abbreviate(s))
}

// OriginSearch selects listed origins by URL for a store's OriginsSearch:
// the listed rows whose URL matches Query, then those of ListerID,
// VisitType and Enabled when given.
type OriginSearch struct {
	Query string
	// Match defaults to MatchPrefix.
	Match     URLMatch
	ListerID  *uuid.UUID
	VisitType string // empty: any visit type
	Enabled   EnabledFilter
	// Limit is the page size (PageSize); zero means its default.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// Validate checks the search's query, match, visit type and limit; errors
// name the API's parameters (q, match, visit_type, limit).
func (s OriginSearch) Validate() error {
	if _, err := ParseURLMatch(string(s.Match)); err != nil {
		return err
	}
	if err := ValidateText("q", s.Query); err != nil {
		return err
	}
	if len(s.Query) > MaxURLLength {
		return Invalidf("q", "longer than %d bytes", MaxURLLength)
	}
	if hasSpaceOrControl(s.Query) {
		return Invalidf("q", "%q contains white space or control characters, which no origin URL has", abbreviate(s.Query))
	}
	if s.Match == MatchSubstring && utf8.RuneCountInString(s.Query) < MinSubstringLength {
		return Invalidf("q", "a substring search needs at least %d characters, got %q", MinSubstringLength, s.Query)
	}
	if s.VisitType != "" {
		if err := ValidateVisitType(s.VisitType); err != nil {
			return err
		}
	}
	if s.Limit != 0 {
		return PageSize.Check(s.Limit)
	}
	return nil
}

// OriginMatch is a listed row an origin search found, with the last visit
// of its origin.
type OriginMatch struct {
	ListedOrigin
	LastVisit       *time.Time
	LastVisitStatus *VisitStatus
}

// OriginSearchPage is one page of an origin search, in (url, visit_type,
// lister_id) order. A search stops after reading a bounded number of
// matching URLs, so that its cost stays bounded whatever its filters
// leave out: a page may then hold fewer than Limit rows, or none, and
// still have a NextPageToken. NextPageToken is empty once every match has
// been read.
type OriginSearchPage struct {
	Origins       []OriginMatch
	NextPageToken string
}
