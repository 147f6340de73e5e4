package revisit

import (
	"strings"
	"time"
)

// DefaultMaxQueueLength is the queue bound of a task type that names none.
const DefaultMaxQueueLength = 1000

// TaskType describes a kind of job and the worker-side task that runs it.
// Zero durations and factors mean "not set".
type TaskType struct {
	Type            string
	Description     string
	BackendName     string
	DefaultInterval time.Duration
	MinInterval     time.Duration
	MaxInterval     time.Duration
	BackoffFactor   float64
	// MaxQueueLength bounds the messages waiting in the type's queue; zero
	// means none given, and MaxQueueLengthOrDefault applies the default.
	MaxQueueLength int
	NumRetries     int
	RetryDelay     time.Duration
	// RunTimeout is how long a run of this type may stay scheduled or
	// started without news before it is declared lost; zero means
	// DefaultRunTimeout.
	RunTimeout time.Duration
}

// RunTimeoutOrDefault returns the type's run timeout, DefaultRunTimeout when
// unset.
func (t TaskType) RunTimeoutOrDefault() time.Duration {
	if t.RunTimeout > 0 {
		return t.RunTimeout
	}
	return DefaultRunTimeout
}

// MaxQueueLengthOrDefault returns the type's queue bound,
// DefaultMaxQueueLength when unset.
func (t TaskType) MaxQueueLengthOrDefault() int {
	if t.MaxQueueLength > 0 {
		return t.MaxQueueLength
	}
	return DefaultMaxQueueLength
}

// VisitType returns the visit type of a load-<vt> task type, and false for
// other task types.
func (t TaskType) VisitType() (string, bool) {
	vt, ok := strings.CutPrefix(t.Type, "load-")
	return vt, ok && vt != ""
}

// Validate checks a task type before it is stored.
func (t TaskType) Validate() error {
	if t.Type == "" {
		return Invalidf("type", "missing")
	}
	if err := ValidateName("type", t.Type); err != nil {
		return err
	}
	if vt, ok := strings.CutPrefix(t.Type, "load-"); ok {
		if err := ValidateVisitType(vt); err != nil {
			return Invalidf("type", "%q: a load- task type names a visit type after its prefix, and %q is not one", t.Type, vt)
		}
	}
	if t.BackendName == "" {
		return Invalidf("backend_name", "missing")
	}
	if err := ValidateName("backend_name", t.BackendName); err != nil {
		return err
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"default_interval", t.DefaultInterval}, {"min_interval", t.MinInterval},
		{"max_interval", t.MaxInterval}, {"retry_delay", t.RetryDelay}, {"run_timeout", t.RunTimeout}} {
		if d.v < 0 {
			return Invalidf(d.field, "negative (%s)", d.v)
		}
	}
	if t.MinInterval != 0 && t.MaxInterval != 0 && t.MinInterval > t.MaxInterval {
		return Invalidf("min_interval", "%s is more than max_interval %s", t.MinInterval, t.MaxInterval)
	}
	if t.BackoffFactor < 0 {
		return Invalidf("backoff_factor", "negative (%g)", t.BackoffFactor)
	}
	if t.MaxQueueLength < 0 {
		return Invalidf("max_queue_length", "negative (%d)", t.MaxQueueLength)
	}
	if t.NumRetries < 0 {
		return Invalidf("num_retries", "negative (%d)", t.NumRetries)
	}
	return nil
}
