package celery

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

// Task names the peer script registers.
const (
	peerVisitTask  = "swh.loader.git.tasks.UpdateGitRepository"
	peerFailTask   = "revisit.peer.fail"
	peerRejectTask = "revisit.peer.reject"
	peerRetryTask  = "revisit.peer.retry"
)

// peerMessage is one encoded message as handed to the Python side.
type peerMessage struct {
	Headers    map[string]any `json:"headers"`
	Properties map[string]any `json:"properties"`
	Body       string         `json:"body"`
	Queue      string         `json:"queue"`
}

// peerReprCase asks Python whether repr(json.loads(JSON)) == Repr.
type peerReprCase struct {
	JSON  string `json:"json"`
	Bytes bool   `json:"bytes"` // JSON is a hex string standing for a bytes value
	Repr  string `json:"repr"`
}

type peerInput struct {
	Snapshot  string         `json:"snapshot"`
	Passes    []string       `json:"passes"`
	Messages  []peerMessage  `json:"messages"`
	ReprCases []peerReprCase `json:"repr_cases"`
}

// peerRequest is what Celery's worker made of one message.
type peerRequest struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	RootID      string          `json:"root_id"`
	ParentID    *string         `json:"parent_id"`
	Group       *string         `json:"group"`
	ETA         *string         `json:"eta"`
	Expires     *string         `json:"expires"`
	Argsrepr    string          `json:"argsrepr"`
	Kwargsrepr  string          `json:"kwargsrepr"`
	TimeLimits  []any           `json:"time_limits"`
	Origin      string          `json:"origin"`
	Retries     int             `json:"retries"`
	Lang        string          `json:"lang"`
	Revoked     bool            `json:"revoked"`
	ETAAt       *float64        `json:"eta_scheduled_at"`
	Payload     json.RawMessage `json:"kombu_payload"`
	Executed    json.RawMessage `json:"executed"`
	CeleryHdrs  map[string]any  `json:"celery_headers"`
	CeleryBody  json.RawMessage `json:"celery_body"`
	CeleryProps map[string]any  `json:"celery_properties"`
}

type peerEvent struct {
	Pass       string `json:"pass"`
	RoutingKey string `json:"routing_key"`
	Body       string `json:"body"`
}

type peerOutput struct {
	Versions       map[string]string `json:"versions"`
	Requests       []peerRequest     `json:"requests"`
	Events         []peerEvent       `json:"events"`
	ReprMismatches []string          `json:"repr_mismatches"`
	PythonReprs    []string          `json:"python_reprs"`
}

// TestRealPeerCelery checks the encoder and decoders against Celery and
// kombu themselves: Celery's worker strategy and request code consume our
// messages and run the tasks, and the events they publish (as a prefork
// worker's buffered task.multi lists and as single events) go through
// DecodeEvents.
func TestRealPeerCelery(t *testing.T) {
	py := pytest.Celery(t)

	now := time.Now().UTC().Truncate(time.Microsecond)
	eta := now.Add(time.Hour)
	past := now.Add(-time.Hour)
	future := now.Add(24 * time.Hour)
	prio := uint8(3)
	when := time.Date(2024, 2, 29, 23, 59, 58, 123000, time.UTC)
	visitKwargs := map[string]any{
		"url":                  "https://example.org/user/repo.git",
		"lister_name":          "gitlab",
		"lister_instance_name": nil,
		"when":                 when,
		"text":                 "é 日本 \u2028 😀 it's \"q\" \\ \x00",
		"n":                    3,
		"f":                    1.5,
		"big":                  new(big.Int).Lsh(big.NewInt(1), 70),
		"nested":               map[string]any{"list": []any{1, "two", nil, true}, "empty": map[string]any{}},
	}
	ids := []string{
		"11111111-1111-4111-8111-111111111111", // visit, plain
		"22222222-2222-4222-8222-222222222222", // visit, eta
		"33333333-3333-4333-8333-333333333333", // visit, expired
		"44444444-4444-4444-8444-444444444444", // visit, expires later, priority
		"55555555-5555-4555-8555-555555555555", // fails
		"66666666-6666-4666-8666-666666666666", // rejects
		"77777777-7777-4777-8777-777777777777", // retries
	}
	tasks := []Task{
		{Name: peerVisitTask, ID: ids[0], Kwargs: visitKwargs},
		{Name: peerVisitTask, ID: ids[1], Kwargs: map[string]any{"url": "u1"}, ETA: &eta},
		{Name: peerVisitTask, ID: ids[2], Kwargs: map[string]any{"url": "u2"}, Expires: &past},
		{Name: peerVisitTask, ID: ids[3], Args: []any{"a", 2}, Kwargs: map[string]any{"url": "u3"}, Expires: &future, Priority: &prio},
		{Name: peerFailTask, ID: ids[4], Args: []any{"boom"}},
		{Name: peerRejectTask, ID: ids[5]},
		{Name: peerRetryTask, ID: ids[6]},
	}
	in := peerInput{Snapshot: snapHex, Passes: []string{"multi", "single"}}
	msgs := make([]Message, len(tasks))
	for i, task := range tasks {
		task.Origin = "revisit-test@peerhost"
		m, err := NewMessage(task)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = m
		in.Messages = append(in.Messages, peerMessage{
			Headers: m.Headers.Table(nil),
			Properties: map[string]any{
				"content_type": m.Properties.ContentType, "content_encoding": m.Properties.ContentEncoding,
				"correlation_id": m.Properties.CorrelationID, "delivery_mode": m.Properties.DeliveryMode,
				"priority": m.Properties.Priority,
			},
			Body:  string(m.Body),
			Queue: task.Name,
		})
	}
	in.ReprCases = reprCasesForPeer(t)

	out := runPeer(t, py, in)
	t.Logf("peer: Celery %s, kombu %s, Python %s", out.Versions["celery"], out.Versions["kombu"], out.Versions["python"])

	// 1. What the worker made of our messages.
	if len(out.Requests) != 2*len(tasks) {
		t.Fatalf("peer reported %d requests, want %d", len(out.Requests), 2*len(tasks))
	}
	for i, req := range out.Requests[:len(tasks)] {
		task, m := tasks[i], msgs[i]
		if req.ID != task.ID || req.Name != task.Name || req.RootID != task.ID || req.ParentID != nil ||
			req.Group != nil || req.Lang != "py" || req.Origin != "revisit-test@peerhost" || req.Retries != 0 {
			t.Errorf("%s: request ids/names: %+v", task.ID, req)
		}
		if req.Argsrepr != m.Headers.ArgsRepr || req.Kwargsrepr != m.Headers.KwargsRepr {
			t.Errorf("%s: argsrepr/kwargsrepr %q %q", task.ID, req.Argsrepr, req.Kwargsrepr)
		}
		if !reflect.DeepEqual(req.TimeLimits, []any{nil, nil}) {
			t.Errorf("%s: time limits %v", task.ID, req.TimeLimits)
		}
		checkTimeHeader(t, task.ID+" eta", req.ETA, task.ETA)
		checkTimeHeader(t, task.ID+" expires", req.Expires, task.Expires)

		// kombu decodes our body to exactly the JSON we sent.
		assertJSONEqual(t, task.ID+" kombu payload", req.Payload, m.Body)

		// Celery's own encoder, given the same inputs, makes the same
		// headers (bar the display-only repr strings) and the same body.
		ourHdrs := m.Headers.Table(nil)
		for k, v := range req.CeleryHdrs {
			if k == "argsrepr" || k == "kwargsrepr" {
				continue
			}
			ours, ok := ourHdrs[k]
			if !ok {
				t.Errorf("%s: Celery sends header %q, we do not", task.ID, k)
				continue
			}
			if !jsonEqualValues(ours, v) {
				t.Errorf("%s: header %q: ours %#v, Celery's %#v", task.ID, k, ours, v)
			}
		}
		for k := range ourHdrs {
			if _, ok := req.CeleryHdrs[k]; !ok {
				t.Errorf("%s: we send header %q, Celery does not", task.ID, k)
			}
		}
		assertJSONEqual(t, task.ID+" Celery body", req.CeleryBody, m.Body)
		if cid := req.CeleryProps["correlation_id"]; cid != task.ID {
			t.Errorf("%s: Celery correlation_id %v", task.ID, cid)
		}
	}
	reqs := out.Requests[:len(tasks)]
	// The plain visit ran with exactly our arguments.
	var executed struct {
		Args   []any          `json:"args"`
		Kwargs map[string]any `json:"kwargs"`
	}
	if err := json.Unmarshal(reqs[0].Executed, &executed); err != nil {
		t.Fatalf("visit did not run: %s (%v)", reqs[0].Executed, err)
	}
	var sent []any
	_ = json.Unmarshal(msgs[0].Body, &sent)
	if len(executed.Args) != 0 || !reflect.DeepEqual(executed.Kwargs, sent[1]) {
		t.Errorf("task saw args %v kwargs %v, want [] %v", executed.Args, executed.Kwargs, sent[1])
	}
	if executed.Kwargs["when"] != "2024-02-29T23:59:58.000123+00:00" || executed.Kwargs["text"] != visitKwargs["text"] {
		t.Errorf("kwargs values: when %v, text %q", executed.Kwargs["when"], executed.Kwargs["text"])
	}
	// ETA: scheduled, at our time.
	if reqs[1].ETAAt == nil || math.Abs(*reqs[1].ETAAt-float64(eta.UnixMicro())/1e6) > 1e-3 {
		t.Errorf("eta task scheduled at %v, want %v", fmtPtr(reqs[1].ETAAt), float64(eta.UnixMicro())/1e6)
	}
	// Expired: revoked, never run. Expiring later: ran.
	if !reqs[2].Revoked || string(reqs[2].Executed) != "null" {
		t.Errorf("expired task: revoked %v, executed %s", reqs[2].Revoked, reqs[2].Executed)
	}
	if reqs[3].Revoked || string(reqs[3].Executed) == "null" {
		t.Errorf("task expiring tomorrow: revoked %v, executed %s", reqs[3].Revoked, reqs[3].Executed)
	}

	// 2. Our decoder reads the events Celery published.
	if len(out.Events) == 0 {
		t.Fatal("peer published no events")
	}
	type seenKey struct{ pass, typ, id string }
	seen := map[seenKey]Event{}
	routingKeys := map[string]bool{}
	for _, pe := range out.Events {
		routingKeys[pe.RoutingKey] = true
		evs, err := DecodeEvents(pe.RoutingKey, []byte(pe.Body))
		if err != nil {
			t.Errorf("DecodeEvents(%s, %.300s): %v", pe.RoutingKey, pe.Body, err)
			continue
		}
		isList := strings.HasPrefix(strings.TrimSpace(pe.Body), "[")
		if isList != (pe.RoutingKey == "task.multi") {
			t.Errorf("routing key %s with body %.80s", pe.RoutingKey, pe.Body)
		}
		for _, ev := range evs {
			if !isList && pe.RoutingKey != strings.ReplaceAll(ev.Type, "-", ".") {
				t.Errorf("event %s under routing key %s", ev.Type, pe.RoutingKey)
			}
			if ev.Hostname == "" || ev.PID == 0 || ev.Clock == 0 || time.Since(ev.Timestamp).Abs() > time.Hour {
				t.Errorf("event common fields: %+v", ev)
			}
			seen[seenKey{pe.Pass, ev.Type, ev.UUID}] = ev
		}
	}
	if !routingKeys["task.multi"] || !routingKeys["task.result"] || !routingKeys["task.succeeded"] {
		t.Errorf("routing keys seen %v; want task.multi, task.result and single task.* keys", routingKeys)
	}
	want := []struct {
		typ string
		id  int
	}{
		{TypeReceived, 0}, {TypeStarted, 0}, {TypeSucceeded, 0}, {TypeResult, 0},
		{TypeReceived, 1},
		{TypeRevoked, 2},
		{TypeReceived, 3}, {TypeSucceeded, 3}, {TypeResult, 3},
		{TypeStarted, 4}, {TypeFailed, 4},
		{TypeRejected, 5},
		{TypeRetried, 6},
	}
	for _, pass := range in.Passes {
		for _, w := range want {
			ev, ok := seen[seenKey{pass, w.typ, ids[w.id]}]
			if !ok {
				t.Errorf("pass %s: no %s event for %s", pass, w.typ, ids[w.id])
				continue
			}
			switch w.typ {
			case TypeReceived:
				if ev.Name != peerVisitTask || ev.Kwargs != msgs[w.id].Headers.KwargsRepr || ev.Args != msgs[w.id].Headers.ArgsRepr {
					t.Errorf("task-received: %+v", ev)
				}
			case TypeSucceeded:
				r, err := ParseSucceededResult(ev.Result)
				if err != nil || r.Status != VisitEventful || hex.EncodeToString(r.SnapshotID) != snapHex || ev.Runtime < 0 {
					t.Errorf("task-succeeded result %q → %+v, %v", ev.Result, r, err)
				}
			case TypeResult:
				r := ev.VisitResult
				if r == nil || r.Status != VisitEventful || r.Eventful == nil || !*r.Eventful || hex.EncodeToString(r.SnapshotID) != snapHex {
					t.Errorf("task-result: %+v", r)
				}
			case TypeFailed:
				// Celery 5.2 reports the billiard wrapper here
				// ("ExceptionWithTraceback()"); the traceback names the error.
				if ev.Exception == "" || !strings.Contains(ev.Traceback, "ValueError: boom") {
					t.Errorf("task-failed: %q %q", ev.Exception, ev.Traceback)
				}
			case TypeRevoked:
				if !ev.Expired || ev.Terminated {
					t.Errorf("task-revoked: %+v", ev)
				}
			case TypeRejected:
				if ev.Requeue {
					t.Errorf("task-rejected: requeue %v", ev.Requeue)
				}
			case TypeRetried:
				if !strings.Contains(ev.Exception, "Retry") {
					t.Errorf("task-retried: %q", ev.Exception)
				}
			}
		}
	}

	// 3. Repr agrees with Python's repr, both ways.
	for _, m := range out.ReprMismatches {
		t.Errorf("repr mismatch: %s", m)
	}
	if len(out.PythonReprs) < 100 {
		t.Errorf("only %d Python reprs", len(out.PythonReprs))
	}
	bad := 0
	for _, r := range out.PythonReprs {
		v, err := ParsePyLiteral(r)
		if err != nil {
			t.Errorf("ParsePyLiteral(%q): %v", r, err)
			bad++
		} else if got := Repr(v); got != r {
			t.Errorf("Python repr %q parsed and printed again: %q", r, got)
			bad++
		}
		if bad > 10 {
			t.Fatal("too many repr failures")
		}
	}
	t.Logf("peer: %d requests, %d event deliveries, %d + %d repr checks", len(out.Requests), len(out.Events), len(in.ReprCases), len(out.PythonReprs))
}

// reprCasesForPeer lists Go values whose Repr Python must reproduce.
func reprCasesForPeer(t *testing.T) []peerReprCase {
	values := []any{
		nil, true, false, 0, -1, int64(math.MaxInt64), new(big.Int).Lsh(big.NewInt(1), 100),
		0.0, math.Copysign(0, -1), 1.0, 0.1, 1.0 / 3, 1e15, 1e16, 1.5e16, 1e-4, 1e-5, 123456.789e-10, 5e-324,
		math.MaxFloat64, 2.5e300, -7.25,
		"", "plain", "it's", `"x"`, `it's "x"`, "\\", "\t\n\r\x00\x1f\x7f", "\u0080\u009f\u00a0\u00ad\u00e9\u00ff",
		"\u0378\u200b\u2028\u2029\u3000\ufeff\ufffd\uffff", "\ue000\U000f0000\U0010ffff", "😀 日本 Ελληνικά עברית ﷽",
		[]any{}, []any{1, []any{2, []any{"x"}}}, map[string]any{"b": 1, "a": map[string]any{"k": nil}},
		map[string]any{"status": "eventful", "snapshot_id": snapHex},
	}
	var cases []peerReprCase
	for _, v := range values {
		data, err := marshalJSON(v)
		if err != nil {
			t.Fatalf("marshal %#v: %v", v, err)
		}
		if f, ok := v.(float64); ok {
			// Keep the float a float in Python even when integral.
			data = []byte(pyFloatRepr(f))
			if !strings.ContainsAny(string(data), ".e") {
				data = append(data, ".0"...)
			}
		}
		cases = append(cases, peerReprCase{JSON: string(data), Repr: Repr(v)})
	}
	for _, p := range [][]byte{{}, []byte("abc"), []byte("'"), []byte(`'"`), {0, 9, 10, 13, 0x1f, 0x7f, 0x80, 0xff, '\\'}} {
		cases = append(cases, peerReprCase{JSON: hex.EncodeToString(p), Bytes: true, Repr: Repr(p)})
	}
	return cases
}

func fmtPtr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func checkTimeHeader(t *testing.T, what string, got *string, want *time.Time) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s: worker read %q, want none", what, *got)
	case want != nil && got == nil:
		t.Errorf("%s: worker read none, want %v", what, *want)
	case want != nil:
		g, err := time.Parse(time.RFC3339Nano, *got)
		if err != nil || !g.Equal(*want) {
			t.Errorf("%s: worker read %q (%v), want %v", what, *got, err, *want)
		}
	}
}

func assertJSONEqual(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("%s: %v in %.200s", what, err, a)
		return
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Errorf("%s: %v in %.200s", what, err, b)
		return
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("%s:\n got %s\nwant %s", what, a, b)
	}
}

// jsonEqualValues compares two values by their JSON form.
func jsonEqualValues(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func runPeer(t *testing.T, py string, in peerInput) peerOutput {
	t.Helper()
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", peerScript)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED=0", "PYTHONIOENCODING=utf-8")
	if err := cmd.Run(); err != nil {
		t.Fatalf("peer script: %v\nstderr:\n%s", err, tail(stderr.String(), 4000))
	}
	var out peerOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("peer output: %v\n%.2000s\nstderr:\n%s", err, stdout.String(), tail(stderr.String(), 4000))
	}
	if testing.Verbose() && stderr.Len() > 0 {
		t.Logf("peer stderr (worker logs):\n%s", tail(stderr.String(), 2000))
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// peerScript is the Python side of TestRealPeerCelery. It reads peerInput
// on stdin and writes peerOutput on stdout; worker logs go to stderr.
const peerScript = `
import ast, json, os, platform, random, struct, sys, time, unicodedata
from unittest.mock import MagicMock

import celery, kombu
from celery import Celery
from celery.exceptions import Reject
import celery.worker.state
from celery.worker import strategy
from celery.worker.request import Request, create_request_cls
from kombu import Exchange, Queue
from kombu.message import Message
from kombu.serialization import loads

inp = json.load(sys.stdin)
SNAP = inp['snapshot']
VISIT, FAIL, REJECT, RETRY = (
    'swh.loader.git.tasks.UpdateGitRepository', 'revisit.peer.fail',
    'revisit.peer.reject', 'revisit.peer.retry')

app = Celery('peer', broker='memory://', set_as_current=True)
app.conf.update(enable_utc=True, timezone='UTC', accept_content=['json'],
                worker_send_task_events=True, task_send_sent_event=False)

executed = {}

@app.task(bind=True, name=VISIT)
def visit(self, *args, **kwargs):
    executed[self.request.id] = {'args': list(args), 'kwargs': kwargs}
    result = {'status': 'eventful', 'snapshot_id': SNAP}
    # What Software Heritage's task base class sends besides task-succeeded.
    self.send_event('task-result', result=result)
    return result

@app.task(bind=True, name=FAIL)
def fail(self, *args, **kwargs):
    executed[self.request.id] = {'args': list(args), 'kwargs': kwargs}
    raise ValueError(args[0])

@app.task(bind=True, name=REJECT, acks_late=True)
def reject(self, *args, **kwargs):
    executed[self.request.id] = {'args': list(args), 'kwargs': kwargs}
    raise Reject('no thanks', requeue=False)

@app.task(bind=True, name=RETRY, max_retries=5)
def retry(self, *args, **kwargs):
    executed[self.request.id] = {'args': list(args), 'kwargs': kwargs}
    raise self.retry(countdown=3600)

app.finalize()

class FakeChannel:
    """The receiving channel kombu acks and rejects through."""
    no_ack_consumers = None
    def basic_ack(self, *a, **kw): pass
    def basic_reject(self, *a, **kw): pass

class SyncPool:
    """Runs the task in this process, as the solo pool does."""
    def apply_async(self, target, args=(), kwargs=None, callback=None,
                    error_callback=None, accept_callback=None, **_):
        if accept_callback:
            accept_callback(os.getpid(), time.monotonic())
        r = target(*args, **(kwargs or {}))
        if callback:
            callback(r)

ev_exchange = Exchange('celeryev', type='topic')
ev_queue = Queue('revisit.events', ev_exchange, routing_key='task.#', durable=True)

def run_pass(pass_name, conn):
    buffered = pass_name == 'multi'
    dispatcher = app.events.Dispatcher(
        conn, hostname='celery@peer', enabled=True,
        buffer_group=['task'] if buffered else None)
    requests = []
    for m in inp['messages']:
        h = m['headers']
        consumer = MagicMock()
        consumer.hostname = 'celery@peer'
        consumer.connection_errors = ()
        consumer.event_dispatcher = dispatcher
        consumer.disable_rate_limits = True
        consumer.controller.state.revoked = set()
        consumer.pool = SyncPool()
        eta_calls = []
        # kombu's timer takes the ETA on the monotonic clock: report it as
        # wall-clock UNIX time.
        consumer.timer.call_at = lambda eta, fun, args=(), priority=0: eta_calls.append(
            (eta - time.monotonic() + time.time(), args))
        handled = []
        consumer.on_task_request = lambda req: (handled.append(req), req.execute_using_pool(consumer.pool))
        task = app.tasks[h['task']]
        handler = strategy.default(task, app, consumer)

        props = dict(m['properties'])
        message = Message(
            body=m['body'].encode('utf-8'), delivery_tag=1,
            content_type=props.pop('content_type'), content_encoding=props.pop('content_encoding'),
            delivery_info={'exchange': '', 'routing_key': m['queue'], 'priority': props.get('priority'), 'redelivered': False},
            properties=props, headers=h, channel=FakeChannel(), accept=['application/json'])
        payload = loads(message.body, message.content_type, message.content_encoding, accept=['application/json'])

        executed.pop(h['id'], None)
        revoked_before = set()
        handler(message, None, message.ack_log_error, message.reject_log_error, [])
        req = handled[0] if handled else None
        if eta_calls:  # the worker would run it at the ETA; run it now
            req = eta_calls[0][1][0]
            req.execute_using_pool(consumer.pool)
        # Build the request by hand when the strategy dropped the message
        # (expired), to report what Celery read from the headers.
        if req is None:
            Req = create_request_cls(Request, task, consumer.pool, 'celery@peer', dispatcher, app=app)
            req = Req(message, app=app, hostname='celery@peer', task=task,
                      body=message.body, headers=message.headers, decoded=False)
        celery_msg = app.amqp.as_task_v2(
            h['id'], h['task'], args=payload[0], kwargs=payload[1],
            eta=req.eta, expires=req.expires, origin=h['origin'])
        requests.append({
            'id': req.id, 'name': req.name, 'root_id': req.root_id, 'parent_id': req.parent_id,
            'group': req.group, 'lang': req.request_dict.get('lang'),
            'eta': req.eta and req.eta.isoformat(), 'expires': req.expires and req.expires.isoformat(),
            'argsrepr': req.argsrepr, 'kwargsrepr': req.kwargsrepr,
            'time_limits': list(req.time_limits), 'origin': req.request_dict.get('origin'),
            'retries': req.request_dict.get('retries'),
            'revoked': req.id in celery.worker.state.revoked or not handled and not eta_calls,
            'eta_scheduled_at': eta_calls[0][0] if eta_calls else None,
            'kombu_payload': payload,
            'executed': executed.get(h['id']),
            'celery_headers': celery_msg.headers,
            'celery_body': celery_msg.body,
            'celery_properties': celery_msg.properties,
        })
    dispatcher.flush()
    dispatcher.close()
    return requests

out = {'versions': {'celery': celery.__version__, 'kombu': kombu.__version__,
                    'python': platform.python_version()},
       'requests': [], 'events': []}
with app.connection_for_write() as conn:
    bound = ev_queue(conn.default_channel)
    bound.declare()
    for p in inp['passes']:
        out['requests'].extend(run_pass(p, conn))
        while True:
            msg = bound.get(no_ack=True)
            if msg is None:
                break
            body = msg.body.decode('utf-8') if isinstance(msg.body, bytes) else msg.body
            out['events'].append({'pass': p, 'routing_key': msg.delivery_info['routing_key'], 'body': body})

# Repr: Go's Repr against Python's repr, and literal_eval back.
mismatches = []
for c in inp['repr_cases']:
    v = bytes.fromhex(c['json']) if c['bytes'] else json.loads(c['json'])
    if repr(v) != c['repr']:
        mismatches.append('value %s: Python %s, Go %s' % (c['json'], repr(v), c['repr']))
    elif ast.literal_eval(c['repr']) != v:
        mismatches.append('literal_eval(%s) != %r' % (c['repr'], v))
out['repr_mismatches'] = mismatches

# Python reprs of many values, for Go to parse and print again.
rnd = random.Random(42)
def rand_char():
    while True:
        plane = rnd.choice([0, 0, 0, 1, 2, 14, 15, 16])
        cp = rnd.randrange(0x80) if rnd.random() < 0.4 else plane * 0x10000 + rnd.randrange(0x10000)
        if 0xd800 <= cp < 0xe000:
            continue  # surrogates: a Go string cannot hold them
        c = chr(cp)
        if unicodedata.category(c) == 'Cn':
            continue  # unassigned in Python's Unicode database, maybe assigned in Go's
        return c
def rand_float():
    while True:
        f = struct.unpack('<d', rnd.getrandbits(64).to_bytes(8, 'little'))[0]
        if f == f:
            return f
reprs = []
for _ in range(300):
    reprs.append(repr(''.join(rand_char() for _ in range(rnd.randrange(12)))))
for _ in range(300):
    reprs.append(repr(rand_float()))
for _ in range(100):
    reprs.append(repr(rnd.uniform(-1e6, 1e6)))
    reprs.append(repr(rnd.getrandbits(rnd.randrange(1, 300)) * rnd.choice([1, -1])))
    reprs.append(repr(bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(10)))))
reprs += [repr(x) for x in [float('inf'), float('-inf'), 0.0, -0.0, 1e16, 1e-5, None, True, [],
          {'a': [1, 2.5, None], 'b': {'c': "it's"}}, {'snapshot_id': SNAP, 'status': 'eventful'}]]
out['python_reprs'] = reprs

json.dump(out, sys.stdout)
`
