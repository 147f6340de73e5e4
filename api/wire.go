package api

import (
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// The JSON forms of revisit's domain types, shared by the server and the
// Go client (api/client). Times are RFC 3339; durations are written as
// config.FormatDuration writes them ("64d", "12h", "1d12h") and read as
// config.ParseDuration reads them.

// TaskType is the JSON form of a revisit.TaskType.
type TaskType struct {
	Type            string          `json:"type"`
	Description     string          `json:"description"`
	BackendName     string          `json:"backend_name"`
	DefaultInterval config.Duration `json:"default_interval"`
	MinInterval     config.Duration `json:"min_interval"`
	MaxInterval     config.Duration `json:"max_interval"`
	BackoffFactor   float64         `json:"backoff_factor"`
	// MaxQueueLength defaults to revisit.DefaultMaxQueueLength when
	// absent from a request; null in an answer: none given, the default
	// applies.
	MaxQueueLength *int            `json:"max_queue_length"`
	NumRetries     int             `json:"num_retries"`
	RetryDelay     config.Duration `json:"retry_delay"`
	RunTimeout     config.Duration `json:"run_timeout"`
}

// NewTaskType returns the JSON form of t.
func NewTaskType(t revisit.TaskType) TaskType {
	var maxLen *int
	if t.MaxQueueLength != 0 {
		maxLen = &t.MaxQueueLength
	}
	return TaskType{Type: t.Type, Description: t.Description, BackendName: t.BackendName,
		DefaultInterval: config.Duration(t.DefaultInterval), MinInterval: config.Duration(t.MinInterval),
		MaxInterval: config.Duration(t.MaxInterval), BackoffFactor: t.BackoffFactor,
		MaxQueueLength: maxLen, NumRetries: t.NumRetries,
		RetryDelay: config.Duration(t.RetryDelay), RunTimeout: config.Duration(t.RunTimeout)}
}

// Domain returns the task type t describes.
func (t TaskType) Domain() revisit.TaskType {
	maxLen := revisit.DefaultMaxQueueLength
	if t.MaxQueueLength != nil {
		maxLen = *t.MaxQueueLength
	}
	return revisit.TaskType{Type: t.Type, Description: t.Description, BackendName: t.BackendName,
		DefaultInterval: time.Duration(t.DefaultInterval), MinInterval: time.Duration(t.MinInterval),
		MaxInterval: time.Duration(t.MaxInterval), BackoffFactor: t.BackoffFactor,
		MaxQueueLength: maxLen, NumRetries: t.NumRetries,
		RetryDelay: time.Duration(t.RetryDelay), RunTimeout: time.Duration(t.RunTimeout)}
}

// Lister is the JSON form of a revisit.Lister.
type Lister struct {
	ID                    uuid.UUID       `json:"id"`
	Name                  string          `json:"name"`
	InstanceName          string          `json:"instance_name"`
	Created               time.Time       `json:"created"`
	Updated               time.Time       `json:"updated"`
	CurrentState          json.RawMessage `json:"current_state"`
	LastListingFinishedAt *time.Time      `json:"last_listing_finished_at"`
	// FirstVisitsQueuePrefix, when set, sends the first visits of the
	// lister's origins to the queues "<prefix>:<backend_name>".
	FirstVisitsQueuePrefix *string `json:"first_visits_queue_prefix"`
	// FirstVisitsScheduledAt is when every origin of the last listing had
	// its first visit scheduled; null until then.
	FirstVisitsScheduledAt *time.Time `json:"first_visits_scheduled_at"`
}

// NewLister returns the JSON form of l.
func NewLister(l revisit.Lister) Lister {
	state := l.CurrentState
	if len(state) == 0 {
		state = json.RawMessage("{}")
	}
	return Lister{ID: l.ID, Name: l.Name, InstanceName: l.InstanceName, Created: l.Created, Updated: l.Updated,
		CurrentState: state, LastListingFinishedAt: l.LastListingFinishedAt,
		FirstVisitsQueuePrefix: l.FirstVisitsQueuePrefix, FirstVisitsScheduledAt: l.FirstVisitsScheduledAt}
}

// Domain returns the lister l describes.
func (l Lister) Domain() revisit.Lister {
	return revisit.Lister{ID: l.ID, Name: l.Name, InstanceName: l.InstanceName, Created: l.Created,
		Updated: l.Updated, CurrentState: l.CurrentState, LastListingFinishedAt: l.LastListingFinishedAt,
		FirstVisitsQueuePrefix: l.FirstVisitsQueuePrefix, FirstVisitsScheduledAt: l.FirstVisitsScheduledAt}
}

// ListedOrigin is the JSON form of a revisit.ListedOrigin. In a record
// request, enabled defaults to true and first_seen and last_seen are
// ignored.
type ListedOrigin struct {
	ListerID             uuid.UUID      `json:"lister_id"`
	URL                  string         `json:"url"`
	VisitType            string         `json:"visit_type"`
	ExtraLoaderArguments map[string]any `json:"extra_loader_arguments"`
	Enabled              *bool          `json:"enabled"`
	FirstSeen            *time.Time     `json:"first_seen,omitempty"`
	LastSeen             *time.Time     `json:"last_seen,omitempty"`
	LastUpdate           *time.Time     `json:"last_update"`
	IsFork               *bool          `json:"is_fork"`
	ForkedFromURL        *string        `json:"forked_from_url"`
}

// NewListedOrigin returns the JSON form of o.
func NewListedOrigin(o revisit.ListedOrigin) ListedOrigin {
	extra := o.ExtraLoaderArguments
	if extra == nil {
		extra = map[string]any{}
	}
	return ListedOrigin{ListerID: o.ListerID, URL: o.URL, VisitType: o.VisitType, ExtraLoaderArguments: extra,
		Enabled: &o.Enabled, FirstSeen: timePtr(o.FirstSeen), LastSeen: timePtr(o.LastSeen),
		LastUpdate: o.LastUpdate, IsFork: o.IsFork, ForkedFromURL: o.ForkedFromURL}
}

// Domain returns the listed origin o describes.
func (o ListedOrigin) Domain() revisit.ListedOrigin {
	d := revisit.ListedOrigin{ListerID: o.ListerID, URL: o.URL, VisitType: o.VisitType,
		ExtraLoaderArguments: o.ExtraLoaderArguments, Enabled: o.Enabled == nil || *o.Enabled,
		LastUpdate: o.LastUpdate, IsFork: o.IsFork, ForkedFromURL: o.ForkedFromURL}
	if d.ExtraLoaderArguments == nil {
		d.ExtraLoaderArguments = map[string]any{}
	}
	if o.FirstSeen != nil {
		d.FirstSeen = *o.FirstSeen
	}
	if o.LastSeen != nil {
		d.LastSeen = *o.LastSeen
	}
	return d
}

// VisitStats is the JSON form of revisit.VisitStats; last_snapshot is hex.
type VisitStats struct {
	URL                    string     `json:"url"`
	VisitType              string     `json:"visit_type"`
	LastSuccessful         *time.Time `json:"last_successful"`
	LastVisit              *time.Time `json:"last_visit"`
	LastVisitStatus        *string    `json:"last_visit_status"`
	LastScheduled          *time.Time `json:"last_scheduled"`
	LastSnapshot           *string    `json:"last_snapshot"`
	NextVisitQueuePosition *int64     `json:"next_visit_queue_position"`
	NextPositionOffset     int        `json:"next_position_offset"`
	SuccessiveVisits       int        `json:"successive_visits"`
}

// NewVisitStats returns the JSON form of s.
func NewVisitStats(s revisit.VisitStats) VisitStats {
	v := VisitStats{URL: s.URL, VisitType: s.VisitType, LastSuccessful: s.LastSuccessful, LastVisit: s.LastVisit,
		LastScheduled: s.LastScheduled, NextVisitQueuePosition: s.NextVisitQueuePosition,
		NextPositionOffset: s.NextPositionOffset, SuccessiveVisits: s.SuccessiveVisits}
	if s.LastVisitStatus != nil {
		st := string(*s.LastVisitStatus)
		v.LastVisitStatus = &st
	}
	if s.LastSnapshot != nil {
		h := hex.EncodeToString(s.LastSnapshot)
		v.LastSnapshot = &h
	}
	return v
}

// Domain returns the stats v describes; a last_snapshot that is not hex is
// an invalid-input error.
func (v VisitStats) Domain() (revisit.VisitStats, error) {
	s := revisit.VisitStats{URL: v.URL, VisitType: v.VisitType, LastSuccessful: v.LastSuccessful,
		LastVisit: v.LastVisit, LastScheduled: v.LastScheduled, NextVisitQueuePosition: v.NextVisitQueuePosition,
		NextPositionOffset: v.NextPositionOffset, SuccessiveVisits: v.SuccessiveVisits}
	if v.LastVisitStatus != nil {
		st := revisit.VisitStatus(*v.LastVisitStatus)
		s.LastVisitStatus = &st
	}
	if v.LastSnapshot != nil {
		b, err := revisit.ParseSnapshotID("last_snapshot", *v.LastSnapshot)
		if err != nil {
			return s, err
		}
		s.LastSnapshot = b
	}
	return s, nil
}

// SchedulerMetrics is the JSON form of revisit.SchedulerMetrics.
type SchedulerMetrics struct {
	ListerID                  uuid.UUID `json:"lister_id"`
	VisitType                 string    `json:"visit_type"`
	LastUpdate                time.Time `json:"last_update"`
	OriginsKnown              int64     `json:"origins_known"`
	OriginsEnabled            int64     `json:"origins_enabled"`
	OriginsNeverVisited       int64     `json:"origins_never_visited"`
	OriginsWithPendingChanges int64     `json:"origins_with_pending_changes"`
}

// NewSchedulerMetrics returns the JSON form of m.
func NewSchedulerMetrics(m revisit.SchedulerMetrics) SchedulerMetrics {
	return SchedulerMetrics(m)
}

// Domain returns the metrics m describes.
func (m SchedulerMetrics) Domain() revisit.SchedulerMetrics { return revisit.SchedulerMetrics(m) }

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// mapSlice applies f to every element of in.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
