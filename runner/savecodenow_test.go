package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/internal/testkit/swhcall"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhrpc"
	"github.com/revisit-sched/revisit/swhwire"
)

// TestSaveCodeNowLeavesInOneRound: the web app's "save code now" creates,
// through the RPC, a oneshot load-git task of priority high. While the
// load-git queue is full of ordinary work, the next round of the runner
// sends it to the priority queue, where a worker takes it.
func TestSaveCodeNowLeavesInOneRound(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		const backend = "swh.loader.git.tasks.UpdateGitRepository"
		rpc := httptest.NewServer(swhrpc.New(swhrpc.Config{Store: st}))
		defer rpc.Close()
		call := func(path string, params ...any) any {
			t.Helper()
			var m swhwire.Map
			for i := 0; i < len(params); i += 2 {
				m = append(m, swhwire.Pair{Key: params[i], Value: params[i+1]})
			}
			return swhcall.Call(t, rpc.URL, path, m)
		}
		model := func(typ string, fields ...any) swhwire.Model {
			m := swhwire.Model{Type: typ}
			for i := 0; i < len(fields); i += 2 {
				m.Fields = append(m.Fields, swhwire.Pair{Key: fields[i], Value: fields[i+1]})
			}
			return m
		}
		call("task_type/create", "task_type", model("TaskType", "type", "load-git", "description", "Update a git repository",
			"backend_name", backend, "default_interval", swhwire.Timedelta{Days: 64}, "max_queue_length", int64(10)))
		due := time.Now().Add(-time.Minute).UTC()
		var ordinary []any
		for i := range 20 {
			ordinary = append(ordinary, model("Task", "type", "load-git", "arguments",
				model("TaskArguments", "args", []any{}, "kwargs", swhwire.Map{{Key: "url", Value: fmt.Sprintf("https://forge.example/%d", i)}}),
				"next_run", due, "policy", "oneshot"))
		}
		call("task/create", "tasks", ordinary)

		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		r, err := New(st, b, testConfig())
		require.NoError(t, err)
		types, err := r.TaskTypes(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"load-git"}, types, "load-git tasks are dispatched with no flag")
		loop := newLoop(r, "load-git")
		_, err = loop.round(ctx)
		require.NoError(t, err)
		depth, err := b.Depth(ctx, backend)
		require.NoError(t, err)
		require.EqualValues(t, 10, depth, "the queue is full of ordinary work")

		saved := call("task/create", "tasks", []any{model("Task", "type", "load-git", "arguments",
			model("TaskArguments", "args", []any{}, "kwargs", swhwire.Map{{Key: "url", Value: "https://forge.example/saved"}}),
			"next_run", time.Now().UTC(), "policy", "oneshot", "priority", "high")}).([]any)
		require.Len(t, saved, 1)
		id, _ := saved[0].(swhwire.Model).Fields.Get("id")

		_, err = loop.round(ctx)
		require.NoError(t, err)
		depth, err = b.Depth(ctx, backend)
		require.NoError(t, err)
		require.EqualValues(t, 10, depth, "no ordinary task more: the queue is still full")
		got, err := b.Lease(ctx, embedded.LeaseParams{Queue: DefaultPriorityQueuePrefix + backend, Worker: "w", Max: 10,
			LeaseFor: time.Minute})
		require.NoError(t, err)
		require.Len(t, got, 1, "the saved origin left in this round, for the priority queue")
		var kwargs map[string]any
		require.NoError(t, json.Unmarshal(got[0].Kwargs, &kwargs))
		require.Equal(t, "https://forge.example/saved", kwargs["url"])
		tk := task(t, st, id.(int64))
		require.Equal(t, revisit.TaskNextRunScheduled, tk.Status)
	})
}
