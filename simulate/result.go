package simulate

import (
	"time"

	"github.com/revisit-sched/revisit"
)

// Result is what one simulated run measured. It holds simulated times
// only, so that the same seed gives the same Result.
type Result struct {
	// Name names the configuration run ("production weights", a file's
	// base name).
	Name string
	// Settings are the run's parameters as the report shows them: one
	// "key: value" line each, in a fixed order.
	Settings []string
	// VisitTypes are the visit types simulated, in the order of ByType
	// slices below.
	VisitTypes []string
	// Start and End bound the simulated time.
	Start, End time.Time

	// Counters are upstream's four counters.
	Counters Counters
	// Samples are the world's state every sample interval (an hour), from
	// Start to End included.
	Samples []Sample
	// Policies are the visits each policy chose, by visit type then in
	// configured order.
	Policies []PolicyFigures
	// FirstVisits are the first-visit latencies of the origins listed
	// after Start, by visit type.
	FirstVisits []Latency
	// Runtimes is the histogram of the durations of eventful visits.
	Runtimes Histogram

	// Events is how many events the simulation processed.
	Events int64

	// Worlds are, when configurations are compared, this one's rank among
	// them in this world and in variations of it (Rank).
	Worlds []WorldRank
}

// Counters are upstream's four visit counters.
type Counters struct {
	// Total counts every visit that ended (a result sent or lost).
	Total int64
	// Uneventful counts full visits that found the snapshot of the
	// previous full visit; Eventful, those that found a new one.
	Uneventful, Eventful int64
	// VeryLong counts eventful visits longer than an hour.
	VeryLong int64
}

// Sample is the world at one instant.
type Sample struct {
	Time time.Time
	// Known, Enabled, NeverVisited and PendingChanges are the scheduler
	// metrics (revisit.SchedulerMetrics) summed over listers and visit
	// types: upstream's CSV columns.
	Known, Enabled, NeverVisited, PendingChanges int64
	// Visits is how many visits ended so far.
	Visits int64
	// ByType is the state of each visit type, in Result.VisitTypes order.
	ByType []TypeSample
}

// TypeSample is one visit type at one instant.
type TypeSample struct {
	// QueueDepth is how many messages wait in the visit type's queue.
	QueueDepth int
	// Utilization is the fraction of the workers' time spent visiting
	// since the previous sample (0 to 1).
	Utilization float64
	// Visited counts the origins with a successful visit.
	Visited int
	// Freshness is the distribution, over the visited origins, of how far
	// each origin's last successful visit lags behind its last change
	// (0 when the visit saw the last change).
	Freshness Quantiles
}

// Quantiles are the 50th, 90th and 99th percentiles of a distribution of
// durations.
type Quantiles struct {
	P50, P90, P99 time.Duration
}

// PolicyFigures are the visits one policy of a visit type chose.
type PolicyFigures struct {
	VisitType string
	Policy    revisit.Policy
	// Weight is the configured weight; Configured is its share of the
	// visit type's weights (0 to 1).
	Weight     int
	Configured float64
	// Visits counts the visits the policy chose that ended; Share is
	// their part of the visit type's visits (0 to 1).
	Visits int64
	Share  float64
	// Eventful counts those of them that found a new snapshot.
	Eventful int64
}

// Latency is how long new origins of a visit type waited for their first
// visit: from their listing to the end of the visit.
type Latency struct {
	VisitType string
	// New counts the origins listed after the start; Visited, those of
	// them whose first visit ended before the end.
	New, Visited int
	Quantiles
}

// Histogram counts durations in buckets.
type Histogram struct {
	// Bounds are the buckets' upper bounds, increasing; Counts[i] counts
	// the durations in (Bounds[i-1], Bounds[i]], and Counts has one more
	// entry for those above the last bound.
	Bounds []time.Duration
	Counts []int64
}
