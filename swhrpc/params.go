package swhrpc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// record is a set of named values being read: the parameters of a call,
// or the fields of a model. Each value is read once by name; the first
// error is kept, and finish returns it or refuses the names nobody read.
// Errors name the value as prefix+name.
type record struct {
	prefix string
	what   string // "parameter" or "field"
	names  []string
	values map[string]any
	read   map[string]bool
	err    error
}

// newRecord reads the str keys of m: a key of another type, or given twice,
// is an error naming it.
func newRecord(prefix, what string, m swhwire.Map) (*record, error) {
	r := &record{prefix: prefix, what: what, values: make(map[string]any, len(m)), read: map[string]bool{}}
	for _, p := range m {
		name, ok := p.Key.(string)
		if !ok {
			return nil, revisit.Invalidf(strings.TrimSuffix(prefix, "."), "a %s name is %s, want a str", what, pyKind(p.Key))
		}
		if _, dup := r.values[name]; dup {
			return nil, revisit.Invalidf(prefix+name, "%s given twice", what)
		}
		r.names = append(r.names, name)
		r.values[name] = p.Value
	}
	return r, nil
}

// field is the value of name read with c, or def when it is absent.
func field[T any](r *record, name string, c conv[T], def T) T {
	v, ok := r.take(name)
	if !ok {
		return def
	}
	t, err := c(r.prefix+name, v)
	r.fail(err)
	return t
}

// required is the value of name read with c; absent is an error.
func required[T any](r *record, name string, c conv[T]) T {
	v, ok := r.take(name)
	if !ok {
		r.fail(revisit.Invalidf(r.prefix+name, "missing"))
		var zero T
		return zero
	}
	t, err := c(r.prefix+name, v)
	r.fail(err)
	return t
}

// fail keeps err if it is the first error.
func (r *record) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *record) take(name string) (any, bool) {
	r.read[name] = true
	v, ok := r.values[name]
	return v, ok
}

// finish returns the first error of the reads, else refuses the names no
// read asked for, listing those it knows.
func (r *record) finish() error {
	if r.err != nil {
		return r.err
	}
	var unknown []string
	for _, n := range r.names {
		if !r.read[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	known := make([]string, 0, len(r.read))
	for n := range r.read {
		known = append(known, n)
	}
	slices.Sort(known)
	s, takes := "", "none"
	if len(unknown) > 1 {
		s = "s"
	}
	if len(known) > 0 {
		takes = strings.Join(known, ", ")
	}
	return revisit.Invalidf(r.prefix+unknown[0], "unknown %s%s %s (known: %s)", r.what, s,
		strings.Join(quoteAll(unknown), ", "), takes)
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
