package revisit

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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

// ValidateOriginURL checks that u can name an origin: text of 1 to
// MaxURLLength bytes of valid UTF-8 without NUL. Origins are named by their
// URL as their lister wrote it, and an archive's oldest ones are not all
// absolute URLs, so the store and the results take any such text;
// ValidateAbsoluteURL is the rule of what revisit's own users record.
func ValidateOriginURL(u string) error {
	if u == "" {
		return Invalidf("url", "missing")
	}
	if len(u) > MaxURLLength {
		return Invalidf("url", "longer than %d bytes", MaxURLLength)
	}
	if err := ValidateText("url", u); err != nil {
		return err
	}
	if strings.ContainsRune(u, 0) {
		return Invalidf("url", "%q contains a NUL character", u)
	}
	return nil
}

// ValidateAbsoluteURL checks that u is an origin URL (ValidateOriginURL)
// that is an absolute URL with a scheme and no white space: what revisit's
// API and files accept, so that a typing slip is caught before it is
// scheduled.
func ValidateAbsoluteURL(u string) error {
	if err := ValidateOriginURL(u); err != nil {
		return err
	}
	if hasSpaceOrControl(u) {
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

// hasSpaceOrControl reports whether s holds white space or a control
// character, which no origin URL holds.
func hasSpaceOrControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// ValidateAbsolute checks o as Validate does, with absolute URLs
// (ValidateAbsoluteURL): the rule of revisit's own API and files.
func (o ListedOrigin) ValidateAbsolute() error {
	if err := ValidateAbsoluteURL(o.URL); err != nil {
		return err
	}
	if o.ForkedFromURL != nil {
		if err := renamed(ValidateAbsoluteURL(*o.ForkedFromURL), "forked_from_url"); err != nil {
			return err
		}
	}
	return o.Validate()
}

// Validate checks the fields a caller supplies when recording o: the
// lister, an origin URL (ValidateOriginURL) and a visit type, and extra
// loader arguments workers can decode.
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
		if err := renamed(ValidateOriginURL(*o.ForkedFromURL), "forked_from_url"); err != nil {
			return err
		}
	}
	return ValidateExtraLoaderArguments(o.ExtraLoaderArguments)
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

// PageSize is the rule of the size of a page of listed origins.
var PageSize = Limit{Field: "limit", Min: 1, Max: 10_000, Def: 1000}

// ListedOriginFilter selects listed origins for ListedOriginsGet.
type ListedOriginFilter struct {
	ListerID  *uuid.UUID
	URLs      []string // empty: any URL
	VisitType string   // empty: any visit type
	Enabled   EnabledFilter
	// Limit is the page size (PageSize); zero means its default.
	Limit int
	// PageToken continues a previous page; empty starts at the beginning.
	PageToken string
	// AfterListerURL resumes after every row of that lister and URL; it
	// excludes PageToken.
	AfterListerURL *ListerURL
}

// ListerURL is a lister and a URL: where the Software Heritage RPC's page
// tokens resume a listing of listed origins.
type ListerURL struct {
	ListerID uuid.UUID
	URL      string
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

// Bounds of the extra loader arguments of a listed origin, which every
// visit of the origin carries to the workers: their JSON decoders refuse
// deep nesting, and a large object bloats every message.
const (
	MaxExtraLoaderArgumentsDepth = 32
	MaxExtraLoaderArgumentsBytes = 64 << 10
)

// ValidateExtraLoaderArguments checks that args nest at most
// MaxExtraLoaderArgumentsDepth objects and arrays deep, hold only valid
// UTF-8 text, and encode as JSON in at most MaxExtraLoaderArgumentsBytes.
func ValidateExtraLoaderArguments(args map[string]any) error {
	const field = "extra_loader_arguments"
	if len(args) == 0 {
		return nil
	}
	if path, problem := checkNested(args, 1); problem != "" {
		return Invalidf(field+path, "%s", problem)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return Invalidf(field, "cannot be written as JSON: %v", err)
	}
	if len(b) > MaxExtraLoaderArgumentsBytes {
		return Invalidf(field, "%d bytes as JSON, at most %d (64 KiB)", len(b), MaxExtraLoaderArgumentsBytes)
	}
	return nil
}

// checkNested walks v, the depth-th object or array of its nesting when
// it is one, and returns the path
// to the first value beyond MaxExtraLoaderArgumentsDepth or with text that
// is not valid UTF-8, and what is wrong with it; "" when all is well.
func checkNested(v any, depth int) (path, problem string) {
	switch v.(type) {
	case map[string]any, []any:
		if depth > MaxExtraLoaderArgumentsDepth {
			return "", fmt.Sprintf("nested deeper than %d objects and arrays", MaxExtraLoaderArgumentsDepth)
		}
	}
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return "", "not valid UTF-8"
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return "", "a key is not valid UTF-8"
			}
			if p, problem := checkNested(e, depth+1); problem != "" {
				return "." + k + p, problem
			}
		}
	case []any:
		for i, e := range x {
			if p, problem := checkNested(e, depth+1); problem != "" {
				return fmt.Sprintf("[%d]%s", i, p), problem
			}
		}
	}
	return "", ""
}

// renamed is err, a *Error from a check of field "url", naming field
// instead; nil stays nil.
func renamed(err error, field string) error {
	if e, ok := err.(*Error); ok {
		e.Field = field
	}
	return err
}
