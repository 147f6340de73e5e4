package swhrpc_test

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit/swhwire"
)

// comparison holds a recorded response against ours: the same types and
// envelopes, the same map keys and model fields, lists of the same length,
// and equal values, except ids and clocks the server generated, which must
// be consistent with what the translation learned (and teach it what it has
// not seen yet). A value the client sent must come back as it was sent.
type comparison struct {
	tr    *translation
	diffs []string
	used  map[string]bool // the comparisons of replay_order_test.go made
}

func (c *comparison) differ(path, format string, args ...any) {
	c.diffs = append(c.diffs, path+": "+fmt.Sprintf(format, args...))
}

// value compares the recorded rec with our got at path.
func (c *comparison) value(path string, at place, rec, got any) {
	if rn, ok := integer(rec); ok {
		gn, ok := integer(got)
		if !ok {
			c.differ(path, "recorded %s, got %s", show(rec), show(got))
			return
		}
		if kind, ok := integerIDs[at]; ok {
			c.id(path, kind, rn, gn)
		} else if rn.Cmp(gn) != 0 {
			c.differ(path, "recorded %s, got %s", rn, gn)
		}
		return
	}
	if reflect.TypeOf(rec) != reflect.TypeOf(got) {
		c.differ(path, "recorded %s, got %s", show(rec), show(got))
		return
	}
	switch r := rec.(type) {
	case uuid.UUID:
		c.uuid(path, r, got.(uuid.UUID))
	case time.Time:
		c.time(path, at, r, got.(time.Time))
	case string:
		c.text(path, at, r, got.(string))
	case []any:
		c.list(path, elementPlace(at), r, got.([]any))
	case swhwire.Map:
		c.fields(path, "", r, got.(swhwire.Map))
	case swhwire.Model:
		g := got.(swhwire.Model)
		if r.Type != g.Type {
			c.differ(path, "recorded a %s, got a %s", r.Type, g.Type)
			return
		}
		c.fields(path, r.Type, r.Fields, g.Fields)
	case swhwire.PagedResult:
		g := got.(swhwire.PagedResult)
		c.value(path+".results", place{key: "results"}, r.Results, g.Results)
		c.value(path+".next_page_token", place{key: "next_page_token"}, r.NextPageToken, g.NextPageToken)
		c.value(path+".total_results", place{key: "total_results"}, r.TotalResults, g.TotalResults)
	default:
		if !reflect.DeepEqual(rec, got) {
			c.differ(path, "recorded %s, got %s", show(rec), show(got))
		}
	}
}

// fields compares two maps (the fields of a model when model is its class
// name) key by key, whatever their order.
func (c *comparison) fields(path, model string, rec, got swhwire.Map) {
	keys := func(m swhwire.Map) map[string]any {
		out := make(map[string]any, len(m))
		for _, p := range m {
			out[keyText(p.Key)] = p.Value
		}
		return out
	}
	r, g := keys(rec), keys(got)
	for _, k := range sortedKeys(r) {
		gv, ok := g[k]
		if !ok {
			c.differ(path, "no key %s (recorded %s)", k, show(r[k]))
			continue
		}
		c.value(path+"."+k, place{model, k}, r[k], gv)
	}
	for _, k := range sortedKeys(g) {
		if _, ok := r[k]; !ok {
			c.differ(path, "key %s was not recorded (got %s)", k, show(g[k]))
		}
	}
}

// unordered compares two lists as sets: both sorted by naturalKey, then
// element by element, each named by what identifies it.
func (c *comparison) unordered(path string, at place, rec, got []any) {
	rec, got = sortedByKey(rec, at), sortedByKey(got, at)
	if len(rec) != len(got) {
		c.differ(path, "recorded %d elements, got %d; only recorded: %s; only ours: %s", len(rec), len(got),
			labels(without(rec, got, at), label), labels(without(got, rec, at), c.ourLabel))
		return
	}
	for i := range rec {
		c.value(fmt.Sprintf("%s[%s]", path, label(rec[i])), at, rec[i], got[i])
	}
}

// without is l less the elements of other, by naturalKey.
func without(l, other []any, at place) []any {
	count := map[string]int{}
	for _, e := range other {
		count[naturalKey(e, at)]++
	}
	var out []any
	for _, e := range l {
		if k := naturalKey(e, at); count[k] > 0 {
			count[k]--
		} else {
			out = append(out, e)
		}
	}
	return out
}

// label names an element of a list: a model by its url, id, name or type.
func label(v any) string {
	m, ok := v.(swhwire.Model)
	if !ok {
		return show(v)
	}
	for _, f := range []string{"url", "id", "name", "type", "visit_type"} {
		if x, ok := m.Fields.Get(f); ok && x != nil {
			return fmt.Sprintf("%s %s=%v", m.Type, f, x)
		}
	}
	return m.Type
}

// ourLabel is label of an element of our answer, with the recorded id its
// id stands for.
func (c *comparison) ourLabel(v any) string {
	m, ok := v.(swhwire.Model)
	if !ok {
		return label(v)
	}
	id, _ := integer(fieldOf(m, "id"))
	if kind, ok := integerIDs[place{m.Type, "id"}]; ok && id != nil {
		if rec, ok := c.tr.ourIDs[kind][id.Int64()]; ok {
			return fmt.Sprintf("%s (recorded id %d)", label(v), rec)
		}
	}
	return label(v)
}

// labels names a few elements.
func labels(l []any, label func(any) string) string {
	const most = 5
	out := make([]string, 0, most)
	for i, e := range l {
		if i == most {
			out = append(out, fmt.Sprintf("… %d more", len(l)-most))
			break
		}
		out = append(out, label(e))
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// sortedByKey is a copy of l sorted by naturalKey, stable.
func sortedByKey(l []any, at place) []any {
	out := append([]any(nil), l...)
	keys := make(map[int]string, len(out))
	idx := make([]int, len(out))
	for i := range out {
		idx[i] = i
		keys[i] = naturalKey(out[i], at)
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([]any, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// naturalKey renders v without what the server generates (uuids, ids,
// times of its clock), so that the same element sorts the same way in the
// recording and in ours.
func naturalKey(v any, at place) string {
	switch v := v.(type) {
	case uuid.UUID:
		return "_"
	case time.Time:
		if serverClocks[at] {
			return "_"
		}
	case int64, uint64:
		if _, ok := integerIDs[at]; ok {
			return "_"
		}
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = naturalKey(e, elementPlace(at))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case swhwire.Map:
		return mapKey("", v)
	case swhwire.Model:
		return v.Type + mapKey(v.Type, v.Fields)
	}
	return show(v)
}

// mapKey is naturalKey of a map's entries, by key.
func mapKey(model string, m swhwire.Map) string {
	parts := make([]string, len(m))
	for i, p := range m {
		k := keyText(p.Key)
		parts[i] = k + ":" + naturalKey(p.Value, place{model, k})
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// list compares element by element, in order.
func (c *comparison) list(path string, at place, rec, got []any) {
	if len(rec) != len(got) {
		c.differ(path, "recorded %d elements, got %d", len(rec), len(got))
		return
	}
	for i := range rec {
		c.value(fmt.Sprintf("%s[%d]", path, i), at, rec[i], got[i])
	}
}

func (c *comparison) uuid(path string, rec, got uuid.UUID) {
	switch want, ok := c.tr.uuids[rec]; {
	case ok:
		if got != want {
			c.differ(path, "recorded %s, which the server answered as %s before, got %s", rec, want, got)
		}
	case c.tr.sentUUIDs[rec]:
		if got != rec {
			c.differ(path, "the client sent %s, got %s", rec, got)
		}
	default:
		if other, taken := c.tr.ourUUIDs[got]; taken {
			c.differ(path, "recorded %s, got %s, which stood for %s before", rec, got, other)
			return
		}
		c.tr.uuids[rec], c.tr.ourUUIDs[got] = got, rec
	}
}

func (c *comparison) id(path string, kind idKind, rec, got *big.Int) {
	if !rec.IsInt64() || !got.IsInt64() {
		c.differ(path, "%s %s or %s is beyond 64 bits", kind, rec, got)
		return
	}
	r, g := rec.Int64(), got.Int64()
	if want, ok := c.tr.ids[kind][r]; ok {
		if g != want {
			c.differ(path, "%s %d, which the server answered as %d before, got %d", kind, r, want, g)
		}
		return
	}
	if other, taken := c.tr.ourIDs[kind][g]; taken {
		c.differ(path, "%s %d, got %d, which stood for %d before", kind, r, g, other)
		return
	}
	c.tr.ids[kind][r], c.tr.ourIDs[kind][g] = g, r
}

func (c *comparison) time(path string, at place, rec, got time.Time) {
	switch want, ok := c.tr.clocks[rec]; {
	case ok:
		if !got.Equal(want) {
			c.differ(path, "recorded %s, which the server answered as %s before, got %s", stamp(rec), stamp(want), stamp(got))
		}
	case c.tr.sentTimes[rec] || !serverClocks[at]:
		if !got.Equal(rec) {
			c.differ(path, "recorded %s, got %s", stamp(rec), stamp(got))
		}
	default:
		// Our clock follows the recording's (replayClock), so a time our
		// server took from it is close to the recorded one; farther off, it
		// was computed differently.
		if d := got.Sub(rec); d > clockSlack || d < -clockSlack {
			c.differ(path, "recorded %s, got %s: %s apart", stamp(rec), stamp(got), d)
			return
		}
		c.tr.clocks[rec] = got
	}
}

// text compares strings; a lister id written as text is compared through
// the translation, and a page token teaches it ours.
func (c *comparison) text(path string, at place, rec, got string) {
	if r, ok := uuidText(rec); ok {
		if g, ok := uuidText(got); ok {
			c.uuid(path, r, g)
			return
		}
	}
	if pageTokens[at] {
		if want, ok := c.tr.tokens[rec]; ok && got != want {
			c.differ(path, "page token %q, which the server answered as %q before, got %q", rec, want, got)
		}
		c.tr.tokens[rec] = got
		return
	}
	if rec != got {
		c.differ(path, "recorded %q, got %q", rec, got)
	}
}

// integer is v as a big.Int when v is an integer of any width.
func integer(v any) (*big.Int, bool) {
	switch n := v.(type) {
	case int64:
		return big.NewInt(n), true
	case uint64:
		return new(big.Int).SetUint64(n), true
	case *big.Int:
		return n, true
	}
	return nil, false
}

// keyText is a map key as the paths of differences show it.
func keyText(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return fmt.Sprintf("%s", show(k))
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// show is a short rendering of a value, with its Go type when it is not
// obvious, for the messages of differences.
func show(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return "nil"
	case string:
		s = strconv.Quote(v)
	case time.Time:
		s = stamp(v)
	case []byte:
		s = fmt.Sprintf("bin %x", v)
	case swhwire.Model:
		s = v.Type + fmt.Sprint(v.Fields)
	default:
		s = fmt.Sprintf("%T %v", v, v)
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
