package celery

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/revisit-sched/revisit"
)

// VisitStatus is the outcome of a visit as a worker reports it.
type VisitStatus string

// The visit statuses a worker result maps to.
const (
	VisitEventful   VisitStatus = "eventful"
	VisitUneventful VisitStatus = "uneventful"
	VisitFailed     VisitStatus = "failed"
	VisitNotFound   VisitStatus = "not_found"
)

// snapshotSWHIDPrefix may precede a snapshot id given as a SWHID.
const snapshotSWHIDPrefix = "swh:1:snp:"

// VisitResult is what a worker says a visit (or any task) produced: the
// result object of a task-result event, or the parsed repr of a
// task-succeeded result.
type VisitResult struct {
	// Status is the outcome.
	Status VisitStatus
	// Eventful is what the worker said about the snapshot changing: set for
	// eventful / uneventful statuses and for "success" with a boolean
	// "eventful"; nil when the worker did not say (failed, not_found, or an
	// inferred status).
	Eventful *bool
	// SnapshotID is the snapshot id ("snapshot_id", else "snapshot": hex,
	// a "swh:1:snp:" SWHID, or a 20-byte Python bytes value); nil when absent.
	SnapshotID []byte
	// Inferred is true when the result had no "status" and Status was taken
	// from its truthiness (a non-empty result is eventful), as the upstream
	// Software Heritage listener does for generic tasks such as listers.
	Inferred bool
	// Raw is the result object itself (JSON numbers as json.Number, Python
	// ints as int64 or *big.Int); nil when the result was not an object.
	Raw map[string]any
}

// ParseSucceededResult reads the result of a task-succeeded event, the
// Python repr of what the task returned, when that is a dict such as
// {'status': 'eventful', 'snapshot_id': '…'} (what Software Heritage loaders
// return). It fails, wrapping ErrBadResult, when the repr does not parse, is
// not a dict, or has no or an unknown "status".
func ParseSucceededResult(repr string) (VisitResult, error) {
	v, err := ParsePyLiteral(repr)
	if err != nil {
		return VisitResult{}, fmt.Errorf("%w: %w", ErrBadResult, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return VisitResult{}, fmt.Errorf("%w: result is a Python %s, not a dict", ErrBadResult, pyTypeName(v))
	}
	return visitResult(v, true)
}

// ParseTaskResult reads the result of a task-succeeded event of any task,
// the Python repr of what the task returned: a dict with a "status" reads
// as in ParseSucceededResult; any other value (a dict without "status",
// None, a number, a list…) gets an eventful or uneventful status from its
// Python truth value, with Inferred set, as the upstream Software Heritage
// listener does for generic tasks such as listers. It fails, wrapping
// ErrBadResult, when the repr does not parse or its "status" is unknown.
func ParseTaskResult(repr string) (VisitResult, error) {
	v, err := ParsePyLiteral(repr)
	if err != nil {
		return VisitResult{}, fmt.Errorf("%w: %w", ErrBadResult, err)
	}
	return visitResult(v, false)
}

// visitResult maps a decoded result value (from JSON or a Python literal)
// to a VisitResult. With requireStatus false, a result without "status"
// gets a status inferred from its truthiness.
func visitResult(v any, requireStatus bool) (VisitResult, error) {
	m, isMap := v.(map[string]any)
	st, hasStatus := m["status"]
	if !isMap || !hasStatus {
		if requireStatus {
			return VisitResult{}, fmt.Errorf("%w: result has no \"status\"", ErrBadResult)
		}
		r := VisitResult{Status: VisitUneventful, Inferred: true, Raw: m}
		if truthy(v) {
			r.Status = VisitEventful
		}
		if isMap {
			snap, err := snapshotID(m)
			if err != nil {
				return VisitResult{}, err
			}
			r.SnapshotID = snap
		}
		return r, nil
	}
	s, ok := st.(string)
	if !ok {
		return VisitResult{}, fmt.Errorf("%w: \"status\" is a %s, want a string", ErrBadResult, pyTypeName(st))
	}
	r := VisitResult{Raw: m}
	yes, no := true, false
	switch s {
	case "eventful":
		r.Status, r.Eventful = VisitEventful, &yes
	case "uneventful":
		r.Status, r.Eventful = VisitUneventful, &no
	case "failed":
		r.Status = VisitFailed
	case "not_found":
		r.Status = VisitNotFound
	case "success":
		switch e := m["eventful"].(type) {
		case bool:
			r.Eventful = &e
			r.Status = VisitUneventful
			if e {
				r.Status = VisitEventful
			}
		case nil:
			// Upstream reads a missing "eventful" as false.
			r.Status = VisitUneventful
		default:
			return VisitResult{}, fmt.Errorf("%w: \"eventful\" is a %s, want a boolean", ErrBadResult, pyTypeName(e))
		}
	default:
		return VisitResult{}, fmt.Errorf("%w: unknown status %q (want eventful, uneventful, failed, not_found or success)", ErrBadResult, s)
	}
	snap, err := snapshotID(m)
	if err != nil {
		return VisitResult{}, err
	}
	r.SnapshotID = snap
	return r, nil
}

// snapshotID reads the snapshot id of a result object: 40 hex digits
// (after an optional swh:1:snp: prefix), or, as bytes, the 20 bytes
// themselves.
func snapshotID(m map[string]any) ([]byte, error) {
	key := "snapshot_id"
	v, ok := m[key]
	if !ok || v == nil {
		key = "snapshot"
		v = m[key]
	}
	var text string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		text = x
	case []byte:
		if len(x) == revisit.SnapshotIDLength {
			return append([]byte(nil), x...), nil
		}
		text = string(x)
	default:
		return nil, fmt.Errorf("%w: %q is a %s, want a hex string", ErrBadResult, key, pyTypeName(v))
	}
	if text == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(strings.TrimPrefix(text, snapshotSWHIDPrefix))
	if err != nil || len(b) != revisit.SnapshotIDLength {
		return nil, fmt.Errorf("%w: %q is not a snapshot id of 40 hex digits (20 bytes): %.80q", ErrBadResult, key, text)
	}
	return b, nil
}

// truthy is Python's truth value of a decoded JSON or Python value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []byte:
		return len(x) > 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case *big.Int:
		return x != nil && x.Sign() != 0
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	}
	return true
}

// pyTypeName names the Python type of a decoded value, for errors.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
