package broker_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

func TestMalformedCounterCountsEachBadEventAndReportsKindsOnce(t *testing.T) {
	var c broker.MalformedCounter
	_, errJSON := celery.DecodeEvents("task.started", []byte("{not json"))
	_, errBatch := celery.DecodeEvents("task.multi", []byte(`[
		{"type": "task-nope", "uuid": "a", "timestamp": 1},
		{"type": "task-started", "timestamp": 1},
		{"type": "task-started", "uuid": "b", "timestamp": 1, "hostname": "h"},
		{"type": "task-unknown2", "uuid": "c", "timestamp": 1}
	]`))
	if errJSON == nil || errBatch == nil {
		t.Fatalf("expected decode errors, got %v / %v", errJSON, errBatch)
	}

	first := c.Record(errJSON)
	if len(first) != 1 || !errors.Is(first[0], celery.ErrBadJSON) {
		t.Fatalf("first Record: got %v, want one bad-JSON error", first)
	}
	first = c.Record(errBatch)
	if len(first) != 2 { // unknown type and missing field, once each
		t.Fatalf("second Record: got %d first-of-kind errors (%v), want 2", len(first), first)
	}
	if again := c.Record(errJSON); len(again) != 0 {
		t.Fatalf("a kind already seen was reported again: %v", again)
	}
	if again := c.Record(errors.New("something else")); len(again) != 1 {
		t.Fatalf("an unknown error kind should be reported once, got %v", again)
	}
	if c.Record(nil) != nil {
		t.Fatal("Record(nil) reported something")
	}

	want := broker.MalformedCounts{BadJSON: 2, UnknownType: 2, MissingField: 1, Other: 1}
	if got := c.Counts(); got != want {
		t.Fatalf("counts: got %+v, want %+v", got, want)
	}
	if got := c.Counts().Total(); got != 6 {
		t.Fatalf("total: got %d, want 6", got)
	}
}

func TestMalformedCounterIsSafeForConcurrentUse(t *testing.T) {
	var c broker.MalformedCounter
	_, err := celery.DecodeEvents("task.started", []byte("[1"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Record(err)
			}
		}()
	}
	wg.Wait()
	if got := c.Counts().BadJSON; got != 800 {
		t.Fatalf("got %d bad JSON, want 800", got)
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[broker.Outcome]string{
		broker.Confirmed: "confirmed", broker.Returned: "returned", broker.Failed: "failed", broker.Outcome(9): "outcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("%d: got %q, want %q", int(o), got, want)
		}
	}
}
