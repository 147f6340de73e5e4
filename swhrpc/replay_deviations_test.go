package swhrpc_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhwire"
)

// The replay holds our answers to the recorded ones but where revisit
// deviates from upstream on purpose, as its documentation says
// (docs/wire.md §5 lists them). Each deviation is named here, with what the
// replay compares instead; the tests log how many calls each concerned.

// unorderedAnswers are the calls whose list answer upstream selects without
// an ORDER BY, so in no defined order, and ours in an order of its own (by
// name, by id...): they are compared as sets, both sorted by what is not an
// id or a clock. grab_next_visits orders by its policy's key, which ties
// often (all the origins a grab marked share their last_scheduled, say) and
// which the answer does not show: it is compared as a set too, and
// never_visited_oldest_update_first, whose key (last_update) it shows, must
// be in that order.
var unorderedAnswers = map[string]bool{
	"/origins/grab_next":        true,
	"/task_type/get_all":        true,
	"/listers/get":              true,
	"/listers/get_by_id":        true,
	"/scheduler_metrics/get":    true,
	"/scheduler_metrics/update": true,
	"/task/get":                 true,
	"/task/search":              true,
	"/task_run/get":             true,
}

const (
	// unorderedAnswer names the deviation of unorderedAnswers.
	unorderedAnswer = "an answer in no defined order"
	// oneTaskPerInput: create_tasks makes one task of identical inputs, in
	// the batch or already active, and answers one task per input
	// (docs/wire.md §5, docs/semantics.md §8); upstream makes a task of every
	// input and answers every active copy of an input given again. The
	// recorded answer is cut to one task per input, the first copy, and
	// the ids of the other copies stand for it.
	oneTaskPerInput = "create_tasks: one task per distinct input"
	// oneVisitPerOrigin: grab_next_visits returns an origin listed by
	// several listers once, one lister's row (docs/wire.md §5,
	// docs/semantics.md §3);
	// upstream returns every lister's row. The recorded answer keeps, of
	// the rows of one (url, visit_type), the one of our answer's lister.
	oneVisitPerOrigin = "grab_next_visits: an origin once, whatever its listers"
	// sampledGrab: grab_next_visits with a tablesample draws at random,
	// upstream (TABLESAMPLE SYSTEM picks whole table blocks) and ours (a
	// share of the eligible origins, docs/wire.md §5) alike: only the
	// shape of the answer is compared.
	sampledGrab = "grab_next_visits with a tablesample: a random draw"
	// absoluteURLs: revisit keeps origins of absolute URLs only, listed
	// origins and visit stats alike (docs/wire.md §5);
	// upstream's tests store the stats of "foo" and "bar". A call that
	// writes such a URL must be refused with a SchedulerException naming
	// it, and nothing of that URL is expected in later answers.
	absoluteURLs = "origin URLs must be absolute"
	// defaultQueueLength: a task type created without max_queue_length has
	// the default, 1000, and says so; upstream stores and answers None.
	defaultQueueLength = "max_queue_length: none is the default, 1000"
	// emptyRunMetadata: a task run scheduled without metadata has {};
	// upstream answers None until the run starts.
	emptyRunMetadata = "task run metadata: none is {}"
	// storedPositions: visit_scheduler/get lists the queue positions
	// stored; upstream also lists a 0 for a visit type an
	// origins_without_last_update grab only read. A recorded 0 may be
	// missing from ours.
	storedPositions = "visit_scheduler/get: stored positions only"
	// recurringTasksStay: delete_archived deletes the runs named and the
	// oneshot tasks left without runs; recurring tasks stay. Upstream
	// deletes every task named whose runs are gone. A recurring task named
	// there may still be in our later answers, and is left out of them.
	recurringTasksStay = "delete_archived: recurring tasks stay"
)

// documentedValue says whether ours may answer got where upstream answered
// rec, at place at, and under which deviation.
func documentedValue(at place, rec, got any) (string, bool) {
	switch at {
	case place{"TaskType", "max_queue_length"}:
		n, _ := integer(got)
		return defaultQueueLength, rec == nil && n != nil && n.Int64() == revisit.DefaultMaxQueueLength
	case place{"TaskRun", "metadata"}:
		m, ok := got.(swhwire.Map)
		return emptyRunMetadata, rec == nil && ok && len(m) == 0
	}
	return "", false
}

// withoutZeroPositions is a recorded visit_scheduler/get answer without the
// positions of 0 ours does not list; it says whether it left any out.
func withoutZeroPositions(rec, ours any) (any, bool) {
	r, okR := rec.(swhwire.Map)
	o, okO := ours.(swhwire.Map)
	if !okR || !okO {
		return rec, false
	}
	var out swhwire.Map
	for _, p := range r {
		k, _ := p.Key.(string)
		if n, _ := integer(p.Value); n != nil && n.Sign() == 0 && fieldOf(o, k) == nil {
			continue
		}
		out = append(out, p)
	}
	return out, len(out) < len(r)
}

// withoutKeptTasks is our list answer without the recurring tasks that
// stayed after a delete_archived named them (kept: their recorded ids) and
// that the recorded answer does not have; it says whether it left any out.
func withoutKeptTasks(tr *translation, kept map[int64]bool, rec, ours any) (any, bool) {
	rows, ok := ours.([]any)
	if !ok || len(kept) == 0 {
		return ours, false
	}
	recorded := map[int64]bool{}
	if l, ok := rec.([]any); ok {
		for _, t := range l {
			recorded[taskIDOf(t)] = true
		}
	}
	var out []any
	for _, t := range rows {
		m, isTask := t.(swhwire.Model)
		recID, known := tr.ourIDs[taskID][taskIDOf(t)]
		if isTask && m.Type == "Task" && known && kept[recID] && !recorded[recID] && fieldOf(t, "policy") == "recurring" {
			continue
		}
		out = append(out, t)
	}
	return out, len(out) < len(rows)
}

// refusedURLs are the relative origin URLs of the models of a request.
func refusedURLs(req any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case swhwire.Map:
			for _, p := range v {
				walk(p.Value)
			}
		case swhwire.Model:
			if u, ok := v.Fields.Get("url"); ok {
				if s, ok := u.(string); ok && revisit.ValidateOriginURL(s) != nil {
					out = append(out, s)
				}
			}
		}
	}
	walk(req)
	return out
}

// checkRefused checks our answer to a call that writes relative URLs: a 400
// SchedulerException that names one of them.
func checkRefused(status int, body []byte, urls []string) []string {
	v, err := swhwire.Decode(body)
	if err != nil {
		return []string{fmt.Sprintf("status %d, body %v", status, err)}
	}
	m, _ := v.(swhwire.Map)
	typ, _ := m.Get("type")
	msg, _ := m.Get("message")
	text, _ := msg.(string)
	named := false
	for _, u := range urls {
		named = named || strings.Contains(text, fmt.Sprintf("%q", u))
	}
	if status != 400 || typ != "SchedulerException" || !named {
		return []string{fmt.Sprintf("status %d, body %s; want a 400 SchedulerException naming one of %q", status, show(v), urls)}
	}
	return nil
}

// withoutURLs is a recorded list answer without the models of urls.
func withoutURLs(rec any, urls map[string]bool) any {
	l, ok := rec.([]any)
	if !ok || len(urls) == 0 {
		return rec
	}
	out := []any{}
	for _, e := range l {
		if m, ok := e.(swhwire.Model); ok {
			if u, _ := m.Fields.Get("url"); urls[fmt.Sprint(u)] {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// taskIdentity is what makes two tasks the same task to create_tasks: all
// the fields a client gives, rendered without ids.
func taskIdentity(v any) string {
	m, ok := v.(swhwire.Model)
	if !ok {
		return show(v)
	}
	var keep swhwire.Map
	for _, p := range m.Fields {
		switch p.Key {
		case "type", "arguments", "next_run", "policy", "priority":
			keep = append(keep, p)
		}
	}
	return naturalKey(swhwire.Model{Type: m.Type, Fields: keep}, place{})
}

// oneTaskEach cuts the recorded answer of a create_tasks to one task per
// input: the first recorded task identical to it. It returns the cut answer
// and, for each recorded task id left out, the recorded id that stands for
// it.
func oneTaskEach(req, rec any) (any, map[int64]int64) {
	inputs, _ := fieldOf(req, "tasks").([]any)
	answer, ok := rec.([]any)
	if !ok {
		return rec, nil
	}
	first := map[string]any{}
	for _, t := range answer {
		if k := taskIdentity(t); first[k] == nil {
			first[k] = t
		}
	}
	aliases := map[int64]int64{}
	for _, t := range answer {
		if f := first[taskIdentity(t)]; taskIDOf(f) != taskIDOf(t) {
			aliases[taskIDOf(t)] = taskIDOf(f)
		}
	}
	out := make([]any, 0, len(inputs))
	for _, in := range inputs {
		f := first[taskIdentity(in)]
		if f == nil {
			return rec, nil
		}
		out = append(out, f)
	}
	return out, aliases
}

// oneRowPerOrigin cuts a recorded grab_next_visits answer to one row per
// (url, visit_type), in the order of their first rows: the row whose lister
// is the one of ours, else the first. It says whether it cut anything.
func oneRowPerOrigin(tr *translation, rec, ours any) (any, bool) {
	rows, ok := rec.([]any)
	if !ok {
		return rec, false
	}
	ourLister := map[string]any{}
	if l, ok := ours.([]any); ok {
		for _, row := range l {
			ourLister[originKey(row)] = fieldOf(row, "lister_id")
		}
	}
	var order []string
	chosen := map[string]any{}
	for _, row := range rows {
		k := originKey(row)
		prev, seen := chosen[k]
		if !seen {
			order = append(order, k)
		}
		lister, _ := fieldOf(row, "lister_id").(uuid.UUID)
		if !seen || (prev != nil && tr.uuids[lister] == ourLister[k]) {
			chosen[k] = row
		}
	}
	out := make([]any, len(order))
	for i, k := range order {
		out[i] = chosen[k]
	}
	return out, len(out) < len(rows)
}

// checkSample checks the shape of a sampled grab_next_visits answer: at
// most count listed origins of the visit type asked.
func checkSample(req, ours any) []string {
	rows, ok := ours.([]any)
	count, _ := integer(fieldOf(req, "count"))
	if !ok || count == nil || int64(len(rows)) > count.Int64() {
		return []string{fmt.Sprintf("want at most %v listed origins, got %s", count, show(ours))}
	}
	for i, row := range rows {
		m, ok := row.(swhwire.Model)
		if vt, _ := m.Fields.Get("visit_type"); !ok || m.Type != "ListedOrigin" || vt != fieldOf(req, "visit_type") {
			return []string{fmt.Sprintf("response[%d]: want a ListedOrigin of visit type %v, got %s", i, fieldOf(req, "visit_type"), show(row))}
		}
	}
	return nil
}

// lastUpdateOrder checks that listed origins come by last_update.
func lastUpdateOrder(ours any) []string {
	rows, _ := ours.([]any)
	for i := 1; i < len(rows); i++ {
		prev, _ := fieldOf(rows[i-1], "last_update").(time.Time)
		this, _ := fieldOf(rows[i], "last_update").(time.Time)
		if this.Before(prev) {
			return []string{fmt.Sprintf("response[%d].last_update %s comes before response[%d]'s %s", i, stamp(this), i-1, stamp(prev))}
		}
	}
	return nil
}

// fieldOf is the field name of a map or a model, nil when absent.
func fieldOf(v any, name string) any {
	switch v := v.(type) {
	case swhwire.Map:
		f, _ := v.Get(name)
		return f
	case swhwire.Model:
		f, _ := v.Fields.Get(name)
		return f
	}
	return nil
}

func taskIDOf(v any) int64 {
	n, _ := integer(fieldOf(v, "id"))
	if n == nil {
		return 0
	}
	return n.Int64()
}

// originKey is the (url, visit_type) of a listed origin.
func originKey(v any) string {
	return fmt.Sprint(fieldOf(v, "url"), " ", fieldOf(v, "visit_type"))
}
