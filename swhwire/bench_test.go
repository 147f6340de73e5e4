package swhwire_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit/swhwire"
)

// pageOfOrigins is what origins/grab_next answers for 1000 origins.
func pageOfOrigins() []any {
	lister := uuid.New()
	seen := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	page := make([]any, 1000)
	for i := range page {
		page[i] = swhwire.Model{Type: "ListedOrigin", Fields: swhwire.Map{
			{Key: "lister_id", Value: lister}, {Key: "url", Value: fmt.Sprintf("https://github.com/org%d/repo%d", i/10, i)},
			{Key: "visit_type", Value: "git"}, {Key: "extra_loader_arguments", Value: map[string]any{}},
			{Key: "last_update", Value: seen}, {Key: "is_fork", Value: nil}, {Key: "forked_from_url", Value: nil},
			{Key: "enabled", Value: true}, {Key: "first_seen", Value: seen}, {Key: "last_seen", Value: seen},
		}}
	}
	return page
}

func BenchmarkEncodeOrigins(b *testing.B) {
	page := pageOfOrigins()
	for b.Loop() {
		if _, err := swhwire.Encode(page); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeOrigins(b *testing.B) {
	raw, err := swhwire.Encode(pageOfOrigins())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := swhwire.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}
