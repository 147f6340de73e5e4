package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// actions returns the page of GET /api/v1/actions with the query q.
func (h *actionHarness) actions(q url.Values) api.OperatorActionsPage {
	h.t.Helper()
	status, data := h.do("GET", "/api/v1/actions?"+q.Encode(), "")
	require.Equal(h.t, 200, status, "%s", data)
	var page api.OperatorActionsPage
	require.NoError(h.t, json.Unmarshal(data, &page))
	return page
}

// actionLines writes actions as "by action target answer", one each.
func actionLines(as []api.OperatorAction) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = strings.Join([]string{a.By, a.Action, a.Target, string(a.Answer)}, " ")
	}
	return out
}

func TestActionsAreRecordedAndListed(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	require.Equal(t, api.OperatorActionsPage{Actions: []api.OperatorAction{}}, h.actions(nil), "none yet")

	pausedAt := h.json("POST", "/api/v1/visit-types/git/pause", "", 200)["paused"].(map[string]any)["at"].(string)
	h.json("POST", "/api/v1/listed-origins/disable", `{"url": "https://github.com/o/r0", "visit_type": "git"}`, 200)
	h.fails("POST", "/api/v1/listed-origins/disable", `{"url": "https://github.com/o/nope", "visit_type": "git"}`,
		404, "not_found", "", "no listed origin")
	h.json("POST", "/api/v1/visit-types/git/resume", "", 200)
	h.json("POST", "/api/v1/visit-types/git/requeue-lost", "", 200)

	h.token = readToken
	page := h.actions(nil)
	require.Equal(t, []string{
		`writer requeue_lost git {"lost":0}`,
		`writer resume git {"was_paused":true}`,
		`writer disable_origin https://github.com/o/r0 (git) {"changed":1,"lister":"every lister"}`,
		`writer pause git {"paused_at":"` + pausedAt + `","paused_by":"writer"}`,
	}, actionLines(page.Actions), "newest first, the refused one not recorded")
	require.Empty(t, page.NextPageToken)
	for i, a := range page.Actions {
		require.WithinDuration(t, page.Actions[len(page.Actions)-1].At, a.At, time.Minute, "at, the server's now")
		if i > 0 {
			require.Less(t, a.ID, page.Actions[i-1].ID)
		}
	}

	first := h.actions(url.Values{"limit": {"3"}})
	require.Len(t, first.Actions, 3)
	rest := h.actions(url.Values{"limit": {"3"}, "page_token": {first.NextPageToken}})
	require.Equal(t, page.Actions[3:], rest.Actions)
	require.Empty(t, rest.NextPageToken)
	paused := h.actions(url.Values{"action": {"pause"}, "by": {"writer"}})
	require.Equal(t, page.Actions[3:], paused.Actions)
	require.Empty(t, h.actions(url.Values{"by": {"reader"}}).Actions)

	h.fails("GET", "/api/v1/actions?limit=0", "", 400, "invalid", "limit", "between 1 and 1000")
	h.fails("GET", "/api/v1/actions?action=Pause!", "", 400, "invalid", "action", "not an action name")
	h.fails("GET", "/api/v1/actions?page_token=nope", "", 400, "invalid", "page_token", "not a page token")
	h.fails("GET", "/api/v1/actions?who=writer", "", 400, "invalid", "who", "unknown query parameter")
	h.token = ""
	h.fails("GET", "/api/v1/actions", "", 401, "unauthorized", "", "missing bearer token")
}

// unrecordingStore is a store whose recording of actions fails.
type unrecordingStore struct{ store.Store }

func (unrecordingStore) OperatorActionRecord(context.Context, revisit.OperatorAction) (revisit.OperatorAction, error) {
	return revisit.OperatorAction{}, revisit.Errorf(revisit.CodeUnavailable, "database down")
}

func TestAnActionNotRecordedIsStillDone(t *testing.T) {
	t.Parallel()
	log := &logBuffer{}
	h := &actionHarness{log: log, dataHarness: newDataHarnessWith(t, unrecordingStore{teststore.SQLite(t)},
		func(c *api.Config) { c.Logger = slog.New(slog.NewTextHandler(log, nil)) })}
	h.seed()
	out := h.json("POST", "/api/v1/visit-types/git/pause", "", 200)
	require.Equal(t, "anonymous", out["paused"].(map[string]any)["by"], "done, and answered")
	h.audited("pause", "git", "anonymous")
	require.Len(t, log.lines("level=ERROR", `msg="console action done but not recorded"`, "action=pause", "target=git",
		"by=anonymous", `err="database down"`), 1, "%s", log.lines(""))
	require.Empty(t, h.actions(nil).Actions)
}
