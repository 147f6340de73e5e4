package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/api/client"
)

func (a *app) originShowCommand() *cobra.Command {
	var visitType string
	cmd := &cobra.Command{
		Use:   "show URL [--visit-type VT]",
		Short: "Show what revisit knows of one origin, and when and why it is visited next",
		Long: `Show one origin (a URL and a visit type): its listed rows, each with its
lister and the policies whose condition it meets; its visit stats; its last
results (at most 5, newest first); where it stands on the visit type's
virtual clock; the cooldowns that hold it back, each with until when and
why; and its visits in flight. Without --visit-type, the visit type of its
listed rows, when they have only one.

--format json prints the document of the API's GET /api/v1/origins/detail.`,
		Args: exactArgs("URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.format == formatCSV {
				return usagef("--format: origin show prints a table or json, not csv")
			}
			key := revisit.OriginKey{URL: args[0], VisitType: visitType}
			if err := revisit.ValidateOriginURL(key.URL); err != nil {
				return flagged(err, map[string]string{"url": "URL"})
			}
			if visitType != "" {
				if err := revisit.ValidateVisitType(visitType); err != nil {
					return flagged(err, map[string]string{"visit_type": "--visit-type"})
				}
			}
			st, err := a.backend(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if key.VisitType == "" {
				if key.VisitType, err = listedVisitType(ctx, st, key.URL); err != nil {
					return err
				}
			}
			d, err := a.originDetail(cmd, st, key)
			if err != nil {
				return fmt.Errorf("origin %s (%s): %w", key.URL, key.VisitType, err)
			}
			if a.format == formatJSON {
				out, err := json.MarshalIndent(d, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.env.Stdout, "%s\n", out)
				return err
			}
			return a.printOriginDetail(d)
		},
	}
	cmd.Flags().StringVar(&visitType, "visit-type", "", "the origin's visit `type` (default: that of its listed rows)")
	return cmd
}

// listedVisitType returns the visit type of the listed rows of url; none,
// or several, is an error asking for --visit-type.
func listedVisitType(ctx context.Context, st backend, url string) (string, error) {
	page, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{URLs: []string{url}, Enabled: revisit.AnyEnabled})
	if err != nil {
		return "", fmt.Errorf("origin %s: %w", url, err)
	}
	var types []string
	for _, o := range page.Origins {
		types = append(types, o.VisitType)
	}
	slices.Sort(types)
	types = slices.Compact(types)
	switch len(types) {
	case 0:
		return "", revisit.Errorf(revisit.CodeNotFound,
			"no listed origin %s (an origin known only by its visits needs --visit-type)", url)
	case 1:
		return types[0], nil
	}
	return "", usagef("--visit-type: %s is listed with the visit types %s; choose one", url, strings.Join(types, ", "))
}

// originDetail reads the origin's detail from the server when st is its
// client, or works it out from the store.
func (a *app) originDetail(cmd *cobra.Command, st backend, key revisit.OriginKey) (api.OriginDetail, error) {
	if c, ok := st.(*client.Client); ok {
		return c.OriginDetail(cmd.Context(), key)
	}
	s, err := a.openStore(cmd)
	if err != nil {
		return api.OriginDetail{}, err
	}
	return api.LoadOriginDetail(cmd.Context(), s, key, a.now().UTC(), api.DefaultCooldowns())
}

var (
	listedRowColumns = cols("lister", "enabled", "last_update", "first_seen", "last_seen", "policies")
	recentColumns    = cols("date", "status", "eventful")
	cooldownColumns  = cols("cooldown", "length", "holds", "until", "why")
	inFlightColumns  = cols("id", "state", "policy", "scheduled_at", "sent_at", "owner")
)

// printOriginDetail prints d as text: its fields, then a section each for
// its listed rows, visit stats, recent results, next visit, cooldowns and
// visits in flight.
func (a *app) printOriginDetail(d api.OriginDetail) error {
	if err := a.printObject(cols("url", "visit_type", "as_of", "eligible"), d.URL, d.VisitType, d.Now,
		d.Eligible); err != nil {
		return err
	}
	listed := make([][]any, len(d.Listed))
	for i, l := range d.Listed {
		listed[i] = []any{l.Lister, l.Enabled, l.LastUpdate, l.FirstSeen, l.LastSeen, l.Policies}
	}
	if err := a.printSection("listed by", "no lister", listedRowColumns, listed); err != nil {
		return err
	}
	fmt.Fprintln(a.env.Stdout, "\nvisit stats:")
	if s := d.VisitStats; s == nil {
		fmt.Fprintln(a.env.Stdout, "  none: never scheduled nor visited")
	} else if err := a.printObject(cols("last_visit", "last_visit_status", "last_successful", "last_scheduled",
		"last_snapshot", "successive_visits", "next_position_offset"),
		orText{s.LastVisit, "never"}, orText{s.LastVisitStatus, "none"}, orText{s.LastSuccessful, "never"},
		orText{s.LastScheduled, "never"}, orText{s.LastSnapshot, "none"}, s.SuccessiveVisits,
		s.NextPositionOffset); err != nil {
		return err
	}
	recent := make([][]any, len(d.RecentResults))
	for i, r := range d.RecentResults {
		recent[i] = []any{r.Date, r.Status, r.Eventful}
	}
	if err := a.printSection("recent results", "none kept yet", recentColumns, recent); err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stdout, "\nnext visit:\n  %s\n", d.NextVisit.Explanation)
	cooldowns := make([][]any, len(d.Cooldowns))
	for i, c := range d.Cooldowns {
		cooldowns[i] = []any{c.Cooldown, time.Duration(c.Length), c.Holds, c.Until, c.Explanation}
	}
	if err := a.printSection("cooldowns", "", cooldownColumns, cooldowns); err != nil {
		return err
	}
	inFlight := make([][]any, len(d.InFlight))
	for i, v := range d.InFlight {
		inFlight[i] = []any{v.ID, v.State, v.Policy, v.ScheduledAt, v.SentAt, v.Owner}
	}
	return a.printSection("in flight", "no visit", inFlightColumns, inFlight)
}

// printSection prints one titled part of a detail: a table of its rows,
// or the words none when it has none (the table, headers only, when none
// is empty).
func (a *app) printSection(title, none string, columns []column, rows [][]any) error {
	fmt.Fprintf(a.env.Stdout, "\n%s:\n", title)
	if len(rows) == 0 && none != "" {
		_, err := fmt.Fprintln(a.env.Stdout, "  "+none)
		return err
	}
	rw := a.rows(columns)
	for _, r := range rows {
		if err := rw.Row(r...); err != nil {
			return err
		}
	}
	return rw.Close()
}
