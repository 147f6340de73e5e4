package swhrpc

import (
	"encoding/json"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// The scheduler's models go on the wire as scheduler_model envelopes
// (swhwire.Model): their attrs fields in definition order. The functions
// below turn revisit's domain into them and back; a model read from a
// request must have only its class's fields (missing optional ones take
// the class's defaults), as the client's constructors require.

// maxInt32 bounds the counts of task types, tasks and visit stats.
const maxInt32 = 1<<31 - 1

// modelFields opens the fields of a model of class typ for reading; errors
// name the fields path.name.
func modelFields(path, typ string, v any) (*record, error) {
	m, ok := v.(swhwire.Model)
	if !ok || m.Type != typ {
		return nil, wrongType(path, "a "+typ+" model (scheduler_model envelope)", v)
	}
	return newRecord(path+".", "field", m.Fields)
}

// durationOrNil is a duration on the wire: a timedelta, nil when unset (0).
func durationOrNil(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return swhwire.NewTimedelta(d)
}

// intOrNil is a count on the wire, nil when unset (0).
func intOrNil(n int) any {
	if n == 0 {
		return nil
	}
	return int64(n)
}

// floatOrNil is a factor on the wire, nil when unset (0).
func floatOrNil(f float64) any {
	if f == 0 {
		return nil
	}
	return f
}

// objectOrEmpty is a stored JSON object on the wire; nil is an empty dict.
func objectOrEmpty(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return wire(m)
}

// optionalObject is a stored JSON object on the wire; nil is None.
func optionalObject(m map[string]any) any {
	if m == nil {
		return nil
	}
	return wire(m)
}

func listerModel(l revisit.Lister) (swhwire.Model, error) {
	state, err := wireJSON(l.CurrentState)
	if err != nil {
		return swhwire.Model{}, err
	}
	return swhwire.Model{Type: "Lister", Fields: pairs(
		"name", l.Name, "instance_name", l.InstanceName, "id", l.ID, "current_state", state,
		"created", l.Created, "updated", l.Updated, "last_listing_finished_at", swhwire.Optional(l.LastListingFinishedAt),
		"first_visits_queue_prefix", swhwire.Optional(l.FirstVisitsQueuePrefix),
		"first_visits_scheduled_at", swhwire.Optional(l.FirstVisitsScheduledAt),
	)}, nil
}

// readLister reads a Lister model as a lister update needs it: with its
// id and its updated time (the optimistic lock).
func readLister(path string, v any) (revisit.Lister, error) {
	r, err := modelFields(path, "Lister", v)
	if err != nil {
		return revisit.Lister{}, err
	}
	l := revisit.Lister{
		Name:                   required(r, "name", asStr),
		InstanceName:           field(r, "instance_name", asInstanceName, ""),
		ID:                     required(r, "id", asUUID),
		Created:                deref(field(r, "created", optional(asTime), nil)),
		Updated:                required(r, "updated", asTime),
		LastListingFinishedAt:  field(r, "last_listing_finished_at", optional(asTime), nil),
		FirstVisitsQueuePrefix: field(r, "first_visits_queue_prefix", optional(asStr), nil),
		FirstVisitsScheduledAt: field(r, "first_visits_scheduled_at", optional(asTime), nil),
	}
	state := field(r, "current_state", asObject, map[string]any{})
	if err := r.finish(); err != nil {
		return l, err
	}
	if err := revisit.ValidateFirstVisitsQueuePrefix(l.FirstVisitsQueuePrefix); err != nil {
		return l, prefixed(path+".", err)
	}
	if l.CurrentState, err = json.Marshal(state); err != nil {
		return l, revisit.Invalidf(path+".current_state", "%v", err)
	}
	return l, nil
}

// asInstanceName reads an instance name: None is the empty name.
func asInstanceName(field string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	return asStr(field, v)
}

func listedOriginModel(o revisit.ListedOrigin) swhwire.Model {
	return swhwire.Model{Type: "ListedOrigin", Fields: pairs(
		"lister_id", o.ListerID, "url", o.URL, "visit_type", o.VisitType,
		"extra_loader_arguments", objectOrEmpty(o.ExtraLoaderArguments),
		"last_update", swhwire.Optional(o.LastUpdate), "is_fork", swhwire.Optional(o.IsFork), "forked_from_url", swhwire.Optional(o.ForkedFromURL),
		"enabled", o.Enabled, "first_seen", o.FirstSeen, "last_seen", o.LastSeen,
	)}
}

// readListedOrigin reads a ListedOrigin model to record; first_seen and
// last_seen are the store's to set.
func readListedOrigin(path string, v any) (revisit.ListedOrigin, error) {
	r, err := modelFields(path, "ListedOrigin", v)
	if err != nil {
		return revisit.ListedOrigin{}, err
	}
	o := revisit.ListedOrigin{
		ListerID:             required(r, "lister_id", asUUID),
		URL:                  required(r, "url", asStr),
		VisitType:            required(r, "visit_type", asStr),
		ExtraLoaderArguments: field(r, "extra_loader_arguments", asObject, map[string]any{}),
		LastUpdate:           field(r, "last_update", optional(asTime), nil),
		IsFork:               field(r, "is_fork", optional(asBool), nil),
		ForkedFromURL:        field(r, "forked_from_url", optional(asStr), nil),
		Enabled:              field(r, "enabled", asBool, true),
	}
	field(r, "first_seen", optional(asTime), nil)
	field(r, "last_seen", optional(asTime), nil)
	return o, r.finish()
}

func visitStatsModel(s revisit.VisitStats) swhwire.Model {
	var status, snapshot any
	if s.LastVisitStatus != nil {
		status = swhwire.LastVisitStatus(*s.LastVisitStatus)
	}
	if s.LastSnapshot != nil {
		snapshot = s.LastSnapshot
	}
	return swhwire.Model{Type: "OriginVisitStats", Fields: pairs(
		"url", s.URL, "visit_type", s.VisitType, "last_successful", swhwire.Optional(s.LastSuccessful),
		"last_visit", swhwire.Optional(s.LastVisit), "last_visit_status", status, "last_scheduled", swhwire.Optional(s.LastScheduled),
		"last_snapshot", snapshot, "next_visit_queue_position", swhwire.Optional(s.NextVisitQueuePosition),
		"next_position_offset", int64(s.NextPositionOffset), "successive_visits", int64(s.SuccessiveVisits),
	)}
}

func readVisitStats(path string, v any) (revisit.VisitStats, error) {
	r, err := modelFields(path, "OriginVisitStats", v)
	if err != nil {
		return revisit.VisitStats{}, err
	}
	s := revisit.VisitStats{
		URL:                    required(r, "url", asStr),
		VisitType:              required(r, "visit_type", asStr),
		LastSuccessful:         field(r, "last_successful", optional(asTime), nil),
		LastVisit:              field(r, "last_visit", optional(asTime), nil),
		LastVisitStatus:        field(r, "last_visit_status", optional(asVisitStatus), nil),
		LastScheduled:          field(r, "last_scheduled", optional(asTime), nil),
		LastSnapshot:           field(r, "last_snapshot", asSnapshot, nil),
		NextVisitQueuePosition: field(r, "next_visit_queue_position", optional(asInt), nil),
		NextPositionOffset:     field(r, "next_position_offset", asRange(0, maxInt32), revisit.DefaultNextPositionOffset),
		SuccessiveVisits:       field(r, "successive_visits", asRange(0, maxInt32), revisit.DefaultSuccessiveVisits),
	}
	return s, r.finish()
}

// asVisitStatus reads a last_visit_status: the enum's envelope, or its
// value as a str, as the client's converter accepts both.
func asVisitStatus(field string, v any) (revisit.VisitStatus, error) {
	var s revisit.VisitStatus
	switch x := v.(type) {
	case swhwire.LastVisitStatus:
		s = revisit.VisitStatus(x)
	case string:
		s = revisit.VisitStatus(x)
	default:
		return "", wrongType(field, "a LastVisitStatus", v)
	}
	if !s.Valid() {
		return "", revisit.Invalidf(field, "%q is not successful, failed or not_found", s)
	}
	return s, nil
}

// asSnapshot reads a snapshot id: 20 bytes, or None.
func asSnapshot(field string, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	b, err := asBytes(field, v)
	if err != nil {
		return nil, err
	}
	return b, revisit.ValidateSnapshotID(field, b)
}

func metricsModel(m revisit.SchedulerMetrics) swhwire.Model {
	return swhwire.Model{Type: "SchedulerMetrics", Fields: pairs(
		"lister_id", m.ListerID, "visit_type", m.VisitType, "last_update", m.LastUpdate,
		"origins_known", m.OriginsKnown, "origins_enabled", m.OriginsEnabled,
		"origins_never_visited", m.OriginsNeverVisited, "origins_with_pending_changes", m.OriginsWithPendingChanges,
	)}
}

func taskTypeModel(t revisit.TaskType) swhwire.Model {
	return swhwire.Model{Type: "TaskType", Fields: pairs(
		"type", t.Type, "description", t.Description, "backend_name", t.BackendName,
		"default_interval", durationOrNil(t.DefaultInterval), "min_interval", durationOrNil(t.MinInterval),
		"max_interval", durationOrNil(t.MaxInterval), "backoff_factor", floatOrNil(t.BackoffFactor),
		"max_queue_length", intOrNil(t.MaxQueueLength), "num_retries", intOrNil(t.NumRetries),
		"retry_delay", durationOrNil(t.RetryDelay),
	)}
}

func readTaskType(path string, v any) (revisit.TaskType, error) {
	r, err := modelFields(path, "TaskType", v)
	if err != nil {
		return revisit.TaskType{}, err
	}
	t := revisit.TaskType{
		Type:            required(r, "type", asStr),
		Description:     required(r, "description", asStr),
		BackendName:     required(r, "backend_name", asStr),
		DefaultInterval: deref(field(r, "default_interval", optional(asDuration), nil)),
		MinInterval:     deref(field(r, "min_interval", optional(asDuration), nil)),
		MaxInterval:     deref(field(r, "max_interval", optional(asDuration), nil)),
		BackoffFactor:   deref(field(r, "backoff_factor", optional(asFloat), nil)),
		MaxQueueLength:  deref(field(r, "max_queue_length", optional(asRange(0, maxInt32)), ptr(revisit.DefaultMaxQueueLength))),
		NumRetries:      deref(field(r, "num_retries", optional(asRange(0, maxInt32)), nil)),
		RetryDelay:      deref(field(r, "retry_delay", optional(asDuration), nil)),
	}
	if err := r.finish(); err != nil {
		return t, err
	}
	return t, prefixed(path+".", t.Validate())
}

func taskModel(t revisit.Task) swhwire.Model {
	var priority any
	if t.Priority != revisit.PriorityNone {
		priority = string(t.Priority)
	}
	args := []any{}
	if t.Arguments.Args != nil {
		args = wire(t.Arguments.Args).([]any)
	}
	return swhwire.Model{Type: "Task", Fields: pairs(
		"type", t.Type,
		"arguments", swhwire.Model{Type: "TaskArguments", Fields: pairs(
			"args", args, "kwargs", objectOrEmpty(t.Arguments.Kwargs))},
		"next_run", t.NextRun, "status", string(t.Status), "policy", string(t.Policy),
		"retries_left", int64(t.RetriesLeft), "id", t.ID, "current_interval", durationOrNil(t.CurrentInterval),
		"priority", priority,
	)}
}

// readTask reads a Task model to create; a task without policy takes
// policy. Its status must be the one of new tasks; its id is ignored.
func readTask(policy revisit.TaskPolicy) conv[revisit.NewTask] {
	return func(path string, v any) (revisit.NewTask, error) {
		r, err := modelFields(path, "Task", v)
		if err != nil {
			return revisit.NewTask{}, err
		}
		t := revisit.NewTask{
			Type:        required(r, "type", asStr),
			Arguments:   required(r, "arguments", readTaskArguments),
			NextRun:     required(r, "next_run", asTime),
			Policy:      field(r, "policy", asTaskPolicy, policy),
			RetriesLeft: field(r, "retries_left", optional(asRange(0, maxInt32)), nil),
			Priority:    field(r, "priority", asPriority, revisit.PriorityNone),
			Status:      field(r, "status", asTaskStatus, revisit.TaskNextRunNotScheduled),
		}
		// As upstream, a new task's id is the store's and its interval
		// the task type's default: the model's are read and left.
		field(r, "id", optional(asInt), nil)
		field(r, "current_interval", optional(asDuration), nil)
		return t, r.finish()
	}
}

func asTaskPolicy(field string, v any) (revisit.TaskPolicy, error) {
	s, err := asStr(field, v)
	if err != nil {
		return "", err
	}
	if p := revisit.TaskPolicy(s); p.Valid() {
		return p, nil
	}
	return "", revisit.Invalidf(field, "%q is not oneshot or recurring", s)
}

// asPriority reads a task priority: high, normal, low, or None.
func asPriority(field string, v any) (revisit.TaskPriority, error) {
	if v == nil {
		return revisit.PriorityNone, nil
	}
	s, err := asStr(field, v)
	if err != nil {
		return "", err
	}
	if p := revisit.TaskPriority(s); p != revisit.PriorityNone && p.Valid() {
		return p, nil
	}
	return "", revisit.Invalidf(field, "%q is not high, normal, low or None", s)
}

func asTaskStatus(field string, v any) (revisit.TaskStatus, error) {
	s, err := asStr(field, v)
	if err != nil {
		return "", err
	}
	if st := revisit.TaskStatus(s); st.Valid() {
		return st, nil
	}
	return "", revisit.Invalidf(field, "%q is not next_run_not_scheduled, next_run_scheduled, completed or disabled", s)
}

func readTaskArguments(path string, v any) (revisit.TaskArguments, error) {
	r, err := modelFields(path, "TaskArguments", v)
	if err != nil {
		return revisit.TaskArguments{}, err
	}
	a := revisit.TaskArguments{
		Args:   field(r, "args", asArray, []any{}),
		Kwargs: field(r, "kwargs", asObject, map[string]any{}),
	}
	return a, r.finish()
}

func taskRunModel(r revisit.TaskRun) swhwire.Model {
	return swhwire.Model{Type: "TaskRun", Fields: pairs(
		"task", r.TaskID, "id", r.ID, "backend_id", r.BackendID, "scheduled", swhwire.Optional(r.Scheduled),
		"started", swhwire.Optional(r.Started), "ended", swhwire.Optional(r.Ended), "metadata", optionalObject(r.Metadata),
		"status", string(r.Status),
	)}
}

func asTaskRunStatus(field string, v any) (revisit.TaskRunStatus, error) {
	s, err := asStr(field, v)
	if err != nil {
		return "", err
	}
	if st := revisit.TaskRunStatus(s); st.Valid() {
		return st, nil
	}
	return "", revisit.Invalidf(field, "%q is not scheduled, started, eventful, uneventful, failed, permfailed or lost", s)
}

// readTaskRun reads a TaskRun model to schedule. As upstream, the run is
// scheduled whatever the model says of its id, status, start and end,
// which are read and left; a run without a scheduled time is scheduled at
// now.
func readTaskRun(now time.Time) conv[revisit.NewTaskRun] {
	return func(path string, v any) (revisit.NewTaskRun, error) {
		r, err := modelFields(path, "TaskRun", v)
		if err != nil {
			return revisit.NewTaskRun{}, err
		}
		run := revisit.NewTaskRun{
			TaskID:    required(r, "task", asInt),
			BackendID: required(r, "backend_id", asStr),
			Scheduled: deref(field(r, "scheduled", optional(asTime), &now)),
			Metadata:  deref(field(r, "metadata", optional(asObject), nil)),
		}
		field(r, "id", optional(asInt), nil)
		field(r, "started", optional(asTime), nil)
		field(r, "ended", optional(asTime), nil)
		field(r, "status", asTaskRunStatus, revisit.RunScheduled)
		if err := r.finish(); err != nil {
			return run, err
		}
		if run.Scheduled.IsZero() {
			run.Scheduled = now
		}
		return run, nil
	}
}

// prefixed prefixes the field of an invalid-input error.
func prefixed(prefix string, err error) error {
	e, ok := err.(*revisit.Error)
	if !ok || e.Code != revisit.CodeInvalid {
		return err
	}
	return &revisit.Error{Code: e.Code, Message: e.Message, Field: prefix + e.Field}
}

// pairs is a map, in order, of alternating keys and values.
func pairs(kv ...any) swhwire.Map {
	m := make(swhwire.Map, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m = append(m, swhwire.Pair{Key: kv[i], Value: kv[i+1]})
	}
	return m
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
