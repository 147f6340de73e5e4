package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// The operator's actions: who changed what, kept for a while and listed
// newest first.

// recordAction records an action at the clock's now and requires success.
func (f *fixture) recordAction(by, action, target, answer string) revisit.OperatorAction {
	f.t.Helper()
	a, err := f.s.OperatorActionRecord(f.ctx, revisit.OperatorAction{At: f.clock.Now(), By: by, Action: action,
		Target: target, Answer: json.RawMessage(answer)})
	require.NoError(f.t, err)
	return a
}

// listActions returns one page of actions and requires success.
func (f *fixture) listActions(filter revisit.OperatorActionFilter) revisit.OperatorActionPage {
	f.t.Helper()
	page, err := f.s.OperatorActionsList(f.ctx, filter)
	require.NoError(f.t, err)
	return page
}

// actionTargets returns the targets of actions, in order.
func actionTargets(as []revisit.OperatorAction) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Target
	}
	return out
}

func exerciseActions(t *testing.T, newStore NewStore) {
	parallel(t, "Actions/RecordAndListNewestFirst", func(t *testing.T) {
		f := newFixture(t, newStore)
		page := f.listActions(revisit.OperatorActionFilter{})
		require.Equal(t, revisit.OperatorActionPage{Actions: []revisit.OperatorAction{}}, page, "none yet")

		f.clock.Set(at(1500 * time.Nanosecond))
		paused := f.recordAction("ops", "pause", "git", `{"paused_by": "ops", "at": {"z": 1, "a": [true, null, 2.50]}}`)
		require.Positive(t, paused.ID)
		require.Equal(t, revisit.OperatorAction{ID: paused.ID, At: at(time.Microsecond), By: "ops", Action: "pause",
			Target: "git", Answer: json.RawMessage(`{"at":{"a":[true,null,2.50],"z":1},"paused_by":"ops"}`)}, paused,
			"at the microsecond, the answer canonical")
		f.clock.Advance(time.Minute)
		origin := revisit.OriginTarget(revisit.OriginKey{URL: "https://example.org/a (b)", VisitType: "git"})
		disabled := f.recordAction("anonymous", "disable_origin", origin, `{"changed":2}`)
		require.Greater(t, disabled.ID, paused.ID)
		none := f.recordAction("cli:alice", "resume", "hg", "")
		require.Equal(t, json.RawMessage("{}"), none.Answer, "no answer")

		require.Equal(t, []revisit.OperatorAction{none, disabled, paused}, f.listActions(revisit.OperatorActionFilter{}).Actions)
		require.Equal(t, "https://example.org/a (b) (git)", disabled.Target)
	})

	parallel(t, "Actions/PagesAndFilters", func(t *testing.T) {
		f := newFixture(t, newStore)
		for i, by := range []string{"ops", "anonymous", "ops", "ops", "cli:bob"} {
			action := map[bool]string{true: "pause", false: "resume"}[i%2 == 0]
			f.recordAction(by, action, "vt"+string(rune('0'+i)), "")
			f.clock.Advance(time.Second)
		}

		var seen []string
		filter := revisit.OperatorActionFilter{Limit: 2}
		for {
			page := f.listActions(filter)
			seen = append(seen, strings.Join(actionTargets(page.Actions), ","))
			if page.NextPageToken == "" {
				break
			}
			filter.PageToken = page.NextPageToken
		}
		require.Equal(t, []string{"vt4,vt3", "vt2,vt1", "vt0"}, seen, "pages of 2, newest first")
		page := f.listActions(revisit.OperatorActionFilter{Limit: 1, PageToken: f.listActions(
			revisit.OperatorActionFilter{Limit: 4}).NextPageToken})
		require.Equal(t, []string{"vt0"}, actionTargets(page.Actions))
		require.Empty(t, page.NextPageToken, "the last one: no token")

		require.Equal(t, []string{"vt4", "vt2", "vt0"}, actionTargets(f.listActions(
			revisit.OperatorActionFilter{Action: "pause"}).Actions))
		require.Equal(t, []string{"vt3", "vt2", "vt0"}, actionTargets(f.listActions(
			revisit.OperatorActionFilter{By: "ops"}).Actions))
		byOps := f.listActions(revisit.OperatorActionFilter{By: "ops", Action: "pause", Limit: 1})
		require.Equal(t, []string{"vt2"}, actionTargets(byOps.Actions))
		byOps = f.listActions(revisit.OperatorActionFilter{By: "ops", Action: "pause", PageToken: byOps.NextPageToken})
		require.Equal(t, []string{"vt0"}, actionTargets(byOps.Actions), "the token keeps to the filter given again")
		require.Empty(t, f.listActions(revisit.OperatorActionFilter{Action: "visit_now"}).Actions)
		require.Empty(t, f.listActions(revisit.OperatorActionFilter{By: "nobody"}).Actions)
	})

	parallel(t, "Actions/RecordingDeletesTheOnesPastRetention", func(t *testing.T) {
		f := newFixture(t, newStore)
		old := f.recordAction("ops", "pause", "git", "")
		f.clock.Advance(time.Hour)
		kept := f.recordAction("ops", "resume", "git", "")
		f.clock.Set(old.At.Add(revisit.OperatorActionRetention))
		last := f.recordAction("ops", "pause", "hg", "")
		require.Equal(t, []string{"hg", "git", "git"}, actionTargets(f.listActions(revisit.OperatorActionFilter{}).Actions),
			"exactly the retention old: kept")
		f.clock.Advance(time.Microsecond)
		f.recordAction("ops", "resume", "hg", "")
		require.Equal(t, []revisit.OperatorAction{last, kept}, f.listActions(revisit.OperatorActionFilter{}).Actions[1:],
			"older than the retention: deleted")
	})

	parallel(t, "Actions/RefusesBadInput", func(t *testing.T) {
		f := newFixture(t, newStore)
		good := revisit.OperatorAction{At: at(0), By: "ops", Action: "pause", Target: "git"}
		for field, bad := range map[string]func(a *revisit.OperatorAction){
			"action": func(a *revisit.OperatorAction) { a.Action = "Pause!" },
			"by":     func(a *revisit.OperatorAction) { a.By = "" },
			"target": func(a *revisit.OperatorAction) { a.Target = "a\x00b" },
			"at":     func(a *revisit.OperatorAction) { a.At = time.Time{} },
			"answer": func(a *revisit.OperatorAction) { a.Answer = json.RawMessage(`[1]`) },
		} {
			a := good
			bad(&a)
			_, err := f.s.OperatorActionRecord(f.ctx, a)
			requireInvalid(t, err, field)
		}
		for _, answer := range []string{`{"a":1} {}`, `{"a":`, `null`, `{"a":"\u0000"}`,
			`{"a":"` + strings.Repeat("x", revisit.MaxActionAnswerLength) + `"}`} {
			a := good
			a.Answer = json.RawMessage(answer)
			_, err := f.s.OperatorActionRecord(f.ctx, a)
			requireInvalid(t, err, "answer")
		}
		a := good
		a.By = strings.Repeat("x", revisit.MaxActionByLength+1)
		_, err := f.s.OperatorActionRecord(f.ctx, a)
		requireInvalid(t, err, "by")
		a = good
		a.Target = "\xff"
		_, err = f.s.OperatorActionRecord(f.ctx, a)
		requireInvalid(t, err, "target")
		require.Empty(t, f.listActions(revisit.OperatorActionFilter{}).Actions, "nothing written")

		for field, filter := range map[string]revisit.OperatorActionFilter{
			"action":     {Action: "no such"},
			"by":         {By: "a\nb"},
			"limit":      {Limit: revisit.OperatorActionPageSize.Max + 1},
			"page_token": {PageToken: "nope"},
		} {
			_, err := f.s.OperatorActionsList(f.ctx, filter)
			requireInvalid(t, err, field)
		}
		_, err = f.s.OperatorActionsList(f.ctx, revisit.OperatorActionFilter{Limit: -1})
		requireInvalid(t, err, "limit")
	})
}
