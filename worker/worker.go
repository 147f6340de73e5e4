// Package worker is a small Go client of the embedded broker's worker
// protocol (wire.md §4, served by revisit serve): it leases task messages
// with long polls, runs a handler on each, extends the lease while the
// handler runs, and posts the result.
//
//	err := worker.Run(ctx, worker.Config{Server: "http://127.0.0.1:5080",
//		Queue: "swh.loader.git.tasks.UpdateGitRepository", Name: "loader-1",
//		Handler: func(ctx context.Context, t worker.Task) (worker.Result, error) {
//			return worker.Result{Status: "eventful"}, nil
//		}})
package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultLeaseFor   = 5 * time.Minute
	DefaultWait       = 20 * time.Second
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

// Task is one leased message.
type Task struct {
	// ID is the message id (the Celery task id).
	ID string
	// Name is the task name.
	Name string
	// Args is the JSON list of positional arguments.
	Args json.RawMessage
	// Kwargs is the JSON object of keyword arguments, e.g. {"url": ...}.
	Kwargs json.RawMessage
	// Attempt counts the leases of the message, this one included.
	Attempt int
}

// Result is what a handler reports.
type Result struct {
	// Status is eventful, uneventful, failed or not_found.
	Status string
	// Snapshot is the snapshot id, 40 hex digits; optional.
	Snapshot string
	// Error says what went wrong; optional.
	Error string
}

// Handler runs one task. An error reports the task failed, with the
// error's text. ctx ends when Run stops or the lease is lost (another
// worker has the message now); the result is then not posted.
type Handler func(ctx context.Context, t Task) (Result, error)

// Config configures Run. Zero fields take the defaults.
type Config struct {
	// Server is the base URL of revisit serve, e.g. http://127.0.0.1:5080.
	Server string
	// Queue is the queue to work on.
	Queue string
	// Name names this worker (unique among the workers of the queue).
	Name string
	// Concurrency is how many tasks run at once; default 1.
	Concurrency int
	// LeaseFor is the lease asked for, in whole seconds; the lease is
	// extended every third of it while the handler runs.
	LeaseFor time.Duration
	// Wait is how long one lease request long-polls an empty queue.
	Wait time.Duration
	// Handler runs each task.
	Handler Handler
	// Token is the bearer token sent with every request: a write token of
	// the server's api.tokens; empty sends none (a server without tokens).
	Token string
	// Client makes the HTTP requests; nil means a client without timeout
	// (each request is bounded by its own context).
	Client *http.Client
	// MinBackoff and MaxBackoff bound the delay between retries of
	// requests that failed for a transient reason (network, 5xx).
	MinBackoff, MaxBackoff time.Duration
	// Logger receives retries and lost leases; nil discards.
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Server == "":
		return c, errors.New("worker: Server is required")
	case c.Queue == "":
		return c, errors.New("worker: Queue is required")
	case c.Name == "":
		return c, errors.New("worker: Name is required")
	case c.Handler == nil:
		return c, errors.New("worker: Handler is required")
	}
	if _, err := url.Parse(c.Server); err != nil {
		return c, fmt.Errorf("worker: Server: %w", err)
	}
	c.Server = strings.TrimRight(c.Server, "/")
	c.Concurrency = max(c.Concurrency, 1)
	if c.LeaseFor <= 0 {
		c.LeaseFor = DefaultLeaseFor
	}
	c.LeaseFor = max(c.LeaseFor.Truncate(time.Second), time.Second)
	if c.Wait <= 0 {
		c.Wait = DefaultWait
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, DefaultMaxBackoff, c.MinBackoff)
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Run works on cfg.Queue until ctx ends, then returns nil once the tasks
// in progress have returned (their results are not posted: their leases
// expire and the messages go to another worker). It returns an error at
// once when the server refuses the configuration (a 4xx answer to a
// lease).
func Run(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	w := &runner{cfg: cfg}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			if err := w.loop(ctx); err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

type runner struct{ cfg Config }

// loop leases one task at a time and runs it, until ctx ends or the
// server refuses a lease.
func (w *runner) loop(ctx context.Context) error {
	for ctx.Err() == nil {
		var resp struct {
			Messages []struct {
				ID      string          `json:"id"`
				Task    string          `json:"task"`
				Args    json.RawMessage `json:"args"`
				Kwargs  json.RawMessage `json:"kwargs"`
				Attempt int             `json:"attempt"`
			} `json:"messages"`
		}
		err := w.call(ctx, "/api/v1/queues/"+url.PathEscape(w.cfg.Queue)+"/lease", map[string]any{
			"worker": w.cfg.Name, "max": 1, "lease_seconds": int(w.cfg.LeaseFor / time.Second),
			"wait_seconds": int(w.cfg.Wait / time.Second)}, w.cfg.Wait, &resp)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("worker: lease from %s: %w", w.cfg.Queue, err)
		}
		for _, m := range resp.Messages {
			w.run(ctx, Task{ID: m.ID, Name: m.Task, Args: m.Args, Kwargs: m.Kwargs, Attempt: m.Attempt})
		}
	}
	return nil
}

// run runs the handler on t, extending the lease meanwhile, and posts the
// result unless ctx ended or the lease was lost.
func (w *runner) run(ctx context.Context, t Task) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		w.heartbeat(hctx, cancel, t.ID)
	}()
	res, err := w.cfg.Handler(hctx, t)
	lost := hctx.Err() != nil
	cancel()
	<-beats
	if lost {
		return
	}
	if err != nil {
		res = Result{Status: "failed", Error: err.Error()}
	}
	body := map[string]any{"worker": w.cfg.Name, "status": res.Status}
	if res.Snapshot != "" {
		body["snapshot"] = res.Snapshot
	}
	if res.Error != "" {
		body["error"] = res.Error
	}
	if err := w.call(ctx, "/api/v1/messages/"+url.PathEscape(t.ID)+"/result", body, 0, nil); err != nil && ctx.Err() == nil {
		w.cfg.Logger.Error("worker: posting a result", "id", t.ID, "err", err)
	}
}

// heartbeat extends the lease of message id every third of the lease until
// ctx ends; when the lease is lost it calls lost.
func (w *runner) heartbeat(ctx context.Context, lost context.CancelFunc, id string) {
	t := time.NewTicker(w.cfg.LeaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := w.call(ctx, "/api/v1/messages/"+url.PathEscape(id)+"/heartbeat", map[string]any{
			"worker": w.cfg.Name, "lease_seconds": int(w.cfg.LeaseFor / time.Second)}, 0, nil)
		var se *StatusError
		if errors.As(err, &se) {
			w.cfg.Logger.Warn("worker: lease lost; abandoning the task", "id", id, "err", err)
			lost()
			return
		}
	}
}

// StatusError is a 4xx answer of the server, which retrying cannot fix.
type StatusError struct {
	// Status is the HTTP status.
	Status int
	// Code, Message and Field are the server's error.
	Code, Message, Field string
}

func (e *StatusError) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, msg)
}

// requestSlack is how long a request may take beyond its long poll.
const requestSlack = 30 * time.Second

// call posts body to path and decodes the answer into out (if not nil),
// retrying transient failures (network errors, 5xx) with exponential
// backoff until ctx ends. A 4xx answer is a *StatusError.
func (w *runner) call(ctx context.Context, path string, body any, poll time.Duration, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	backoff := w.cfg.MinBackoff
	for {
		err := w.post(ctx, path, data, poll, out)
		var se *StatusError
		if err == nil || errors.As(err, &se) || ctx.Err() != nil {
			return err
		}
		d := backoff/2 + rand.N(backoff/2+1)
		w.cfg.Logger.Warn("worker: retrying", "path", path, "retry_in", d, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
		backoff = min(2*backoff, w.cfg.MaxBackoff)
	}
}

// post makes one request.
func (w *runner) post(ctx context.Context, path string, data []byte, poll time.Duration, out any) error {
	ctx, cancel := context.WithTimeout(ctx, poll+requestSlack)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.Server+path, bytes.NewReader(data))
	if err != nil {
		return &StatusError{Status: 0, Code: "invalid", Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if w.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.cfg.Token)
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return &StatusError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Field: e.Error.Field}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	return nil
}
