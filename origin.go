package revisit

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// OriginKey identifies an origin: one URL visited by one kind of loader.
type OriginKey struct {
	URL       string `json:"url"`
	VisitType string `json:"visit_type"`
}

// ListedOrigin is an origin as one lister reported it.
type ListedOrigin struct {
	ListerID  uuid.UUID
	URL       string
	VisitType string
	// ExtraLoaderArguments is passed to the worker with the visit; never nil
	// when read from a store.
	ExtraLoaderArguments map[string]any
	Enabled              bool
	FirstSeen            time.Time
	LastSeen             time.Time
	// LastUpdate is the forge's own date of last activity, nil when unknown.
	LastUpdate    *time.Time
	IsFork        *bool
	ForkedFromURL *string
}

// Key returns the origin key of o.
func (o ListedOrigin) Key() OriginKey { return OriginKey{URL: o.URL, VisitType: o.VisitType} }

// MaxURLLength bounds origin URLs, so that one bad record cannot bloat indexes.
const MaxURLLength = 4096

var visitTypePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidateVisitType checks that vt is a visit type name: lower-case letters,
// digits, '.', '_' or '-', at most 64 characters.
func ValidateVisitType(vt string) error {
	if !visitTypePattern.MatchString(vt) {
		return Invalidf("visit_type", "%q is not a visit type (lower-case letters, digits, '.', '_', '-'; at most 64)", vt)
	}
	return nil
}

// ValidateOriginURL checks that u is an absolute URL with a scheme and no
// white space, of at most MaxURLLength bytes.
func ValidateOriginURL(u string) error {
	if u == "" {
		return Invalidf("url", "missing")
	}
	if len(u) > MaxURLLength {
		return Invalidf("url", "longer than %d bytes", MaxURLLength)
	}
	if strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return Invalidf("url", "%q contains white space or control characters", u)
	}
	p, err := url.Parse(u)
	if err != nil {
		return Invalidf("url", "%q is not a URL: %v", u, err)
	}
	if p.Scheme == "" || (p.Host == "" && p.Opaque == "" && p.Path == "") {
		return Invalidf("url", "%q is not an absolute URL", u)
	}
	return nil
}

// Validate checks the fields a caller supplies when recording o.
func (o ListedOrigin) Validate() error {
	if o.ListerID == uuid.Nil {
		return Invalidf("lister_id", "missing")
	}
	if err := ValidateOriginURL(o.URL); err != nil {
		return err
	}
	if err := ValidateVisitType(o.VisitType); err != nil {
		return err
	}
	if o.ForkedFromURL != nil {
		if err := ValidateOriginURL(*o.ForkedFromURL); err != nil {
			e := err.(*Error)
			e.Field = "forked_from_url"
			return e
		}
	}
	return nil
}

// EnabledFilter selects listed origins by their enabled flag.
type EnabledFilter int

// The values of EnabledFilter; the zero value selects enabled origins.
const (
	OnlyEnabled EnabledFilter = iota
	OnlyDisabled
	AnyEnabled
)

// ParseEnabledFilter parses "true", "false" or "any".
func ParseEnabledFilter(s string) (EnabledFilter, error) {
	switch s {
	case "true", "":
		return OnlyEnabled, nil
	case "false":
		return OnlyDisabled, nil
	case "any":
		return AnyEnabled, nil
	}
	return 0, Invalidf("enabled", "%q is not one of true, false, any", s)
}

// ListedOriginFilter selects listed origins for ListedOriginsGet.
type ListedOriginFilter struct {
	ListerID  *uuid.UUID
	URLs      []string // empty: any URL
	VisitType string   // empty: any visit type
	Enabled   EnabledFilter
	// Limit is the page size; zero means 1000.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
}

// ListedOriginPage is one page of listed origins in (lister_id, url,
// visit_type) order. NextPageToken is empty exactly when no row follows.
type ListedOriginPage struct {
	Origins       []ListedOrigin
	NextPageToken string
}

// RecordResult counts what ListedOriginsRecord did.
type RecordResult struct {
	Inserted int
	Updated  int
}
