package swhrpc

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/swhwire"
)

var listerFields = []string{"name", "instance_name", "id", "current_state", "created", "updated",
	"last_listing_finished_at", "first_visits_queue_prefix", "first_visits_scheduled_at"}

func TestListers(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		require.Nil(t, c.ok("lister/get", "name", "github", "instance_name", nil), "a missing lister is None")

		created := c.ok("lister/get_or_create", "name", "github", "instance_name", nil, "first_visits_queue_prefix", nil).(swhwire.Model)
		require.Equal(t, listerFields, names(created))
		l := fields(t, created, "Lister")
		require.Equal(t, "", l["instance_name"], "instance_name None is the empty name")
		require.IsType(t, uuid.UUID{}, l["id"])
		require.Equal(t, swhwire.Map{}, l["current_state"])
		require.Equal(t, l["created"], l["updated"])
		require.Nil(t, l["first_visits_queue_prefix"])

		again := fields(t, c.ok("lister/get_or_create", "name", "github", "instance_name", "", "first_visits_queue_prefix", "high"), "Lister")
		require.Equal(t, l["id"], again["id"])
		require.Nil(t, again["first_visits_queue_prefix"], "an existing lister keeps its own prefix")
		require.Equal(t, l["id"], fields(t, c.ok("lister/get", "name", "github", "instance_name", ""), "Lister")["id"])

		// Updates: the state and listing time are stored, updated moves on,
		// and an update from the old updated is StaleData.
		finished := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		update := swhwire.Model{Type: "Lister", Fields: created.Fields}
		update.Fields = pairs("name", "github", "instance_name", "", "id", l["id"],
			"current_state", pairs("page", int64(2), "cursor", "abc", "ratio", 0.5, "nested", pairs("list", []any{int64(1), "x", nil})),
			"created", l["created"], "updated", l["updated"], "last_listing_finished_at", finished,
			"first_visits_queue_prefix", nil, "first_visits_scheduled_at", nil)
		updated := fields(t, c.ok("lister/update", "lister", update), "Lister")
		require.Equal(t, finished, updated["last_listing_finished_at"])
		require.True(t, updated["updated"].(time.Time).After(l["updated"].(time.Time)))
		state := updated["current_state"].(swhwire.Map)
		require.ElementsMatch(t, swhwire.Map{{Key: "cursor", Value: "abc"}, {Key: "nested", Value: swhwire.Map{{Key: "list", Value: []any{int64(1), "x", nil}}}},
			{Key: "page", Value: int64(2)}, {Key: "ratio", Value: 0.5}}, state, "ints stay ints, floats floats")
		r := c.call("lister/update", "lister", update)
		c.refused(r, http.StatusBadRequest, "StaleData", staleDataMessage)

		// A lister of another instance, for first visits.
		fv := fields(t, c.ok("lister/get_or_create", "name", "gitlab", "instance_name", "gitlab.com", "first_visits_queue_prefix", "high"), "Lister")
		require.Equal(t, "high", fv["first_visits_queue_prefix"])
		require.Empty(t, list(t, c.ok("listers/get", "with_first_visits_to_schedule", true)), "no listing finished yet")
		listed := pairs("name", "gitlab", "instance_name", "gitlab.com", "id", fv["id"], "current_state", swhwire.Map{},
			"created", fv["created"], "updated", fv["updated"], "last_listing_finished_at", finished,
			"first_visits_queue_prefix", "high", "first_visits_scheduled_at", nil)
		fv = fields(t, c.ok("lister/update", "lister", swhwire.Model{Type: "Lister", Fields: listed}), "Lister")
		toSchedule := list(t, c.ok("listers/get", "with_first_visits_to_schedule", true))
		require.Len(t, toSchedule, 1)
		require.Equal(t, fv["id"], fields(t, toSchedule[0], "Lister")["id"])
		scheduled := finished.Add(time.Hour)
		listed = pairs("name", "gitlab", "instance_name", "gitlab.com", "id", fv["id"], "current_state", swhwire.Map{},
			"created", fv["created"], "updated", fv["updated"], "last_listing_finished_at", finished,
			"first_visits_queue_prefix", "high", "first_visits_scheduled_at", scheduled)
		require.Equal(t, scheduled, fields(t, c.ok("lister/update", "lister", swhwire.Model{Type: "Lister", Fields: listed}), "Lister")["first_visits_scheduled_at"])
		require.Empty(t, list(t, c.ok("listers/get", "with_first_visits_to_schedule", true)), "first visits scheduled")

		all := list(t, c.ok("listers/get", "with_first_visits_to_schedule", false))
		require.Len(t, all, 2)
		require.Len(t, list(t, c.ok("listers/get")), 2, "with_first_visits_to_schedule defaults to False")

		byID := list(t, c.ok("listers/get_by_id", "lister_ids", []any{l["id"].(uuid.UUID).String(), uuid.NewString()}))
		require.Len(t, byID, 1, "unknown ids are left out")
		require.Equal(t, "github", fields(t, byID[0], "Lister")["name"])

		require.Equal(t, []any{}, c.ok("lister/visit_types", "lister", update))
		c.ok("origins/record", "listed_origins", []any{
			origin(l["id"].(uuid.UUID), "https://github.com/o/a", "git"), origin(l["id"].(uuid.UUID), "https://github.com/o/a", "svn")})
		require.Equal(t, []any{"git", "svn"}, c.ok("lister/visit_types", "lister", update))
	})
}

// origin is a ListedOrigin model to record.
func origin(lister uuid.UUID, url, visitType string, more ...any) swhwire.Model {
	return swhwire.Model{Type: "ListedOrigin", Fields: append(pairs("lister_id", lister, "url", url, "visit_type", visitType), pairs(more...)...)}
}
