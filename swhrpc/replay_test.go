package swhrpc_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/swhtraffic"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhrpc"
	"github.com/revisit-sched/revisit/swhwire"
)

// TestReplaySmoke replays the recorded lister-like session on each store.
// That session met a database holding the task types upstream's test
// fixtures create (its last call lists them); they are created first.
func TestReplaySmoke(t *testing.T) {
	xs := swhtraffic.Read(t, swhtraffic.Smoke)
	seed := xs[len(xs)-1]
	if seed.Path != "/task_type/get_all" {
		t.Fatalf("the smoke session ends with %s, not the task_type/get_all that names its task types", seed.Path)
	}
	for _, e := range replayEngines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			r := startReplay(t, e.prepare(t))
			r.createTaskTypes(seed)
			passed := r.run(swhtraffic.Smoke, xs)
			t.Logf("%s: %d of %d calls as recorded; calls not compared value for value: %v", e.name, passed, len(xs), r.relaxed)
		})
	}
}

// TestReplayConformance replays the calls upstream's own backend test
// suite made, one upstream test after the other, each on a fresh store as
// each upstream test had a fresh database.
func TestReplayConformance(t *testing.T) {
	xs := swhtraffic.Read(t, swhtraffic.Conformance)
	segs := segments(t, xs)
	// Upstream's backend suite has some seventy tests that talk to the
	// server; far fewer or more means the cut is wrong.
	if len(segs) < 50 || len(segs) > 100 {
		t.Fatalf("found %d upstream tests in %d calls: the cut is wrong", len(segs), len(xs))
	}
	t.Logf("%d calls in %d upstream tests", len(xs), len(segs))
	for _, e := range replayEngines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			open := e.prepare(t)
			passed := 0
			failedByPath, relaxed := map[string]int{}, map[string]int{}
			for _, seg := range segs {
				t.Run(fmt.Sprintf("lines_%d-%d", seg[0].Line, seg[len(seg)-1].Line), func(t *testing.T) {
					r := startReplay(t, open)
					passed += r.run(swhtraffic.Conformance, seg)
					for p, n := range r.failedByPath {
						failedByPath[p] += n
					}
					for d, n := range r.relaxed {
						relaxed[d] += n
					}
				})
			}
			t.Logf("%s: %d of %d calls as recorded; failures by path: %v; calls not compared value for value: %v",
				e.name, passed, len(xs), failedByPath, relaxed)
		})
	}
}

// segments cuts the conformance recording where one upstream test ends and
// the next begins. Every upstream test starts from an empty database, and
// its fixtures first create the five swh-test-* task types, swh-test-ping
// first: a test begins at a task_type/create of swh-test-ping that does not
// follow another task_type/create (one test creates the fixtures' task types
// again right after them; that stays in its test).
func segments(t *testing.T, xs []swhtraffic.Exchange) [][]swhtraffic.Exchange {
	var out [][]swhtraffic.Exchange
	for i, x := range xs {
		starts := i == 0 || (x.Path == "/task_type/create" && xs[i-1].Path != "/task_type/create" &&
			createdTaskType(t, x) == "swh-test-ping")
		if starts {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], x)
	}
	return out
}

// createdTaskType is the name of the task type a task_type/create creates.
func createdTaskType(t *testing.T, x swhtraffic.Exchange) string {
	v, err := swhwire.Decode(x.Req)
	if err != nil {
		t.Fatalf("line %d: %v", x.Line, err)
	}
	name, _ := fieldOf(fieldOf(v, "task_type"), "type").(string)
	return name
}

// replayEngine is a store engine the replay runs on: prepare, once for
// the engine, returns how to open an empty store, reading the replay's
// clock, for each replayed upstream test.
type replayEngine struct {
	name    string
	prepare func(t *testing.T) func(t *testing.T, clock revisit.Clock) store.Store
}

var replayEngines = []replayEngine{
	{"sqlite", func(*testing.T) func(*testing.T, revisit.Clock) store.Store {
		return func(t *testing.T, clock revisit.Clock) store.Store {
			return teststore.SQLiteWith(t, store.Options{Clock: clock})
		}
	}},
	// One schema, emptied before each upstream test: a new schema each
	// would take a second to migrate.
	{"postgres", func(t *testing.T) func(*testing.T, revisit.Clock) store.Store {
		_, url := teststore.Postgres(t)
		return func(t *testing.T, clock revisit.Clock) store.Store {
			teststore.EmptyPostgres(t, url)
			return teststore.OpenPostgres(t, url, store.Options{Clock: clock})
		}
	}},
}

// newServer is the RPC under test over st, reading clock (nil: time.Now).
func newServer(st store.Store, clock revisit.Clock) http.Handler {
	return swhrpc.New(swhrpc.Config{Store: st, Clock: clock})
}

// clockSlack bounds how far a time our server took from its clock may lie
// from the recorded server's: replayClock is never more than a second
// behind or ahead of it.
const clockSlack = 2 * time.Second

// replayClock is the clock of our server and store during a replay. Before
// each call it is brought to the recorded server's time at that call, as
// closely as the recording tells it (see recordedNow), and every reading
// moves it a microsecond further, so that no two writes share a time.
type replayClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *replayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

// catchUp moves the clock to t unless it is past it already.
func (c *replayClock) catchUp(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

// recordedNow is the earliest time the recorded server can have read at
// call x: its response's Date header, which is whole seconds, raised to any
// time in the recorded request or response (bodies) that lies within that
// second (the client's own "now" it passed, a time the server set), since
// those were taken before.
func recordedNow(t *testing.T, x swhtraffic.Exchange, bodies ...any) time.Time {
	date, err := http.ParseTime(x.RespHeaders["Date"])
	if err != nil {
		t.Fatalf("line %d: Date header: %v", x.Line, err)
	}
	now := date
	for _, v := range bodies {
		eachTime(v, func(tm time.Time) {
			if tm.After(now) && tm.Before(date.Add(time.Second)) {
				now = tm
			}
		})
	}
	return now
}

// eachTime calls f with every time in v.
func eachTime(v any, f func(time.Time)) {
	switch v := v.(type) {
	case time.Time:
		f(v)
	case []any:
		for _, e := range v {
			eachTime(e, f)
		}
	case swhwire.Map:
		for _, p := range v {
			eachTime(p.Value, f)
		}
	case swhwire.Model:
		eachTime(v.Fields, f)
	case swhwire.PagedResult:
		eachTime(v.Results, f)
	}
}

// replay sends recorded calls to our server, on a store of its own, and
// compares the answers with the recorded ones.
type replay struct {
	t            *testing.T
	url          string
	client       *http.Client
	clock        *replayClock
	tr           *translation
	failedByPath map[string]int
	relaxed      map[string]int // calls compared by each comparison of replay_order_test.go
}

func startReplay(t *testing.T, open func(*testing.T, revisit.Clock) store.Store) *replay {
	clock := &replayClock{}
	srv := httptest.NewServer(newServer(open(t, clock.Now), clock.Now))
	t.Cleanup(srv.Close)
	return &replay{t: t, url: srv.URL, client: srv.Client(), clock: clock, tr: newTranslation(),
		failedByPath: map[string]int{}, relaxed: map[string]int{}}
}

// maxDiffsShown bounds the differences reported for one call.
const maxDiffsShown = 6

// run replays xs in order and returns how many calls were answered as
// recorded; every other one is reported as an error of the test.
func (r *replay) run(file string, xs []swhtraffic.Exchange) (passed int) {
	for _, x := range xs {
		diffs := r.call(x)
		if len(diffs) == 0 {
			passed++
			continue
		}
		r.failedByPath[x.Path]++
		if len(diffs) > maxDiffsShown {
			diffs = append(diffs[:maxDiffsShown], fmt.Sprintf("… %d more", len(diffs)-maxDiffsShown))
		}
		r.t.Errorf("%s line %d POST %s:\n\t%s", file, x.Line, x.Path, strings.Join(diffs, "\n\t"))
	}
	return passed
}

// call sends x's request, rewritten with the ids and clocks learned so far,
// and returns how our answer differs from the recorded one.
func (r *replay) call(x swhtraffic.Exchange) []string {
	recReq, err := swhwire.Decode(x.Req)
	if err != nil {
		r.t.Fatalf("line %d: recorded request: %v", x.Line, err)
	}
	rec, err := swhwire.Decode(x.Resp)
	if err != nil {
		r.t.Fatalf("line %d: recorded response: %v", x.Line, err)
	}
	// The recorded bytes, unless an id or a clock had to be replaced.
	body, before := x.Req, r.tr.rewrites
	if rewritten := r.tr.request(recReq, place{}); r.tr.rewrites > before {
		if body, err = swhwire.Encode(rewritten); err != nil {
			r.t.Fatalf("line %d: rewritten request: %v", x.Line, err)
		}
	}
	r.clock.catchUp(recordedNow(r.t, x, recReq, rec))
	status, header, got, err := r.post(x.Path, x.ReqCT, body)
	if err != nil {
		return []string{err.Error()}
	}
	var diffs []string
	if status != x.Status {
		return append(diffs, fmt.Sprintf("status %d, recorded %d; body %s", status, x.Status, describe(got)))
	}
	if ct := header.Get("Content-Type"); ct != x.RespCT {
		diffs = append(diffs, fmt.Sprintf("Content-Type %q, recorded %q", ct, x.RespCT))
	}
	if te := header.Get("Transfer-Encoding"); te != "" {
		diffs = append(diffs, "Transfer-Encoding "+te+": the client returns such a body undecoded")
	}
	ours, err := swhwire.Decode(got)
	if err != nil {
		return append(diffs, fmt.Sprintf("response: %v", err))
	}
	return append(diffs, r.compare(x.Path, recReq, rec, ours)...)
}

// compare holds our answer ours to the recorded answer rec of a call with
// the recorded request req.
func (r *replay) compare(path string, req, rec, ours any) []string {
	c := &comparison{tr: r.tr, used: map[string]bool{}}
	defer func() {
		for d := range c.used {
			r.relaxed[d]++
		}
	}()
	if path == "/origins/grab_next" {
		if fieldOf(req, "tablesample") != nil {
			c.used[sampledGrab] = true
			return checkSample(req, ours)
		}
		if fieldOf(req, "policy") == "never_visited_oldest_update_first" {
			c.diffs = append(c.diffs, lastUpdateOrder(ours)...)
		}
	}
	recList, okR := rec.([]any)
	ourList, okO := ours.([]any)
	if unorderedAnswers[path] && okR && okO {
		c.used[unorderedAnswer] = true
		c.unordered("response", place{}, recList, ourList)
	} else {
		c.value("response", place{}, rec, ours)
	}
	return c.diffs
}

// post sends one call as RemoteScheduler does and reads the whole answer,
// which must carry its Content-Length.
func (r *replay) post(path, contentType string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, r.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/x-msgpack")
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	if resp.ContentLength != int64(len(got)) {
		return 0, nil, nil, fmt.Errorf("Content-Length %d for a body of %d bytes", resp.ContentLength, len(got))
	}
	return resp.StatusCode, resp.Header, got, nil
}

// createTaskTypes creates, through the RPC, the task types a recorded
// task_type/get_all answered.
func (r *replay) createTaskTypes(getAll swhtraffic.Exchange) {
	v, err := swhwire.Decode(getAll.Resp)
	types, ok := v.([]any)
	if err != nil || !ok {
		r.t.Fatalf("line %d: want a list of task types, got %s (%v)", getAll.Line, show(v), err)
	}
	for _, tt := range types {
		body, err := swhwire.Encode(swhwire.Map{{Key: "task_type", Value: tt}})
		if err != nil {
			r.t.Fatal(err)
		}
		status, _, got, err := r.post("/task_type/create", "application/x-msgpack", body)
		if err != nil || status != http.StatusOK {
			r.t.Fatalf("task_type/create %v: status %d, %v, %s", tt, status, err, describe(got))
		}
	}
}

// describe is a response body as the messages show it.
func describe(body []byte) string {
	v, err := swhwire.Decode(body)
	if err != nil {
		return fmt.Sprintf("%q (%v)", body, err)
	}
	return show(v)
}
