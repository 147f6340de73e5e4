package grabsql

import (
	"fmt"
	"slices"
	"testing"

	"github.com/revisit-sched/revisit"
)

// candidates returns rows of the given URLs, in order.
func candidates(urls ...string) []Candidate {
	rows := make([]Candidate, len(urls))
	for i, u := range urls {
		rows[i] = Candidate{Origin: revisit.ListedOrigin{URL: u}}
	}
	return rows
}

// picker returns a fetch over rows that records the limits it was asked.
func picker(rows []Candidate, limits *[]int) func(int) ([]Candidate, error) {
	return func(limit int) ([]Candidate, error) {
		*limits = append(*limits, limit)
		return rows[:min(limit, len(rows))], nil
	}
}

func urlsOf(rows []Candidate) []string {
	urls := make([]string, len(rows))
	for i, r := range rows {
		urls[i] = r.Origin.URL
	}
	return urls
}

func TestPick(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf("u%d", i)
	}
	// Every URL twice in a row: 50 distinct in the first 100 rows.
	twice := make([]string, 0, 200)
	for _, u := range many {
		twice = append(twice, u, u)
	}
	for _, c := range []struct {
		name     string
		rows     []string
		count    int
		everyRow bool
		want     []string
		limits   []int
	}{
		{"distinct rows: one fetch of count", many, 10, false, many[:10], []int{10}},
		{"repeated URLs: asked again for more", []string{"a", "a", "b", "c", "b", "d", "e"}, 3, false, []string{"a", "b", "c"}, []int{3, 21}},
		{"rows run out", []string{"a", "a", "b"}, 5, false, []string{"a", "b"}, []int{5}},
		{"many repeats", twice, 50, false, many[:50], []int{50, 116}},
		{"none", nil, 5, false, []string{}, []int{5}},
		{"every row: repeats kept, count rows", []string{"a", "a", "b", "c", "b"}, 4, true, []string{"a", "a", "b", "c"}, []int{4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var limits []int
			got, err := Pick(c.count, c.everyRow, picker(candidates(c.rows...), &limits))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(urlsOf(got), c.want) {
				t.Errorf("picked %v, want %v", urlsOf(got), c.want)
			}
			if !slices.Equal(limits, c.limits) {
				t.Errorf("fetched with limits %v, want %v", limits, c.limits)
			}
		})
	}
}
