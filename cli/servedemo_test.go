package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/demo"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/orchestrator"
)

// lockedBuffer collects what several goroutines write.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// demoStoreLine is the line revisit serve --demo prints about its
// temporary store.
var demoStoreLine = regexp.MustCompile(`revisit: demo: a demonstration on a temporary store, (\S+)/revisit\.db, removed at exit`)

// servedDemo is revisit serve --demo running in-process: its address, its
// temporary directory, its exit code once it stops, its standard error.
type servedDemo struct {
	base, tmp string
	done      <-chan int
	errb      *lockedBuffer
}

// startServeDemo runs revisit serve --demo with the global flags args
// until ctx ends, and returns it once it listens (within 30 s).
func startServeDemo(t *testing.T, ctx context.Context, args ...string) servedDemo {
	t.Helper()
	errb := &lockedBuffer{}
	env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: errb}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, append(args, "serve", "--demo", "--listen", "127.0.0.1:0")) }()
	d := servedDemo{done: done, errb: errb}
	require.Eventually(t, func() bool {
		out := errb.String()
		listen, store := listenLine.FindStringSubmatch(out), demoStoreLine.FindStringSubmatch(out)
		if listen == nil || store == nil {
			return false
		}
		d.base, d.tmp = listen[1], store[1]
		return true
	}, 30*time.Second, 50*time.Millisecond, "revisit serve --demo did not start:\n%s", errb)
	return d
}

// TestDemoStaysAlive runs revisit serve --demo for ten minutes, as someone
// who leaves it open would: in each of the minutes from the eighth to the
// tenth, visits are scheduled and results come in, of every visit type
// over those minutes. It takes ten minutes: scripts/test runs it beside
// the other tests, with TEST_LONG=1.
func TestDemoStaysAlive(t *testing.T) {
	if os.Getenv("TEST_LONG") == "" {
		t.Skip("ten minutes long: scripts/test runs it beside the other tests (TEST_LONG=1)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	cfg := filepath.Join(t.TempDir(), "revisit.yaml")
	require.NoError(t, os.WriteFile(cfg, nil, 0o600))
	d := startServeDemo(t, ctx, "--config", cfg)
	// At 10 min 30 s, the last three whole minutes are the 8th to the 10th.
	select {
	case <-time.After(time.Until(started.Add(10*time.Minute + 30*time.Second))):
	case code := <-d.done:
		t.Fatalf("revisit serve --demo stopped with %d:\n%s", code, d.errb)
	}
	resp, err := http.Get(d.base + "/api/v1/history?minutes=3")
	require.NoError(t, err)
	defer resp.Body.Close()
	var w api.HistoryResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&w))
	require.Len(t, w.VisitTypes, 3, "git, hg and pypi")
	perMinute := func(series map[string]history.Values, minute int) float64 {
		n := 0.0
		for _, vs := range series {
			if v := vs[minute]; v != nil {
				n += *v
			}
		}
		return n
	}
	for minute := range 3 {
		results, scheduled := 0.0, 0.0
		for _, vt := range w.VisitTypes {
			results += perMinute(vt.Results, minute)
			scheduled += perMinute(vt.Scheduled, minute)
		}
		at := w.Start.Add(time.Duration(minute) * time.Minute).Sub(started).Round(time.Minute)
		require.GreaterOrEqual(t, results, 10.0, "results in the minute %s after the start", at)
		require.Positive(t, scheduled, "visits scheduled in the minute %s after the start", at)
	}
	for _, vt := range w.VisitTypes {
		total := 0.0
		for minute := range 3 {
			total += perMinute(vt.Results, minute)
		}
		require.Positive(t, total, "results of %s in the minutes 8 to 10", vt.VisitType)
	}
	cancel()
	require.Equal(t, ExitOK, <-d.done, d.errb.String())
	require.Empty(t, errorLines(d.errb.String()))
}

// errorLines are the lines of a log at ERROR.
func errorLines(log string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return out
}

// TestServeDemo runs revisit serve --demo in-process, with a configured
// store, broker and journal it must leave alone and API tokens its
// workers must use: within
// 30 seconds the dashboard shows visits published and results of several
// visit types, the API lists the demo's origins, and at exit the
// temporary store is gone.
func TestServeDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "demo-test-write-token"
	realStore := filepath.Join(dir, "real.db")
	cfg := filepath.Join(dir, "revisit.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("store: sqlite://"+realStore+"\n"+
		"broker: amqp://revisit:secret@127.0.0.1:1/\njournal: {brokers: [127.0.0.1:1]}\n"+
		"api:\n  tokens:\n    - {name: ops, token: "+token+", scope: write}\n"), 0o600))

	// A demo killed before left its directory: this start removes it. One
	// whose process runs (this one) is left alone.
	host, err := os.Hostname()
	require.NoError(t, err)
	killed, err := os.MkdirTemp("", demoDirPattern)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(killed, demoOwnerFile), []byte(host+":999999999:beef"), 0o600))
	running, err := os.MkdirTemp("", demoDirPattern)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(running) })
	require.NoError(t, os.WriteFile(filepath.Join(running, demoOwnerFile), []byte(holder.New()), 0o600))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(30 * time.Second)
	d := startServeDemo(t, ctx, "--config", cfg)
	base, tmp, done, errb := d.base, d.tmp, d.done, d.errb
	require.Contains(t, errb.String(), "revisit: demo: ignoring the store sqlite://"+realStore+" (config file "+cfg+
		"): the demo never writes into it\n")
	require.Contains(t, errb.String(), "revisit: demo: ignoring the broker amqp://revisit:xxxxx@127.0.0.1:1/ (config file "+
		cfg+"): the demo's workers take their visits from the embedded broker\n")
	require.Contains(t, errb.String(), "revisit: demo: ignoring journal.brokers")
	require.NotContains(t, errb.String(), "secret")
	require.DirExists(t, tmp)
	require.NoDirExists(t, killed, "the killed demo's directory is removed")
	require.DirExists(t, running, "a running demo's directory stays")
	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	overview, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(overview), `<p id="notice" class="notice">`+demo.Notice+`</p>`, "the console says what the demo is")

	var dash api.Dashboard
	require.Eventually(t, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/dashboard", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&dash))
		withResults := 0
		for _, v := range dash.VisitTypes {
			if v.Published == 0 {
				return false
			}
			n := int64(0)
			for _, c := range v.Results {
				n += c
			}
			if n > 0 {
				withResults++
			}
		}
		return withResults >= 2
	}, time.Until(deadline), 200*time.Millisecond, "no results of two visit types: %+v\n%s", &dash, errb)
	require.Len(t, dash.VisitTypes, 3, "git, hg and pypi")
	for _, v := range dash.VisitTypes {
		require.Equal(t, demo.QueueLength, v.MaxQueueLength, v.VisitType)
	}

	c, err := client.New(base, token, nil)
	require.NoError(t, err)
	lister, err := c.ListerGet(ctx, demo.ListerName, "")
	require.NoError(t, err)
	page, err := c.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &lister.ID, Enabled: revisit.AnyEnabled,
		Limit: 10_000})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(page.Origins), demo.DefaultOrigins)
	types := map[string]int{}
	for _, o := range page.Origins {
		types[o.VisitType]++
	}
	require.Len(t, types, 3, "the origins spread over the visit types: %v", types)

	// An origin's page explains it with the demo's cooldowns, in minutes.
	detail, err := c.OriginDetail(ctx, page.Origins[0].Key())
	require.NoError(t, err)
	require.Equal(t, "orchestrator", detail.CooldownsFrom)
	for _, cd := range detail.Cooldowns {
		if cd.Cooldown == revisit.CooldownAbsolute {
			require.Equal(t, demo.Cooldowns.Absolute, time.Duration(cd.Length))
		}
	}

	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("revisit serve --demo did not stop:\n%s", errb)
	}
	require.NoDirExists(t, tmp, "the temporary store is removed at exit")
	require.NoFileExists(t, realStore, "the configured store is left alone")
	require.Empty(t, errorLines(errb.String()))
}

func TestServeDemoRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	require.Contains(t, h.fails(ExitUsage, "serve", "--demo"), "--demo and --store: the demo runs on a temporary store")
	run := func(args ...string) (int, string) {
		var errb strings.Builder
		code := Run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb,
			Environ: h.environ}, args)
		return code, errb.String()
	}
	code, msg := run("serve", "--demo", "--broker", "amqp://guest:guest@127.0.0.1:5672/")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, msg, "--demo and --broker")
	code, msg = run("serve", "--demo", "--roles", "api")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, msg, "--demo and --roles")
	h.environ = []string{"REVISIT_CONFIG=" + h.file("read.yaml", "api:\n  tokens:\n    - {name: g, token: a-read-only-token, scope: read}\n")}
	code, msg = run("serve", "--demo")
	require.Equal(t, ExitError, code)
	require.Equal(t, "revisit: demo: the demo's workers need a write token among api.tokens\n", msg)
}

// The demo's policies are each visit type's defaults, holding origins back
// minutes instead of days, so that its loops keep sending visits.
func TestDemoPolicies(t *testing.T) {
	policies, err := demoPolicies()
	require.NoError(t, err)
	vts, err := demo.VisitTypes()
	require.NoError(t, err)
	require.Len(t, policies, len(vts))
	for _, vt := range vts {
		shares := orchestrator.DefaultShares(vt)
		require.Len(t, policies[vt], len(shares), vt)
		for i, u := range policies[vt] {
			require.Equal(t, string(shares[i].Policy), u.Policy)
			require.Equal(t, shares[i].Weight, *u.Weight)
			require.Equal(t, demo.Cooldowns, u.Cooldowns.Resolve())
		}
	}
	require.Less(t, demo.Cooldowns.NotFound, time.Hour, "every cooldown of the demo is minutes")
}
