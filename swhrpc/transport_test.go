package swhrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhwire"
)

func TestTransport(t *testing.T) {
	c := serve(t, teststore.SQLite(t), Config{})
	get := func(path string) response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
		require.NoError(t, err)
		return c.do(req)
	}

	r := get("origins/get")
	c.refused(r, http.StatusMethodNotAllowed, "MethodNotAllowed", "GET /origins/get: method not allowed (allowed: POST)")
	require.Equal(t, "POST", r.header.Get("Allow"))
	c.refused(c.call("origins/nope"), http.StatusNotFound, "NotFound", "no endpoint /origins/nope")
	c.refused(c.call("site-map"), http.StatusMethodNotAllowed, "MethodNotAllowed", "allowed: GET")

	r = get("")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.raw), "Software Heritage scheduler RPC server")
	r = get("site-map")
	require.Equal(t, contentJSON, r.header.Get("Content-Type"))
	var rules []struct{ Rule, Description string }
	require.NoError(t, json.Unmarshal(r.raw, &rules))
	require.Len(t, rules, 34)
	for _, rule := range rules {
		require.True(t, strings.HasPrefix(rule.Rule, "/") && rule.Description != "", "%+v", rule)
	}

	// An empty body is no parameter; every response has its length.
	r = c.post("task_type/get_all", contentMsgpack, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, []any{}, r.value)
	require.Equal(t, strconv.Itoa(len(r.raw)), r.header.Get("Content-Length"))

	// JSON, for clients that ask for it or send it.
	body, err := swhwire.EncodeJSON(pairs("name", "github", "instance_name", nil, "first_visits_queue_prefix", nil))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, c.url+"lister/get_or_create", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, contentJSON, resp.Header.Get("Content-Type"), "without Accept, JSON")
	v, err := swhwire.DecodeJSON(raw, swhwire.DefaultLimits)
	require.NoError(t, err, "%s", raw)
	require.Equal(t, "github", fields(t, v, "Lister")["name"])

	c.refused(c.post("lister/get", "text/plain", []byte("name=x")), http.StatusUnsupportedMediaType, "UnsupportedMediaType",
		`content type "text/plain": send application/x-msgpack`)
	huge := append([]byte{0xc6, 0x02, 0x00, 0x00, 0x01}, make([]byte, MaxBodyBytes)...)
	c.refused(c.post("lister/get", contentMsgpack, huge), http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
		"the body is larger than 33554432 bytes")
}

func TestNegotiate(t *testing.T) {
	for accept, want := range map[string]string{
		"":                      contentJSON,
		"*/*":                   contentJSON,
		"application/x-msgpack": contentMsgpack,
		"application/json":      contentJSON,
		"application/*":         contentJSON,
		"application/json;q=0.5, application/x-msgpack": contentMsgpack,
		"application/x-msgpack;q=0.1, */*;q=0.5":        contentJSON,
		"application/x-msgpack, application/json":       contentJSON,
		"text/html": contentJSON,
		"application/json;q=0, application/*;q=0.3": contentMsgpack,
	} {
		require.Equal(t, want, negotiate(accept), "Accept: %s", accept)
	}
}

// TestBadInput sends what the server must refuse with a 400 naming the
// problem, and checks that nothing was written.
func TestBadInput(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		lister := c.newLister("github")
		good := origin(lister, "https://github.com/o/a", "git")
		ids := make([]any, MaxBatch+1)
		for i := range ids {
			ids[i] = int64(i)
		}
		encode := func(v any) []byte {
			b, err := swhwire.Encode(v)
			require.NoError(t, err)
			return b
		}
		unknownEnvelope := swhwire.Map{{Key: []byte("swhtype"), Value: "nope"}, {Key: []byte("d"), Value: swhwire.Map{}}}
		for _, bad := range []struct {
			name, path string
			body       []byte
			want       string
		}{
			{"truncated", "lister/get", []byte("\x82\xa4name\xa3git"), "the body is not valid application/x-msgpack: swhwire: at byte 10: input ends inside a value"},
			{"not a map", "lister/get", encode([]any{"github"}), "the body is a list, want a dict of parameters"},
			{"bad UTF-8", "lister/get", []byte("\x81\xa4name\xa1\xff"), "str is not valid UTF-8"},
			{"key type", "lister/get", encode(swhwire.Map{{Key: int64(1), Value: "x"}}), "a parameter name is an int, want a str"},
			{"key twice", "lister/get", encode(pairs("name", "a", "name", "b")), "name: parameter given twice"},
			{"wrong type", "lister/get", encode(pairs("name", int64(1))), "name: want a str, got an int"},
			{"unknown parameter", "lister/get", encode(pairs("name", "x", "nam", "x", "colour", 1)),
				`nam: unknown parameters "nam", "colour" (known: instance_name, name)`},
			{"missing", "lister/get", encode(pairs("instance_name", "x")), "name: missing"},
			{"unknown envelope", "lister/update", encode(pairs("lister", unknownEnvelope)),
				`lister: want a Lister model (scheduler_model envelope), got an envelope of unknown swhtype "nope"`},
			{"other model", "lister/update", encode(pairs("lister", good)),
				"lister: want a Lister model (scheduler_model envelope), got a ListedOrigin model"},
			{"huge array", "origins/record", encode(pairs("listed_origins", ids)), "listed_origins: 10001 elements, at most 10000 at once"},
			{"extra field", "origins/record", encode(pairs("listed_origins", []any{good, origin(lister, "https://github.com/o/b", "git", "colour", "red")})),
				`listed_origins[1].colour: unknown field "colour"`},
			{"missing field", "origins/record", encode(pairs("listed_origins", []any{good,
				swhwire.Model{Type: "ListedOrigin", Fields: pairs("lister_id", lister, "visit_type", "git")}})), "listed_origins[1].url: missing"},
			{"bad field", "origins/record", encode(pairs("listed_origins", []any{good, origin(lister, "https://github.com/o/b", "git", "last_update", "yesterday")})),
				"listed_origins[1].last_update: want a datetime with a timezone (msgpack timestamp), got a str"},
			{"bad value", "origins/record", encode(pairs("listed_origins", []any{good, origin(lister, "", "git")})),
				`listed_origins[1].url: missing`},
			{"unstorable", "origins/record", encode(pairs("listed_origins", []any{good, origin(lister, "https://github.com/o/b", "git",
				"extra_loader_arguments", pairs("when", swhwire.Timedelta{Days: 1}))})),
				"listed_origins[1].extra_loader_arguments.when: a timedelta cannot be stored"},
			{"zero limit", "origins/get", encode(pairs("limit", int64(0))), "limit: must be between 1 and 10000, not 0"},
			{"bad uuid", "origins/get", encode(pairs("lister_id", "github")), `lister_id: want a UUID such as`},
			{"bad token", "origins/get", encode(pairs("page_token", []any{"x"})), "page_token: want a (lister_id, url) pair from the previous page, got a list"},
			{"absent datetime", "task/create", encode(pairs("tasks", []any{swhwire.Model{Type: "Task", Fields: pairs("type", "load-git",
				"arguments", swhwire.Model{Type: "TaskArguments", Fields: pairs()}, "next_run", nil)}})),
				"tasks[0].next_run: want a datetime with a timezone (msgpack timestamp), got None"},
			{"naive datetime", "task/filter_for_archive", encode(pairs("after_ts", "2026-01-01 00:00:00", "before_ts", "2026-02-01")),
				`after_ts: "2026-01-01 00:00:00" has no timezone`},
		} {
			r := c.post(bad.path, contentMsgpack, bad.body)
			if r.status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400 (%v)", bad.name, r.status, r.value)
				continue
			}
			exc, err := swhwire.ParseException(r.value)
			require.NoError(t, err)
			if exc.Type != "SchedulerException" || !strings.Contains(exc.Message, bad.want) {
				t.Errorf("%s: got %s %q, want SchedulerException %q", bad.name, exc.Type, exc.Message, bad.want)
			}
		}
		page := c.ok("origins/get", "enabled", nil).(swhwire.PagedResult)
		require.Empty(t, page.Results, "nothing written")
	})
}

func TestTokens(t *testing.T) {
	tokens := []config.Token{
		{Name: "reader", Token: "read-secret-0123456789", Scope: config.ScopeRead},
		{Name: "lister", Token: "write-secret-0123456789", Scope: config.ScopeWrite},
	}
	c := serve(t, teststore.SQLite(t), Config{Tokens: tokens})
	call := func(path, user, password, bearer string) response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader([]byte{0x80}))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentMsgpack)
		if password != "" {
			req.SetBasicAuth(user, password)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		return c.do(req)
	}
	require.Equal(t, http.StatusOK, call("task_type/get_all", "swh", "read-secret-0123456789", "").status, "a Basic password")
	require.Equal(t, http.StatusOK, call("task_type/get_all", "", "", "write-secret-0123456789").status, "a bearer token")
	require.Equal(t, http.StatusOK, call("scheduler_metrics/update", "", "write-secret-0123456789", "").status, "a write token writes")

	r := call("task_type/get_all", "", "", "")
	c.refused(r, http.StatusUnauthorized, "Unauthorized", "missing token")
	require.Equal(t, `Basic realm="revisit"`, r.header.Get("WWW-Authenticate"))
	c.refused(call("task_type/get_all", "swh", "wrong-secret-0123456789", ""), http.StatusUnauthorized, "Unauthorized", "unknown token")
	r = call("scheduler_metrics/update", "swh", "read-secret-0123456789", "")
	c.refused(r, http.StatusForbidden, "Forbidden", "token reader is read-only")
	require.Empty(t, r.header.Get("WWW-Authenticate"))
}

// failingStore is a store whose metrics fail with err.
type failingStore struct {
	store.Store
	err error
}

func (f failingStore) MetricsGet(context.Context, *uuid.UUID, string) ([]revisit.SchedulerMetrics, error) {
	return nil, f.err
}

func TestStoreErrors(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	st := teststore.SQLite(t)
	down := serve(t, failingStore{st, revisit.Errorf(revisit.CodeUnavailable, "the database is down")}, Config{Logger: log})
	down.fails(http.StatusServiceUnavailable, "ServiceUnavailable", "the database is down", "scheduler_metrics/get")
	broken := serve(t, failingStore{st, errors.New("disk on fire")}, Config{Logger: log})
	r := broken.call("scheduler_metrics/get")
	broken.refused(r, http.StatusInternalServerError, "InternalServerError", "internal error")
	require.NotContains(t, string(r.raw), "disk on fire", "details stay in the log")
	require.Contains(t, logged.String(), "disk on fire")
}
