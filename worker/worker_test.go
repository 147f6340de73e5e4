package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/worker"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const queue = "swh.loader.git.tasks.UpdateGitRepository"

// server serves the API over a fresh SQLite store holding n messages, and
// returns its URL and the store.
func server(t *testing.T, n int) (string, store.Store) {
	t.Helper()
	return serverWithTokens(t, n, nil)
}

// serverWithTokens is server accepting only tokens.
func serverWithTokens(t *testing.T, n int, tokens []config.Token) (string, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), store.Options{})
	require.NoError(t, err)
	b := embedded.New(st, embedded.Config{PollInterval: 50 * time.Millisecond})
	srv := httptest.NewServer(api.New(api.Config{Queues: b, Tokens: tokens}))
	t.Cleanup(func() {
		srv.Close()
		b.Close()
		st.Close()
	})
	msgs := make([]celery.Message, n)
	for i := range msgs {
		msgs[i], err = celery.NewMessage(celery.Task{Name: queue, ID: uuid.NewString(), Origin: "test@host",
			Kwargs: map[string]any{"url": fmt.Sprintf("https://github.com/a/%d", i)}})
		require.NoError(t, err)
	}
	_, err = b.Publish(context.Background(), queue, msgs)
	require.NoError(t, err)
	return srv.URL, st
}

// results waits until the store holds n results, and returns them.
func results(t *testing.T, st store.Store, n int) []revisit.QueueResult {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rs, err := st.QueueResultsNext(context.Background(), revisit.QueueResultsParams{Max: n + 10})
		require.NoError(t, err)
		if len(rs) >= n || time.Now().After(deadline) {
			require.Len(t, rs, n)
			return rs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCompletesEachMessageOnce(t *testing.T) {
	t.Parallel()
	const n = 30
	url, st := server(t, n)
	var (
		mu    sync.Mutex
		calls = map[string]int{}
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- worker.Run(ctx, worker.Config{Server: url, Queue: queue, Name: "w1", Concurrency: 4, Wait: time.Second,
			Handler: func(_ context.Context, task worker.Task) (worker.Result, error) {
				var kw struct{ URL string }
				if err := json.Unmarshal(task.Kwargs, &kw); err != nil || kw.URL == "" {
					return worker.Result{}, fmt.Errorf("bad kwargs %s", task.Kwargs)
				}
				mu.Lock()
				calls[task.ID]++
				mu.Unlock()
				return worker.Result{Status: "eventful", Snapshot: "00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff"}, nil
			}})
	}()
	rs := results(t, st, n)
	cancel()
	require.NoError(t, <-done)
	require.Len(t, calls, n)
	for id, c := range calls {
		require.Equal(t, 1, c, "message %s handled %d times", id, c)
	}
	for _, r := range rs {
		require.JSONEq(t, `{"status": "eventful", "snapshot_id": "00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff"}`, string(r.Result))
		require.Equal(t, "w1", r.Worker)
	}
}

func TestHeartbeatKeepsTheLease(t *testing.T) {
	t.Parallel()
	url, st := server(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var others int
	wg.Go(func() {
		_ = worker.Run(ctx, worker.Config{Server: url, Queue: queue, Name: "slow", LeaseFor: time.Second, Wait: time.Second,
			Handler: func(ctx context.Context, _ worker.Task) (worker.Result, error) {
				select {
				case <-time.After(2500 * time.Millisecond):
				case <-ctx.Done():
				}
				return worker.Result{Status: "uneventful"}, nil
			}})
	})
	time.Sleep(200 * time.Millisecond) // let the slow worker lease first
	wg.Go(func() {
		_ = worker.Run(ctx, worker.Config{Server: url, Queue: queue, Name: "other", Wait: time.Second,
			Handler: func(context.Context, worker.Task) (worker.Result, error) {
				others++
				return worker.Result{Status: "failed"}, nil
			}})
	})
	rs := results(t, st, 1)
	cancel()
	wg.Wait()
	require.Equal(t, "slow", rs[0].Worker, "heartbeats kept the lease past its second")
	require.Equal(t, 1, rs[0].Attempt)
	require.Zero(t, others)
}

func TestHandlerErrorIsAFailedResult(t *testing.T) {
	t.Parallel()
	url, st := server(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- worker.Run(ctx, worker.Config{Server: url, Queue: queue, Name: "w", Wait: time.Second,
			Handler: func(context.Context, worker.Task) (worker.Result, error) {
				return worker.Result{}, errors.New("repository is gone")
			}})
	}()
	rs := results(t, st, 1)
	cancel()
	require.NoError(t, <-done)
	require.JSONEq(t, `{"status": "failed", "error": "repository is gone"}`, string(rs[0].Result))
}

func TestRunRefusedConfiguration(t *testing.T) {
	t.Parallel()
	url, _ := server(t, 0)
	err := worker.Run(context.Background(), worker.Config{Server: url, Queue: queue, Name: string(make([]byte, 300)),
		Handler: func(context.Context, worker.Task) (worker.Result, error) { return worker.Result{}, nil }})
	var se *worker.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "worker", se.Field)
	require.Error(t, worker.Run(context.Background(), worker.Config{Server: url, Queue: queue}), "no name, no handler")
}

func TestToken(t *testing.T) {
	t.Parallel()
	url, st := serverWithTokens(t, 1, []config.Token{{Name: "workers", Token: "a-long-secret", Scope: "write"}})
	handler := func(context.Context, worker.Task) (worker.Result, error) {
		return worker.Result{Status: "uneventful"}, nil
	}
	err := worker.Run(context.Background(), worker.Config{Server: url, Queue: queue, Name: "w", Handler: handler})
	var se *worker.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 401, se.Status, "no token")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- worker.Run(ctx, worker.Config{Server: url, Queue: queue, Name: "w", Wait: time.Second,
			Token: "a-long-secret", Handler: handler})
	}()
	rs := results(t, st, 1)
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, "w", rs[0].Worker)
}
