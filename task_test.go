package revisit

import (
	"testing"
	"time"
)

func TestEndRunEdges(t *testing.T) {
	ended := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	rec := Task{Policy: TaskRecurring, Status: TaskNextRunScheduled, CurrentInterval: 10 * time.Hour, RetriesLeft: 1}
	cases := []struct {
		name   string
		task   Task
		tt     TaskType
		status TaskRunStatus
		want   Task
	}{
		{"no factor keeps the interval", rec, TaskType{NumRetries: 4}, RunEventful,
			Task{Policy: TaskRecurring, Status: TaskNextRunNotScheduled, CurrentInterval: 10 * time.Hour, RetriesLeft: 4, NextRun: ended.Add(10 * time.Hour)}},
		{"unbounded growth saturates", Task{Policy: TaskRecurring, Status: TaskNextRunScheduled, CurrentInterval: 1 << 62}, TaskType{BackoffFactor: 4}, RunUneventful,
			Task{Policy: TaskRecurring, Status: TaskNextRunNotScheduled, CurrentInterval: maxDuration.Truncate(time.Microsecond), NextRun: ended.Add(maxDuration.Truncate(time.Microsecond))}},
		{"disabled stays disabled", Task{Policy: TaskRecurring, Status: TaskDisabled}, TaskType{}, RunEventful,
			Task{Policy: TaskRecurring, Status: TaskDisabled}},
		{"permfailed keeps retries", rec, TaskType{}, RunPermfailed,
			Task{Policy: TaskRecurring, Status: TaskDisabled, CurrentInterval: 10 * time.Hour, RetriesLeft: 1}},
	}
	for _, c := range cases {
		got := EndRun(c.task, c.tt, c.status, ended)
		if got.Status != c.want.Status || got.CurrentInterval != c.want.CurrentInterval ||
			got.RetriesLeft != c.want.RetriesLeft || !got.NextRun.Equal(c.want.NextRun) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestNewTaskNeedsInterval(t *testing.T) {
	_, err := NewTask{Type: "x", Policy: TaskRecurring, NextRun: time.Now()}.Task(TaskType{Type: "x"})
	if e, ok := err.(*Error); !ok || e.Field != "current_interval" {
		t.Fatalf("got %v, want an error naming current_interval", err)
	}
}
