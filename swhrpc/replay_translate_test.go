package swhrpc_test

import (
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit/swhwire"
)

// place is where a value sits: the field of a model (model is its class
// name) or the key of a plain map (model is ""). Elements of a list sit
// where their list does.
type place struct{ model, key string }

// idKind names a family of integer ids the server numbers itself.
type idKind string

const (
	taskID idKind = "task id"
	runID  idKind = "task run id"
)

// integerIDs are the places whose integers are ids the server chose.
var integerIDs = map[place]idKind{
	{"Task", "id"}:      taskID,
	{"TaskRun", "task"}: taskID,
	{"TaskRun", "id"}:   runID,
	{"", "task_id"}:     taskID, // task/search, task/filter_for_archive rows, task/delete_archived
	{"", "task_ids"}:    taskID,
	{"", "task_run_id"}: runID,
}

// pageTokens are the places of page tokens: opaque text the client sends
// back as it got it (task/filter_for_archive's; origins/get's are a lister
// id and a URL).
var pageTokens = map[place]bool{{"", "page_token"}: true, {"", "next_page_token"}: true}

// serverClocks are the places whose times the server may take from its own
// clock (when the client passed no time): they are compared through the
// translation of clocks, not as they were recorded.
var serverClocks = map[place]bool{
	{"Lister", "created"}:                   true,
	{"Lister", "updated"}:                   true,
	{"Lister", "first_visits_scheduled_at"}: true,
	{"ListedOrigin", "first_seen"}:          true,
	{"ListedOrigin", "last_seen"}:           true,
	{"OriginVisitStats", "last_scheduled"}:  true,
	{"SchedulerMetrics", "last_update"}:     true,
	{"Task", "next_run"}:                    true, // the end of a run moves it from the run's end
	{"TaskRun", "scheduled"}:                true,
	{"TaskRun", "started"}:                  true,
	{"TaskRun", "ended"}:                    true,
	{"", "scheduled"}:                       true, // task/filter_for_archive rows
	{"", "started"}:                         true,
	{"", "ended"}:                           true,
}

// elementPlace is where the elements of a list at place at sit: where the
// list does, but for a page token made of parts (origins/get's lister id and
// URL), whose parts are plain values.
func elementPlace(at place) place {
	if pageTokens[at] {
		return place{}
	}
	return at
}

// translation maps what the upstream server generated in one segment
// (lister ids, task and run ids, the times of its clock) to what ours
// generated at the same place, learned from the responses; requests are
// rewritten with it before they are sent. It also remembers what the client
// itself sent, which must come back unchanged.
type translation struct {
	uuids     map[uuid.UUID]uuid.UUID
	ourUUIDs  map[uuid.UUID]uuid.UUID // the reverse of uuids
	ids       map[idKind]map[int64]int64
	ourIDs    map[idKind]map[int64]int64 // the reverse of ids
	clocks    map[time.Time]time.Time
	tokens    map[string]string
	sentUUIDs map[uuid.UUID]bool
	sentTimes map[time.Time]bool
	rewrites  int // values request replaced, so far
}

func newTranslation() *translation {
	return &translation{
		uuids: map[uuid.UUID]uuid.UUID{}, ourUUIDs: map[uuid.UUID]uuid.UUID{},
		ids:    map[idKind]map[int64]int64{taskID: {}, runID: {}},
		ourIDs: map[idKind]map[int64]int64{taskID: {}, runID: {}},
		clocks: map[time.Time]time.Time{}, tokens: map[string]string{}, sentUUIDs: map[uuid.UUID]bool{}, sentTimes: map[time.Time]bool{},
	}
}

// request returns the recorded request v with every id and clock the
// translation knows replaced by ours, and notes what the client sent.
func (tr *translation) request(v any, at place) any {
	switch v := v.(type) {
	case uuid.UUID:
		tr.sentUUIDs[v] = true
		if o, ok := tr.uuids[v]; ok {
			tr.rewrites++
			return o
		}
	case time.Time:
		tr.sentTimes[v] = true
		if o, ok := tr.clocks[v]; ok {
			tr.rewrites++
			return o
		}
	case int64:
		if kind, ok := integerIDs[at]; ok {
			if o, ok := tr.ids[kind][v]; ok {
				tr.rewrites++
				return o
			}
		}
	case string:
		return tr.text(v, at)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = tr.request(e, elementPlace(at))
		}
		return out
	case swhwire.Map:
		out := make(swhwire.Map, len(v))
		for i, p := range v {
			k, _ := p.Key.(string)
			out[i] = swhwire.Pair{Key: p.Key, Value: tr.request(p.Value, place{key: k})}
		}
		return out
	case swhwire.Model:
		fields := make(swhwire.Map, len(v.Fields))
		for i, p := range v.Fields {
			k, _ := p.Key.(string)
			fields[i] = swhwire.Pair{Key: p.Key, Value: tr.request(p.Value, place{v.Type, k})}
		}
		return swhwire.Model{Type: v.Type, Fields: fields}
	}
	return v
}

// text translates a lister id written as text (listers/get_by_id, the page
// tokens of origins/get, grab_next's lister_uuid) and a page token.
func (tr *translation) text(s string, at place) string {
	if u, ok := uuidText(s); ok {
		tr.sentUUIDs[u] = true
		if o, ok := tr.uuids[u]; ok {
			tr.rewrites++
			return o.String()
		}
		return s
	}
	if o, ok := tr.tokens[s]; ok && pageTokens[at] {
		tr.rewrites++
		return o
	}
	return s
}

// uuidText is s as a UUID when it is one in its hyphenated form.
func uuidText(s string) (uuid.UUID, bool) {
	u, err := uuid.Parse(s)
	return u, err == nil && len(s) == 36
}
