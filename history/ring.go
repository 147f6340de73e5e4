package history

import "math"

// Minutes is how many minutes a series keeps: 24 hours.
const Minutes = 1440

// ringBytes is what one series takes in memory: a float32 a minute.
const ringBytes = Minutes * 4

// ring holds one series' value for each of the last Minutes minutes, up to
// its head, the latest minute it has reached; NaN marks a minute without a
// value. Minutes are counted from the Unix epoch.
type ring struct {
	vals [Minutes]float32
	head int64
}

// newRing returns a ring without values whose head is minute head.
func newRing(head int64) *ring {
	r := &ring{head: head}
	for i := range r.vals {
		r.vals[i] = float32(math.NaN())
	}
	return r
}

// advance moves the head to minute m, if later, forgetting the values of
// the minutes that fall out of the ring.
func (r *ring) advance(m int64) {
	if m <= r.head {
		return
	}
	for n := r.head + 1; n <= m && n <= r.head+Minutes; n++ {
		r.vals[n%Minutes] = float32(math.NaN())
	}
	r.head = m
}

// slot returns the index of minute m; false when m lies outside the ring
// (later than its head, or Minutes or more before it).
func (r *ring) slot(m int64) (int, bool) {
	if m > r.head || m <= r.head-Minutes || m < 0 {
		return 0, false
	}
	return int(m % Minutes), true
}

// add adds v to minute m, advancing the head to it first.
func (r *ring) add(m int64, v float64) {
	r.advance(m)
	if i, ok := r.slot(m); ok {
		if math.IsNaN(float64(r.vals[i])) {
			r.vals[i] = 0
		}
		r.vals[i] += float32(v)
	}
}

// set sets minute m to v, advancing the head to it first.
func (r *ring) set(m int64, v float64) {
	r.advance(m)
	if i, ok := r.slot(m); ok {
		r.vals[i] = float32(v)
	}
}

// known gives a value of 0 to the minutes of [from, to) that have none:
// those whose events were counted, and none found.
func (r *ring) known(from, to int64) {
	for m := from; m < to; m++ {
		if i, ok := r.slot(m); ok && math.IsNaN(float64(r.vals[i])) {
			r.vals[i] = 0
		}
	}
}

// get returns the value of minute m; false when it has none.
func (r *ring) get(m int64) (float64, bool) {
	i, ok := r.slot(m)
	if !ok || math.IsNaN(float64(r.vals[i])) {
		return 0, false
	}
	return float64(r.vals[i]), true
}
