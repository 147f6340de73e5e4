package revisit

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The rules every input path (API, JSON lines, CLI flags, broker events)
// applies to the same kinds of value, so that one value is accepted or
// refused, with the same message, whichever way it comes in.

// ValidateText checks that s, the value of a text field, is valid UTF-8:
// replacing the invalid bytes would silently make it another value.
func ValidateText(field, s string) error {
	if !utf8.ValidString(s) {
		return Invalidf(field, "not valid UTF-8")
	}
	return nil
}

// MaxNameLength bounds the names of listers, of their instances and of
// task types.
const MaxNameLength = 255

// ValidateName checks the name of a lister, of its instance or of a task
// type: at most MaxNameLength bytes of valid UTF-8, without control
// characters (NUL, newline, tab…) and without white space at either end,
// which no one types on purpose and every reader would miss.
func ValidateName(field, s string) error {
	switch {
	case len(s) > MaxNameLength:
		return Invalidf(field, "%d bytes long, at most %d", len(s), MaxNameLength)
	case !utf8.ValidString(s):
		return Invalidf(field, "not valid UTF-8")
	case strings.ContainsFunc(s, unicode.IsControl):
		return Invalidf(field, "%q holds a control character (NUL, newline, tab…)", s)
	case strings.TrimSpace(s) != s:
		return Invalidf(field, "%q has white space at its start or end", s)
	}
	return nil
}

// ValidateListerName checks the name (required) and the instance name of
// a lister (ValidateName).
func ValidateListerName(name, instance string) error {
	if name == "" {
		return Invalidf("name", "missing lister name")
	}
	if err := ValidateName("name", name); err != nil {
		return err
	}
	return ValidateName("instance_name", instance)
}

// SnapshotIDLength is the length of a snapshot id (a SHA-1): 20 bytes,
// written as 40 hex digits.
const SnapshotIDLength = 20

// ParseSnapshotID decodes a snapshot id written as 40 hex digits.
func ParseSnapshotID(field, s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != SnapshotIDLength {
		return nil, Invalidf(field, "want a snapshot id of 40 hex digits (20 bytes), got %q", abbreviate(s))
	}
	return b, nil
}

// ValidateSnapshotID checks that id, when given, is a snapshot id of
// SnapshotIDLength bytes.
func ValidateSnapshotID(field string, id []byte) error {
	if id != nil && len(id) != SnapshotIDLength {
		return Invalidf(field, "want a snapshot id of 40 hex digits (20 bytes), got %d bytes", len(id))
	}
	return nil
}

// ExampleUUID and ExampleTime show, in error messages, what a UUID and a
// time are written as.
const (
	ExampleUUID = "0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a"
	ExampleTime = "2026-03-01T12:00:00Z"
)

// ParseUUID parses the UUID of a field.
func ParseUUID(field, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, Invalidf(field, "want a UUID such as %s, got %q", ExampleUUID, abbreviate(s))
	}
	return id, nil
}

// ParseTime parses the RFC 3339 time (with a zone) of a field, in UTC,
// in years 1 to 9999 (ValidateTime).
func ParseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, Invalidf(field, "want an RFC 3339 time such as %s, got %q", ExampleTime, abbreviate(s))
	}
	return t.UTC(), ValidateTime(field, t)
}

// ValidateTime checks that t, the time of a field, falls in years 1 to
// 9999 in UTC: the times every reader of revisit's data (the swh RPC's
// Python callers, JSON, SQL) can write. The zero time.Time, year 1, is a
// time like another.
func ValidateTime(field string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return Invalidf(field, "%s is outside years 1 to 9999", t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Limit is the rule of one integer input (a count, a page size, a number
// of seconds): absent, it takes Default; given, it must be in [Min, Max].
type Limit struct {
	Field         string
	Min, Max, Def int
}

// Check checks a given value n.
func (l Limit) Check(n int) error {
	if n < l.Min || n > l.Max {
		return Invalidf(l.Field, "must be between %d and %d, not %d", l.Min, l.Max, n)
	}
	return nil
}

// Parse parses a value written as text (a query parameter, a command-line
// argument) and checks it.
func (l Limit) Parse(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, Invalidf(l.Field, "want an integer between %d and %d, got %q", l.Min, l.Max, abbreviate(s))
	}
	return n, l.Check(n)
}

// Value returns the value of an optional input: Def when absent, else n
// once checked.
func (l Limit) Value(n *int) (int, error) {
	if n == nil {
		return l.Def, nil
	}
	return *n, l.Check(*n)
}

// abbreviate shortens untrusted text quoted in an error to 80 bytes, at a
// character boundary.
func abbreviate(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
