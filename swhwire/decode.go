package swhwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Limits bound what Decode accepts from untrusted input.
type Limits struct {
	MaxSize  int // bytes of input
	MaxDepth int // nesting of arrays and maps
	MaxLen   int // elements of one array or map
	// MaxValues bounds the values of the whole input, keys and elements of
	// every array and map included (0: no bound): what decoding costs in
	// memory grows with them, a few tens of bytes each whatever their size
	// on the wire (an empty map is one byte).
	MaxValues int
}

// DefaultLimits are the limits of Decode.
var DefaultLimits = Limits{MaxSize: 64 << 20, MaxDepth: 64, MaxLen: 1 << 22, MaxValues: 1 << 22}

// counted counts one more value of an input of which n were read before,
// failing past MaxValues.
func (l Limits) counted(n *int) error {
	if *n++; l.MaxValues > 0 && *n > l.MaxValues {
		return fmt.Errorf("more than %d values in all exceeds the limit", l.MaxValues)
	}
	return nil
}

// Extension type codes: the timestamp, and swh-core's integers beyond 64 bits
// (big-endian magnitude).
const (
	extTimestamp = -1
	extBigInt    = 1
	extBigNegInt = 2
)

// DecodeError is input Decode refuses: where, and why.
type DecodeError struct {
	Offset int
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("swhwire: at byte %d: %s", e.Offset, e.Reason)
}

// Decode reads one msgpack value, the whole of b, with DefaultLimits.
func Decode(b []byte) (any, error) { return DefaultLimits.Decode(b) }

// Decode reads one msgpack value, the whole of b. Values come out as nil,
// bool, int64 (uint64 above MaxInt64), *big.Int (ext 1 and 2), float32,
// float64, string, []byte, []any, Map, time.Time (ext -1, UTC), or, for an
// envelope, uuid.UUID, Timedelta, PagedResult, Exception, Model,
// LastVisitStatus, time.Time (the legacy datetime envelope).
func (l Limits) Decode(b []byte) (any, error) {
	if len(b) > l.MaxSize {
		return nil, &DecodeError{0, fmt.Sprintf("input of %d bytes exceeds the limit of %d", len(b), l.MaxSize)}
	}
	r := bytes.NewReader(b)
	d := &decoder{r: r, mp: msgpack.NewDecoder(r), buf: b, size: len(b), lim: l}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, d.fail("%d bytes after the value", r.Len())
	}
	return v, nil
}

// decoder reads values from r, a reader of buf, through the library's
// decoder mp; strings and payloads are sliced out of buf.
type decoder struct {
	r    *bytes.Reader
	mp   *msgpack.Decoder
	buf  []byte
	size int
	lim  Limits
	// interned holds the short strings read so far, each boxed once.
	interned map[string]any
	// values counts the values read so far.
	values int
}

// Bounds of the strings a decoder interns, whatever the input.
const (
	maxInterned    = 1024
	maxInternedLen = 32
)

func (d *decoder) fail(format string, args ...any) error {
	return &DecodeError{d.size - d.r.Len(), fmt.Sprintf(format, args...)}
}

// wrap turns a library or payload error into a DecodeError at the present
// offset; nil stays nil.
func (d *decoder) wrap(err error) error {
	if err == nil {
		return nil
	}
	var de *DecodeError
	switch {
	case errors.As(err, &de):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return d.fail("input ends inside a value")
	}
	return d.fail("%v", err)
}

func (d *decoder) value(depth int) (any, error) {
	if err := d.lim.counted(&d.values); err != nil {
		return nil, d.fail("%v", err)
	}
	c, err := d.mp.PeekCode()
	if err != nil {
		return nil, d.wrap(err)
	}
	switch {
	case c == msgpcode.Nil:
		return nil, d.wrap(d.mp.DecodeNil())
	case c == msgpcode.False, c == msgpcode.True:
		v, err := d.mp.DecodeBool()
		return v, d.wrap(err)
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Int64:
		return d.integer(c)
	case c == msgpcode.Float:
		v, err := d.mp.DecodeFloat32()
		return v, d.wrap(err)
	case c == msgpcode.Double:
		v, err := d.mp.DecodeFloat64()
		return v, d.wrap(err)
	case msgpcode.IsString(c):
		return d.str()
	case msgpcode.IsBin(c):
		return d.raw()
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return d.array(depth)
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return d.mapOrEnvelope(depth)
	case msgpcode.IsExt(c):
		return d.ext()
	}
	return nil, d.fail("reserved type code 0x%02x", c)
}

func (d *decoder) integer(c byte) (any, error) {
	if c == msgpcode.Uint64 {
		u, err := d.mp.DecodeUint64()
		if err != nil || u > 1<<63-1 {
			return u, d.wrap(err)
		}
		return int64(u), nil
	}
	v, err := d.mp.DecodeInt64()
	return v, d.wrap(err)
}

// next returns the next n bytes of the input, without copying them, n
// checked against what is left.
func (d *decoder) next(what string, n int) ([]byte, error) {
	if n > d.r.Len() {
		return nil, d.fail("%s of %d bytes, only %d left", what, n, d.r.Len())
	}
	at := d.size - d.r.Len()
	if _, err := d.r.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, d.wrap(err)
	}
	return d.buf[at : at+n : at+n], nil
}

// bytesOf reads the str or bin header and then its bytes, in place.
func (d *decoder) bytesOf(what string) ([]byte, error) {
	n, err := d.mp.DecodeBytesLen()
	if err != nil {
		return nil, d.wrap(err)
	}
	return d.next(what, n)
}

func (d *decoder) str() (any, error) {
	b, err := d.bytesOf("str")
	if err != nil {
		return nil, err
	}
	if len(b) <= maxInternedLen {
		return d.intern(b)
	}
	if !utf8.Valid(b) {
		return nil, d.fail("str is not valid UTF-8")
	}
	return string(b), nil
}

// intern returns b as a string, one string per distinct short text: map
// keys, visit types and type names repeat in every element of a list.
func (d *decoder) intern(b []byte) (any, error) {
	if s, ok := d.interned[string(b)]; ok {
		return s, nil
	}
	if !utf8.Valid(b) {
		return nil, d.fail("str is not valid UTF-8")
	}
	s := string(b)
	if d.interned == nil {
		d.interned = map[string]any{}
	}
	if len(d.interned) < maxInterned {
		d.interned[s] = s
	}
	return s, nil
}

// raw reads a bin, copied out of the input.
func (d *decoder) raw() (any, error) {
	b, err := d.bytesOf("bin")
	return bytes.Clone(b), err
}

// rawKey reads a bin map key; the keys of envelopes are shared, not
// copied, as every model and uuid of a list has them.
func (d *decoder) rawKey() (any, error) {
	b, err := d.bytesOf("bin")
	if err != nil {
		return nil, err
	}
	for _, k := range envelopeKeys {
		if bytes.Equal(b, k) {
			return k, nil
		}
	}
	return bytes.Clone(b), nil
}

// count checks a container's element count against the limits and against
// the input left, where each element takes at least minBytes.
func (d *decoder) count(what string, n, minBytes, depth int) error {
	switch {
	case depth >= d.lim.MaxDepth:
		return d.fail("%s nested deeper than %d", what, d.lim.MaxDepth)
	case n > d.lim.MaxLen:
		return d.fail("%s of %d elements exceeds the limit of %d", what, n, d.lim.MaxLen)
	case d.lim.MaxValues > 0 && d.values+n > d.lim.MaxValues:
		return d.fail("%s of %d elements: more than %d values in all exceeds the limit", what, n, d.lim.MaxValues)
	case n*minBytes > d.r.Len():
		return d.fail("%s of %d elements, only %d bytes left", what, n, d.r.Len())
	}
	return nil
}

func (d *decoder) array(depth int) (any, error) {
	n, err := d.mp.DecodeArrayLen()
	if err != nil {
		return nil, d.wrap(err)
	}
	if err := d.count("array", n, 1, depth); err != nil {
		return nil, err
	}
	a := make([]any, n)
	for i := range a {
		if a[i], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (d *decoder) mapOrEnvelope(depth int) (any, error) {
	n, err := d.mp.DecodeMapLen()
	if err != nil {
		return nil, d.wrap(err)
	}
	if err := d.count("map", n, 2, depth); err != nil {
		return nil, err
	}
	m := make(Map, n)
	for i := range m {
		if m[i].Key, err = d.key(depth + 1); err != nil {
			return nil, err
		}
		if m[i].Value, err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	v, err := unwrapEnvelope(m)
	return v, d.wrap(err)
}

// key reads a map key: any value Python can hash, so not an array or a map.
func (d *decoder) key(depth int) (any, error) {
	if c, err := d.mp.PeekCode(); err == nil && msgpcode.IsBin(c) {
		return d.rawKey()
	}
	k, err := d.value(depth)
	if err != nil {
		return nil, err
	}
	switch k.(type) {
	case []any, Map:
		return nil, d.fail("map key is a %s, which Python cannot hash", Kind(k))
	}
	return k, nil
}

func (d *decoder) ext() (any, error) {
	id, n, err := d.mp.DecodeExtHeader()
	if err != nil {
		return nil, d.wrap(err)
	}
	if n > d.r.Len() {
		return nil, d.fail("ext %d of %d bytes, only %d left", id, n, d.r.Len())
	}
	b, err := d.next("ext", n)
	if err != nil {
		return nil, err
	}
	switch id {
	case extTimestamp:
		t, err := timestamp(b)
		return t, d.wrap(err)
	case extBigInt:
		return new(big.Int).SetBytes(b), nil
	case extBigNegInt:
		return new(big.Int).Neg(new(big.Int).SetBytes(b)), nil
	}
	return nil, d.fail("unknown ext type %d (known: -1 timestamp, 1 and 2 big integers)", id)
}

// timestamp reads the payload of the timestamp extension (32, 64 or 96 bits)
// as a UTC time truncated to microseconds.
func timestamp(b []byte) (time.Time, error) {
	var sec int64
	var ns uint32
	switch len(b) {
	case 4:
		sec = int64(binary.BigEndian.Uint32(b))
	case 8:
		v := binary.BigEndian.Uint64(b)
		sec, ns = int64(v&(1<<34-1)), uint32(v>>34)
	case 12:
		ns, sec = binary.BigEndian.Uint32(b), int64(binary.BigEndian.Uint64(b[4:]))
	default:
		return time.Time{}, fmt.Errorf("timestamp of %d bytes, want 4, 8 or 12", len(b))
	}
	if ns >= 1e9 {
		return time.Time{}, fmt.Errorf("timestamp nanoseconds %d, want less than 1e9", ns)
	}
	if sec < minTime.Unix() || sec > maxTime.Unix() {
		return time.Time{}, fmt.Errorf("timestamp %d s is outside Python's years 1 to 9999", sec)
	}
	return wireTime(time.Unix(sec, int64(ns))), nil
}

// Kind names the msgpack type of a decoded value, for error messages:
// nil, bool, int, float, str, bin, array, map, timestamp, or the Go type
// of an envelope's value.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "bool"
	case int64, uint64, *big.Int:
		return "int"
	case float32, float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bin"
	case []any:
		return "array"
	case Map:
		return "map"
	case time.Time:
		return "timestamp"
	}
	return fmt.Sprintf("%T", v)
}
