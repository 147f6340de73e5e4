// Package recent is the stored form of an origin's recent results
// (revisit.VisitStats.Recent), the column visit_stats.recent of both
// stores: 9 bytes a result, newest first, NULL when there is none. A
// result is its date, in microseconds since the Unix epoch (a big-endian
// int64), then one byte: its status's code, with eventfulBit set when it
// was eventful. Activity counts them, with the rest of a stats row, for
// the stores' ActivityByMinute.
package recent

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit"
)

// size is the length of one stored result.
const size = 9

// eventfulBit marks an eventful result in its status byte.
const eventfulBit = 0x80

// codes are the status codes of the stored form.
var codes = map[revisit.VisitStatus]byte{revisit.VisitSuccessful: 1, revisit.VisitFailed: 2, revisit.VisitNotFound: 3}

// statuses are the statuses of the codes.
var statuses = map[byte]revisit.VisitStatus{1: revisit.VisitSuccessful, 2: revisit.VisitFailed, 3: revisit.VisitNotFound}

// Validate checks results to keep: at most revisit.RecentResultsKept, each
// dated, of a known status, eventful only if successful. Its errors are
// invalid-input errors naming the result, as recent[2].status.
func Validate(results []revisit.RecentResult) error {
	if len(results) > revisit.RecentResultsKept {
		return revisit.Invalidf("recent", "at most %d results, not %d", revisit.RecentResultsKept, len(results))
	}
	for i, r := range results {
		field := fmt.Sprintf("recent[%d]", i)
		switch {
		case r.Date.IsZero():
			return revisit.Invalidf(field+".date", "missing")
		case !r.Status.Valid():
			return revisit.Invalidf(field+".status", "%q is not successful, failed or not_found", r.Status)
		case r.Eventful && r.Status != revisit.VisitSuccessful:
			return revisit.Invalidf(field+".eventful", "a %s visit is not eventful", r.Status)
		}
	}
	return nil
}

// Encode returns the stored form of results, which Validate accepts; nil
// (NULL) when there is none. Dates are kept to the microsecond.
func Encode(results []revisit.RecentResult) []byte {
	if len(results) == 0 {
		return nil
	}
	b := make([]byte, 0, size*len(results))
	for _, r := range results {
		code := codes[r.Status]
		if r.Eventful {
			code |= eventfulBit
		}
		b = binary.BigEndian.AppendUint64(b, uint64(r.Date.UnixMicro()))
		b = append(b, code)
	}
	return b
}

// Decode returns the results stored as b (nil for none, NULL or empty);
// anything Encode does not write is an error saying what is wrong.
func Decode(b []byte) ([]revisit.RecentResult, error) {
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%d bytes, not a multiple of %d", len(b), size)
	}
	if len(b) == 0 {
		return nil, nil
	}
	results := make([]revisit.RecentResult, len(b)/size)
	for i := range results {
		item := b[i*size : (i+1)*size]
		status, ok := statuses[item[8]&^eventfulBit]
		if !ok {
			return nil, fmt.Errorf("result %d: status byte %#02x is no status", i, item[8])
		}
		results[i] = revisit.RecentResult{Date: time.UnixMicro(int64(binary.BigEndian.Uint64(item))).UTC(),
			Status: status, Eventful: item[8]&eventfulBit != 0}
	}
	if err := Validate(results); err != nil {
		return nil, fmt.Errorf("%v", err) // stored data is no caller's invalid input
	}
	return results, nil
}

// Into sets st.Recent to the results stored as b; a value that does not
// decode is an error naming st's origin.
func Into(st *revisit.VisitStats, b []byte) error {
	results, err := Decode(b)
	if err != nil {
		return fmt.Errorf("the recent results stored for %s (%s) do not decode: %w", st.URL, st.VisitType, err)
	}
	st.Recent = results
	return nil
}
