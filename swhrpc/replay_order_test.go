package swhrpc_test

import (
	"fmt"
	"time"

	"github.com/revisit-sched/revisit/swhwire"
)

// What the replay compares as upstream answers it, not value for value: the
// answers upstream gives in no defined order, and the draws at random.

// unorderedAnswers are the calls whose list answer upstream selects without
// an ORDER BY, so in no defined order (the order of its table's heap), and
// ours in an order of its own (by name, by id...): they are compared as
// sets, both sorted by what is not an id or a clock. grab_next_visits
// orders by its policy's key, which ties often (all the origins a grab
// marked share their last_scheduled, say) and which the answer does not
// show: it is compared as a set too, and never_visited_oldest_update_first,
// whose key (last_update) it shows, must be in that order. The listers
// come in creation order, upstream's too: they are compared in order.
var unorderedAnswers = map[string]bool{
	"/origins/grab_next":        true,
	"/task_type/get_all":        true,
	"/scheduler_metrics/get":    true,
	"/scheduler_metrics/update": true,
	"/task/get":                 true,
	"/task/search":              true,
	"/task_run/get":             true,
}

const (
	// unorderedAnswer names the comparison of unorderedAnswers.
	unorderedAnswer = "an answer in no defined order, compared as a set"
	// sampledGrab: grab_next_visits with a tablesample draws at random,
	// upstream (TABLESAMPLE SYSTEM picks whole table blocks) and ours (a
	// share of the eligible origins) alike: only the shape of the answer is
	// compared.
	sampledGrab = "grab_next_visits with a tablesample: a random draw"
)

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
