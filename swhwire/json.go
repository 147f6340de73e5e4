package swhwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/revisit-sched/revisit/internal/kit/jsonobj"
)

// The JSON form of the same values, which swh-core's RPC uses for clients
// that ask for it: every envelope has str keys, datetimes are "datetime"
// envelopes of their isoformat() text and bytes are "bytes" envelopes of
// their Base85 text (RFC 1924's alphabet, as Python's b85encode). Floats
// keep a fraction or an exponent, so that Python reads them back as floats.

// EncodeJSON writes v, any value Encode takes, as JSON. Dict keys that are
// ints, bools or None become their JSON text, as Python's json module
// writes them.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := jsonValue(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func jsonValue(buf *bytes.Buffer, v any, depth int) error {
	if depth > DefaultLimits.MaxDepth {
		return fmt.Errorf("swhwire: value nested deeper than %d", DefaultLimits.MaxDepth)
	}
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		return jsonString(buf, v)
	case int:
		buf.WriteString(strconv.Itoa(v))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(v), 10))
	case int64:
		buf.WriteString(strconv.FormatInt(v, 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(v), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(v, 10))
	case *big.Int:
		buf.WriteString(v.String())
	case float32:
		return jsonFloat(buf, float64(v))
	case float64:
		return jsonFloat(buf, v)
	case []byte:
		return jsonValue(buf, Map{{"swhtype", "bytes"}, {"d", b85Encode(v)}}, depth)
	case time.Time:
		t, err := checkTime(wireTime(v))
		if err != nil {
			return fmt.Errorf("swhwire: %w", err)
		}
		return jsonValue(buf, Map{{"swhtype", "datetime"}, {"d", isoformat(t)}}, depth)
	case []string:
		return jsonValue(buf, anys(v), depth)
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteString(", ")
			}
			if err := jsonValue(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		return jsonValue(buf, sortedPairs(v), depth)
	case Map:
		buf.WriteByte('{')
		for i, p := range v {
			if i > 0 {
				buf.WriteString(", ")
			}
			key, err := jsonKey(p.Key)
			if err != nil {
				return err
			}
			if err := jsonString(buf, key); err != nil {
				return err
			}
			buf.WriteString(": ")
			if err := jsonValue(buf, p.Value, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		name, payload, ok := envelopeOf(v)
		if !ok {
			return fmt.Errorf("swhwire: cannot encode a %T", v)
		}
		return jsonValue(buf, Map{{"swhtype", name}, {"d", payload}}, depth)
	}
	return nil
}

func jsonString(buf *bytes.Buffer, s string) error {
	b, err := json.Marshal(s)
	buf.Write(b)
	return err
}

// jsonFloat writes f as Python's repr does: a fraction or an exponent
// always, the exponent beyond 1e16 and below 1e-4.
func jsonFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("swhwire: %v has no JSON form", f)
	}
	if exp := math.Abs(f); exp != 0 && (exp < 1e-4 || exp >= 1e16) {
		buf.WriteString(strconv.FormatFloat(f, 'e', -1, 64))
		return nil
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	buf.WriteString(s)
	return nil
}

// jsonKey is the JSON text of a dict key.
func jsonKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(k), nil
	case int64, uint64, int, *big.Int:
		return fmt.Sprint(k), nil
	}
	return "", fmt.Errorf("swhwire: a dict key of type %s has no JSON form", Kind(k))
}

// isoformat is Python's datetime.isoformat() of a UTC datetime.
func isoformat(t time.Time) string {
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// DecodeJSON reads one JSON value, the whole of b, within l, as Decode
// reads msgpack: numbers with a fraction or an exponent are float64, the
// others int64 (uint64 or *big.Int beyond); objects are Maps, or the
// values of the envelopes they are.
func DecodeJSON(b []byte, l Limits) (any, error) {
	if len(b) > l.MaxSize {
		return nil, &DecodeError{0, fmt.Sprintf("input of %d bytes exceeds the limit of %d", len(b), l.MaxSize)}
	}
	if jsonobj.HasLoneSurrogate(b) {
		return nil, &DecodeError{0, `text escapes a lone UTF-16 surrogate (\ud800–\udfff): not valid text`}
	}
	d := &jsonDecoder{dec: json.NewDecoder(bytes.NewReader(b)), lim: l}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return nil, d.fail(err)
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, d.fail(errors.New("data after the value"))
	}
	return v, nil
}

type jsonDecoder struct {
	dec *json.Decoder
	lim Limits
	// values counts the values read so far.
	values int
}

func (d *jsonDecoder) fail(err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("input ends inside a value")
	}
	return &DecodeError{int(d.dec.InputOffset()), strings.TrimPrefix(err.Error(), "json: ")}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if err := d.lim.counted(&d.values); err != nil {
		return nil, err
	}
	tok, err := d.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= d.lim.MaxDepth {
			return nil, fmt.Errorf("%s nested deeper than %d", map[json.Delim]string{'[': "array", '{': "map"}[t], d.lim.MaxDepth)
		}
		if t == '[' {
			return d.array(depth)
		}
		return d.object(depth)
	case json.Number:
		return jsonNumber(t)
	}
	return tok, nil // nil, bool, string
}

func (d *jsonDecoder) array(depth int) (any, error) {
	a := []any{}
	for d.dec.More() {
		if len(a) >= d.lim.MaxLen {
			return nil, fmt.Errorf("array of more than %d elements exceeds the limit", d.lim.MaxLen)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	_, err := d.dec.Token()
	return a, err
}

func (d *jsonDecoder) object(depth int) (any, error) {
	m := Map{}
	for d.dec.More() {
		if len(m) >= d.lim.MaxLen {
			return nil, fmt.Errorf("map of more than %d elements exceeds the limit", d.lim.MaxLen)
		}
		k, err := d.dec.Token()
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m = append(m, Pair{k, v})
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, err
	}
	return unwrapJSONEnvelope(m)
}

// jsonNumber reads a number as Python's json module does.
func jsonNumber(n json.Number) (any, error) {
	s := n.String()
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", s, err)
		}
		return f, nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("number %s is not an integer", s)
	}
	return b, nil
}

// unwrapJSONEnvelope returns the value m stands for when its keys are
// exactly the str "swhtype" and "d" and the type is known (the types of
// msgpack envelopes and "bytes"); otherwise m itself.
func unwrapJSONEnvelope(m Map) (any, error) {
	if len(m) != 2 {
		return m, nil
	}
	name, okT := m.Get("swhtype")
	payload, okD := m.Get("d")
	s, isStr := name.(string)
	if !okT || !okD || !isStr {
		return m, nil
	}
	dec, ok := envelopeDecoders[s]
	if s == "bytes" {
		dec, ok = decodeB85, true
	}
	if !ok {
		return m, nil
	}
	v, err := dec(payload)
	if err != nil {
		return nil, fmt.Errorf("%s envelope: %w", s, err)
	}
	return v, nil
}

// b85Alphabet is RFC 1924's, which Python's base64.b85encode uses.
const b85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// b85Encode is Python's base64.b85encode(b) (no padding): each group of 4
// bytes as 5 characters, a last short group padded with zeros and its
// output cut by as many characters.
func b85Encode(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i += 4 {
		var chunk [4]byte
		n := copy(chunk[:], b[i:])
		v := uint32(chunk[0])<<24 | uint32(chunk[1])<<16 | uint32(chunk[2])<<8 | uint32(chunk[3])
		var enc [5]byte
		for j := 4; j >= 0; j-- {
			enc[j] = b85Alphabet[v%85]
			v /= 85
		}
		out.Write(enc[:n+1])
	}
	return out.String()
}

// b85Decode is Python's base64.b85decode: a last short group is padded
// with the last character of the alphabet.
func b85Decode(s string) ([]byte, error) {
	out := []byte{}
	for i := 0; i < len(s); i += 5 {
		group := s[i:min(i+5, len(s))]
		if len(group) == 1 {
			return nil, fmt.Errorf("base85 text of %d characters ends with a lone character", len(s))
		}
		var v uint64
		for j := range 5 {
			c := byte('~')
			if j < len(group) {
				c = group[j]
			}
			k := strings.IndexByte(b85Alphabet, c)
			if k < 0 {
				return nil, fmt.Errorf("%q is not a base85 character", c)
			}
			v = v*85 + uint64(k)
		}
		if v > math.MaxUint32 {
			return nil, fmt.Errorf("base85 group %q overflows 32 bits", group)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		out = out[:len(out)-(5-len(group))]
	}
	return out, nil
}

func decodeB85(d any) (any, error) {
	s, ok := d.(string)
	if !ok {
		return nil, fmt.Errorf("payload is a %s, want a str", Kind(d))
	}
	return b85Decode(s)
}
