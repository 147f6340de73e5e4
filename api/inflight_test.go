package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// Visit statuses posted to the API close the visits in flight of their
// origins, on both stores: the sent and lost visits scheduled at or
// before the status, not a pending one.
func TestVisitStatusesCloseVisitsInFlight(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		h := newDataHarnessOn(t, st, time.Now)
		l, err := st.ListerGetOrCreate(ctx, "forge", "")
		require.NoError(t, err)
		names := []string{"sent", "early", "lost", "pending"}
		var listed []revisit.ListedOrigin
		for _, name := range names {
			listed = append(listed, revisit.ListedOrigin{ListerID: l.ID, URL: "https://forge.example/" + name,
				VisitType: "git", Enabled: true})
		}
		_, err = st.ListedOriginsRecord(ctx, listed)
		require.NoError(t, err)
		vs, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
			VisitType: "git", Count: len(listed), Policy: revisit.OldestScheduledFirst}})
		require.NoError(t, err)
		require.Len(t, vs, len(listed))
		id := map[string]string{}
		for _, v := range vs {
			id[strings.TrimPrefix(v.Origin.URL, "https://forge.example/")] = v.ID
		}
		scheduled := vs[0].ScheduledAt
		_, err = st.VisitsSent(ctx, []string{id["lost"]}, scheduled)
		require.NoError(t, err)
		_, err = st.VisitsExpire(ctx, "git", scheduled.Add(time.Microsecond))
		require.NoError(t, err)
		_, err = st.VisitsSent(ctx, []string{id["sent"], id["early"]}, scheduled)
		require.NoError(t, err)

		status := func(name string, date time.Time) string {
			return fmt.Sprintf(`{"origin": "https://forge.example/%s", "visit_type": "git", "status": "full", "date": %q, "eventful": true}`,
				name, date.Format(time.RFC3339Nano))
		}
		after := scheduled.Add(time.Second)
		out := h.json("POST", "/api/v1/visit-statuses", "["+strings.Join([]string{
			status("sent", after), status("early", scheduled.Add(-time.Microsecond)), status("lost", after),
			status("pending", after)}, ", ")+"]", 200)
		require.EqualValues(t, 4, out["processed"])
		require.EqualValues(t, 2, out["closed"], "the sent and the lost visit")

		got, err := st.VisitsGet(ctx, []string{id["sent"], id["early"], id["lost"], id["pending"]})
		require.NoError(t, err)
		left := map[string]revisit.VisitState{}
		for _, v := range got {
			left[v.ID] = v.State
		}
		require.Equal(t, map[string]revisit.VisitState{id["early"]: revisit.VisitSent, id["pending"]: revisit.VisitPending}, left,
			"a status dated before the visit was scheduled is not its result; a pending visit's message may not be out yet")
		counts, err := st.VisitsCount(ctx)
		require.NoError(t, err)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Pending: 1, Sent: 1}}, counts)

		out = h.json("POST", "/api/v1/visit-statuses", "["+status("sent", after)+"]", 200)
		require.EqualValues(t, 0, out["processed"], "a duplicate")
		require.EqualValues(t, 0, out["closed"], "closes nothing more")
	})
}
