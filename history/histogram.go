package history

import (
	"math"

	dto "github.com/prometheus/client_model/go"
)

// histogram is a latency histogram: the cumulative counts of its buckets,
// each bounded above by its bound, with the sum and count of the
// observations.
type histogram struct {
	bounds, counts []float64
	sum, count     float64
}

// histogramOf reads a Prometheus histogram.
func histogramOf(h *dto.Histogram) histogram {
	out := histogram{sum: h.GetSampleSum(), count: float64(h.GetSampleCount())}
	for _, b := range h.GetBucket() {
		out.bounds = append(out.bounds, b.GetUpperBound())
		out.counts = append(out.counts, float64(b.GetCumulativeCount()))
	}
	return out
}

// since is the observations of h after the reading prev of the same
// histogram: all of h's when it was reset since (fewer observations than
// prev) or changed its buckets.
func (h histogram) since(prev histogram) histogram {
	if h.count < prev.count || len(h.counts) != len(prev.counts) {
		return h
	}
	out := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts)),
		sum: h.sum - prev.sum, count: h.count - prev.count}
	for i := range h.counts {
		out.counts[i] = h.counts[i] - prev.counts[i]
	}
	return out
}

// plus adds the observations of o to h's; an empty h takes o's buckets,
// and observations in other buckets than h's count in the sum and count
// only.
func (h histogram) plus(o histogram) histogram {
	if h.bounds == nil {
		h.bounds, h.counts = o.bounds, make([]float64, len(o.counts))
	}
	h.sum += o.sum
	h.count += o.count
	if len(o.counts) == len(h.counts) {
		for i := range o.counts {
			h.counts[i] += o.counts[i]
		}
	}
	return h
}

// quantile estimates the q-quantile of the observations, interpolating
// linearly inside the bucket it falls in (from 0 in the first); beyond the
// last bound it is that bound.
func (h histogram) quantile(q float64) float64 {
	rank := q * h.count
	lower, below := 0.0, 0.0
	for i, bound := range h.bounds {
		if h.counts[i] >= rank && h.counts[i] > below {
			return lower + (bound-lower)*(rank-below)/(h.counts[i]-below)
		}
		lower, below = bound, h.counts[i]
	}
	if len(h.bounds) == 0 {
		return math.NaN()
	}
	return h.bounds[len(h.bounds)-1]
}
