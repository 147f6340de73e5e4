package journal

import (
	"errors"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/swhwire"
)

// Message is one value of the origin_visit_status topic: an
// OriginVisitStatus of the Software Heritage model.
type Message struct {
	Origin string
	Visit  int64
	// Date is when the visit reached Status, in UTC.
	Date   time.Time
	Status string
	// Snapshot is the 20-byte snapshot id, nil when the visit has none.
	Snapshot []byte
	// Type is the visit type; "" when the message has none (nil).
	Type string
}

// Key is the key of a journal message: the visit status it is about, as
// text (the date as Python prints a datetime).
type Key struct {
	Origin, Visit, Date string
}

// The kinds of malformed messages.
const (
	// KindMsgpack: the bytes are not one msgpack value revisit can read
	// (truncated, invalid UTF-8 text, an unknown extension, ...).
	KindMsgpack = "msgpack"
	// KindShape: not a map with the fields of a visit status, or a field
	// of the wrong type.
	KindShape = "shape"
	// KindStatus: a status that is not one of the six.
	KindStatus = "status"
	// KindSnapshot: a snapshot id that is not 20 bytes.
	KindSnapshot = "snapshot"
	// KindDate: a date beyond the horizon (results.max_future).
	KindDate = "date"
	// KindOrigin: an origin that is not a valid URL.
	KindOrigin = "origin"
	// KindType: a visit type revisit does not accept.
	KindType = "type"
)

// MalformedError is a message that cannot be processed: its kind and why.
type MalformedError struct {
	Kind string
	Err  error
}

func (e *MalformedError) Error() string { return e.Kind + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *MalformedError) Unwrap() error { return e.Err }

func malformed(kind, format string, args ...any) error {
	return &MalformedError{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// snapshotLen is the length of a sha1_git snapshot id.
const snapshotLen = 20

// DecodeValue reads a message value: a msgpack map with origin (str), visit
// (int), date (the timestamp extension, or the old datetime envelope),
// status (one of the six), snapshot (bin of 20 bytes, or nil), type (str
// or nil) and metadata (not read). Other keys are ignored. Errors are
// *MalformedError values.
func DecodeValue(b []byte) (Message, error) {
	v, err := swhwire.Decode(b)
	if err != nil {
		return Message{}, &MalformedError{Kind: KindMsgpack, Err: err}
	}
	m, ok := v.(swhwire.Map)
	if !ok {
		return Message{}, malformed(KindShape, "the value is a %s, not a map", swhwire.Kind(v))
	}
	var msg Message
	if msg.Origin, err = field[string](m, "origin", "str"); err != nil {
		return Message{}, err
	}
	if msg.Visit, err = visitNumber(m); err != nil {
		return Message{}, err
	}
	if msg.Date, err = field[time.Time](m, "date", "timestamp"); err != nil {
		return Message{}, err
	}
	if msg.Status, err = field[string](m, "status", "str"); err != nil {
		return Message{}, err
	}
	switch msg.Status {
	case feedback.StatusCreated, feedback.StatusOngoing, feedback.StatusFull, feedback.StatusPartial,
		feedback.StatusFailed, feedback.StatusNotFound:
	default:
		return Message{}, malformed(KindStatus, "%q is not one of created, ongoing, full, partial, failed, not_found", msg.Status)
	}
	if msg.Snapshot, err = optional[[]byte](m, "snapshot", "bin"); err != nil {
		return Message{}, err
	}
	if msg.Snapshot != nil && len(msg.Snapshot) != snapshotLen {
		return Message{}, malformed(KindSnapshot, "want %d bytes, got %d", snapshotLen, len(msg.Snapshot))
	}
	if msg.Type, err = optional[string](m, "type", "str"); err != nil {
		return Message{}, err
	}
	return msg, nil
}

// DecodeKey reads a message key: a msgpack map of str origin, visit and
// date. Errors are *MalformedError values.
func DecodeKey(b []byte) (Key, error) {
	v, err := swhwire.Decode(b)
	if err != nil {
		return Key{}, &MalformedError{Kind: KindMsgpack, Err: err}
	}
	m, ok := v.(swhwire.Map)
	if !ok {
		return Key{}, malformed(KindShape, "the key is a %s, not a map", swhwire.Kind(v))
	}
	var k Key
	for _, f := range []struct {
		name string
		to   *string
	}{{"origin", &k.Origin}, {"visit", &k.Visit}, {"date", &k.Date}} {
		if *f.to, err = field[string](m, f.name, "str"); err != nil {
			return Key{}, err
		}
	}
	return k, nil
}

// field returns the value of a required key of m, of type T (what names it
// in errors).
func field[T any](m swhwire.Map, name, what string) (T, error) {
	var zero T
	v, ok := m.Get(name)
	if !ok {
		return zero, malformed(KindShape, "%s: missing", name)
	}
	t, ok := v.(T)
	if !ok {
		return zero, malformed(KindShape, "%s: want %s, got %s", name, what, swhwire.Kind(v))
	}
	return t, nil
}

// optional is field for a key that may be absent or nil.
func optional[T any](m swhwire.Map, name, what string) (T, error) {
	var zero T
	if v, ok := m.Get(name); !ok || v == nil {
		return zero, nil
	}
	return field[T](m, name, what)
}

// visitNumber returns the visit number, a msgpack integer.
func visitNumber(m swhwire.Map) (int64, error) {
	v, ok := m.Get("visit")
	if !ok {
		return 0, malformed(KindShape, "visit: missing")
	}
	if n, ok := v.(int64); ok {
		return n, nil
	}
	return 0, malformed(KindShape, "visit: want an int of 64 bits, got %s", swhwire.Kind(v))
}

// KindOf returns the kind of a malformed-message error, "" for other
// errors.
func KindOf(err error) string {
	var e *MalformedError
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
