package swhwire

import (
	"bytes"
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/vmihailenco/msgpack/v5"
)

// Encode writes v as swh-core's packer does (use_bin_type, datetime, its
// envelopes): string as str, []byte as bin, integers in their smallest form
// and beyond 64 bits as ext 1/2, float64 as float 64, time.Time as the
// timestamp extension in UTC microseconds, uuid.UUID, Timedelta,
// PagedResult, Exception, Model and LastVisitStatus as envelopes with bin
// keys. Maps are Map (in order) or map[string]any (keys sorted); arrays are
// []any or []string. Nesting is bounded by DefaultLimits.MaxDepth.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := &encoder{mp: msgpack.NewEncoder(&buf), buf: &buf}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encoder writes values to buf through the library's encoder mp.
type encoder struct {
	mp  *msgpack.Encoder
	buf *bytes.Buffer
}

func (e *encoder) value(v any, depth int) error {
	if depth > DefaultLimits.MaxDepth {
		return fmt.Errorf("swhwire: value nested deeper than %d", DefaultLimits.MaxDepth)
	}
	switch v := v.(type) {
	case nil:
		return e.mp.EncodeNil()
	case bool:
		return e.mp.EncodeBool(v)
	case string:
		return e.mp.EncodeString(v)
	case []byte:
		return e.bin(v)
	case int:
		return e.mp.EncodeInt(int64(v))
	case int32:
		return e.mp.EncodeInt(int64(v))
	case int64:
		return e.mp.EncodeInt(v)
	case uint32:
		return e.mp.EncodeUint(uint64(v))
	case uint64:
		return e.mp.EncodeUint(v)
	case *big.Int:
		return e.bigInt(v)
	case float32:
		return e.mp.EncodeFloat32(v)
	case float64:
		return e.mp.EncodeFloat64(v)
	case time.Time:
		return e.time(v)
	case []any:
		return e.array(v, depth)
	case []string:
		return e.array(anys(v), depth)
	case Map:
		return e.pairs(v, depth)
	case map[string]any:
		return e.pairs(sortedPairs(v), depth)
	}
	return e.envelope(v, depth)
}

func (e *encoder) bin(b []byte) error {
	if err := e.mp.EncodeBytesLen(len(b)); err != nil {
		return err
	}
	_, err := e.buf.Write(b)
	return err
}

// bigInt writes n as an integer when it fits 64 bits, else as ext 1
// (positive) or 2 (negative) holding its big-endian magnitude.
func (e *encoder) bigInt(n *big.Int) error {
	switch {
	case n.IsInt64():
		return e.mp.EncodeInt(n.Int64())
	case n.IsUint64():
		return e.mp.EncodeUint(n.Uint64())
	}
	id := int8(extBigInt)
	if n.Sign() < 0 {
		id = extBigNegInt
	}
	mag := new(big.Int).Abs(n).Bytes()
	if err := e.mp.EncodeExtHeader(id, len(mag)); err != nil {
		return err
	}
	_, err := e.buf.Write(mag)
	return err
}

// time writes t as the timestamp extension: 32 bits when whole seconds fit,
// 64 bits up to 2^34 s, else 96 bits, as Python's msgpack does.
func (e *encoder) time(t time.Time) error {
	t, err := checkTime(wireTime(t))
	if err != nil {
		return fmt.Errorf("swhwire: %w", err)
	}
	return e.mp.EncodeTime(t)
}

func (e *encoder) array(a []any, depth int) error {
	if err := e.mp.EncodeArrayLen(len(a)); err != nil {
		return err
	}
	for _, v := range a {
		if err := e.value(v, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) pairs(m Map, depth int) error {
	if err := e.mp.EncodeMapLen(len(m)); err != nil {
		return err
	}
	for _, p := range m {
		if err := e.value(p.Key, depth+1); err != nil {
			return err
		}
		if err := e.value(p.Value, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// envelopeKeys are the bin keys of an envelope, b"swhtype" then b"d".
var envelopeKeys = [2][]byte{[]byte("swhtype"), []byte("d")}

// envelope writes the types Python sends as {b"swhtype": name, b"d": payload}.
func (e *encoder) envelope(v any, depth int) error {
	if m, ok := v.(Model); ok {
		// The payload is the fields and "__type__", written in place.
		if err := e.envelopeHead("scheduler_model"); err != nil {
			return err
		}
		if err := e.mp.EncodeMapLen(len(m.Fields) + 1); err != nil {
			return err
		}
		for _, p := range m.Fields {
			if err := e.value(p.Key, depth+2); err != nil {
				return err
			}
			if err := e.value(p.Value, depth+2); err != nil {
				return err
			}
		}
		if err := e.mp.EncodeString("__type__"); err != nil {
			return err
		}
		return e.mp.EncodeString(m.Type)
	}
	name, payload, ok := envelopeOf(v)
	if !ok {
		return fmt.Errorf("swhwire: cannot encode a %T", v)
	}
	if err := e.envelopeHead(name); err != nil {
		return err
	}
	return e.value(payload, depth+1)
}

// envelopeHead writes an envelope's map header, its type and the key of
// its payload, which comes next.
func (e *encoder) envelopeHead(name string) error {
	if err := e.mp.EncodeMapLen(2); err != nil {
		return err
	}
	if err := e.bin(envelopeKeys[0]); err != nil {
		return err
	}
	if err := e.mp.EncodeString(name); err != nil {
		return err
	}
	return e.bin(envelopeKeys[1])
}

// envelopeOf is v's swhtype and payload, as swh-core's encoders build them.
func envelopeOf(v any) (name string, payload any, ok bool) {
	switch v := v.(type) {
	case uuid.UUID:
		return "uuid", v.String(), true
	case Timedelta:
		return "timedelta", Map{{"days", v.Days}, {"seconds", v.Seconds}, {"microseconds", v.Microseconds}}, true
	case PagedResult:
		return "paged_result", Map{{"results", v.Results}, {"next_page_token", v.NextPageToken}, {"total_results", v.TotalResults}}, true
	case Exception:
		return "exception", v.Body(), true
	case Model:
		return "scheduler_model", append(slices.Clip(v.Fields), Pair{"__type__", v.Type}), true
	case LastVisitStatus:
		return "last_visit_status", string(v), true
	}
	return "", nil, false
}

func anys(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

func sortedPairs(m map[string]any) Map {
	out := make(Map, 0, len(m))
	for k, v := range m {
		out = append(out, Pair{k, v})
	}
	slices.SortFunc(out, func(a, b Pair) int { return cmp.Compare(a.Key.(string), b.Key.(string)) })
	return out
}
