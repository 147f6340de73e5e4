// Package swhwire is the msgpack encoding Software Heritage uses on its
// scheduler RPC and in its journal (Kafka) messages: a value model that keeps
// what Python's packer distinguishes (str and bin, integer ranges, float32 and
// float64, ordered maps with any keys, timestamps, big integers), the
// "swhtype" envelopes, and bounded decoding of untrusted input.
package swhwire

import (
	"bytes"
	"time"
)

// Map is a msgpack map in wire order. Keys are any decoded value: a string
// (msgpack str), a []byte (msgpack bin), an integer, nil, ...
type Map []Pair

// Pair is one entry of a Map.
type Pair struct {
	Key   any
	Value any
}

// Get returns the value of the str key name.
func (m Map) Get(name string) (any, bool) {
	for _, p := range m {
		if k, ok := p.Key.(string); ok && k == name {
			return p.Value, true
		}
	}
	return nil, false
}

// getBin returns the value of the bin key name.
func (m Map) getBin(name string) (any, bool) {
	for _, p := range m {
		if k, ok := p.Key.([]byte); ok && bytes.Equal(k, []byte(name)) {
			return p.Value, true
		}
	}
	return nil, false
}

// Python's datetime covers years 1 to 9999; a timestamp outside cannot be
// decoded by the peer, so it is refused both ways.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// wireTime is t as a Python datetime carries it: UTC, whole microseconds.
func wireTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// Optional is *p as a value, or nil for a nil p: Python's Optional fields.
func Optional[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
