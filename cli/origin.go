package cli

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

func (a *app) originCommand() *cobra.Command {
	oc := &cobra.Command{
		Use:   "origin",
		Short: "Record, list, search, show and schedule listed origins, and act on one",
	}
	oc.AddCommand(
		a.originRecordCommand(),
		a.originListCommand(),
		a.originSearchCommand(),
		a.originBrowseCommand(),
		a.originShowCommand(),
		a.originVisitNowCommand(),
		a.originEnabledCommand(false),
		a.originEnabledCommand(true),
		a.grabCommand("grab-next", false),
		a.grabCommand("peek-next", true),
		a.updateMetricsCommand(),
		a.metricsCommand(),
		a.sendToCeleryCommand(),
		a.sendFromFileCommand(),
		a.scheduleNextCommand(),
		a.checkIngestedCommand(),
	)
	return oc
}

var originColumns = []column{
	{name: "url"}, {name: "visit_type"}, {name: "lister"}, {name: "lister_id", wide: true},
	{name: "enabled"}, {name: "last_update"}, {name: "first_seen", wide: true}, {name: "last_seen"},
	{name: "is_fork", wide: true}, {name: "forked_from_url", wide: true},
	{name: "extra_loader_arguments", wide: true},
}

func originRow(o revisit.ListedOrigin, names *listerNames) []any {
	return []any{o.URL, o.VisitType, names.label(o.ListerID), o.ListerID,
		o.Enabled, o.LastUpdate, o.FirstSeen, o.LastSeen,
		o.IsFork, o.ForkedFromURL, o.ExtraLoaderArguments}
}

// printOrigins prints origins with their listers' names.
func (a *app) printOrigins(ctx context.Context, rw *rowWriter, names *listerNames, os []revisit.ListedOrigin) error {
	ids := make([]uuid.UUID, len(os))
	for i, o := range os {
		ids[i] = o.ListerID
	}
	if err := names.load(ctx, ids); err != nil {
		return err
	}
	for _, o := range os {
		if err := rw.Row(originRow(o, names)...); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) originListCommand() *cobra.Command {
	var (
		lf        listerFlag
		visitType string
		urls      []string
		enabled   string
		limit     int
		pageToken string
		all       bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List listed origins, a page at a time",
		Long: `List listed origins in (lister, url, visit type) order, a page of --limit
at a time. When more follow, the token of the next page is printed on
standard error; --all follows every page.`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ef, err := revisit.ParseEnabledFilter(enabled)
			if err != nil {
				return usagef("--enabled: %q is not one of true, false, any", enabled)
			}
			if err := revisit.PageSize.Check(limit); err != nil {
				return usageError{named("--limit", err)}
			}
			if visitType != "" {
				if err := revisit.ValidateVisitType(visitType); err != nil {
					return usagef("--visit-type: %s", err.(*revisit.Error).Message)
				}
			}
			st, id, err := a.openStoreForLister(cmd, &lf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			f := revisit.ListedOriginFilter{ListerID: id, URLs: urls, VisitType: visitType,
				Enabled: ef, Limit: limit, PageToken: pageToken}
			names := newListerNames(st)
			rw := a.rows(originColumns)
			for {
				page, err := st.ListedOriginsGet(ctx, f)
				if err != nil {
					return fmt.Errorf("list origins: %w", err)
				}
				if err := a.printOrigins(ctx, rw, names, page.Origins); err != nil {
					return err
				}
				if more, err := a.pageEnd(rw, page.NextPageToken, all, "origins follow"); !more {
					return err
				}
				f.PageToken = page.NextPageToken
			}
		},
	}
	fl := cmd.Flags()
	lf.register(cmd)
	fl.StringVar(&visitType, "visit-type", "", "only origins of this visit `type`")
	fl.StringArrayVar(&urls, "url", nil, "only this origin `URL` (repeatable)")
	fl.StringVar(&enabled, "enabled", "true", "which origins: true, false or any")
	fl.IntVar(&limit, "limit", revisit.PageSize.Def, "origins per page (1 to 10000)")
	fl.StringVar(&pageToken, "page-token", "", "continue at this `token` (printed by a previous call)")
	fl.BoolVar(&all, "all", false, "follow every page")
	return cmd
}

// grabCommand builds grab-next, or peek-next (always a dry run).
func (a *app) grabCommand(name string, peek bool) *cobra.Command {
	var (
		g      grabFlags
		dryRun bool
	)
	short := "Choose the next origins to visit and mark them scheduled"
	if peek {
		short = "Show the origins grab-next would choose, without marking them"
	}
	cmd := &cobra.Command{
		Use:   name + " VISIT_TYPE COUNT",
		Short: short,
		Long:  short + ".\n\n" + grabHelp(),
		Args:  exactArgs("VISIT_TYPE", "COUNT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.params(cmd, args[0])
			if err != nil {
				return err
			}
			if p.Count, err = revisit.GrabCount.Parse(args[1]); err != nil {
				return usageError{named("COUNT", err)}
			}
			p.DryRun = dryRun || peek
			st, listerID, err := a.openStoreForLister(cmd, &g.lister)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p.ListerID = listerID
			if p.Now.IsZero() {
				p.Now = a.now().UTC()
			}
			if _, err := p.Validate(); err != nil {
				return err
			}
			os, err := st.GrabNextVisits(ctx, p)
			if err != nil {
				return fmt.Errorf("%s %s: %w", name, p.VisitType, err)
			}
			rw := a.rows(originColumns)
			if err := a.printOrigins(ctx, rw, newListerNames(st), os); err != nil {
				return err
			}
			return rw.Close()
		},
	}
	g.register(cmd, revisit.OldestScheduledFirst)
	if !peek {
		cmd.Flags().BoolVar(&dryRun, "dry-run", false, "do not mark the origins scheduled")
	}
	return cmd
}

func policyNames() string {
	s := ""
	for i, p := range revisit.Policies {
		if i > 0 {
			s += ", "
		}
		s += string(p)
	}
	return s
}

var metricsColumns = []column{
	{name: "lister"}, {name: "lister_id", wide: true}, {name: "visit_type"},
	{name: "origins_known"}, {name: "origins_enabled"}, {name: "origins_never_visited"},
	{name: "origins_with_pending_changes"}, {name: "last_update"},
}

func (a *app) printMetrics(ctx context.Context, st backend, ms []revisit.SchedulerMetrics) error {
	names := newListerNames(st)
	ids := make([]uuid.UUID, len(ms))
	for i, m := range ms {
		ids[i] = m.ListerID
	}
	if err := names.load(ctx, ids); err != nil {
		return err
	}
	rw := a.rows(metricsColumns)
	for _, m := range ms {
		if err := rw.Row(names.label(m.ListerID), m.ListerID, m.VisitType, m.OriginsKnown, m.OriginsEnabled,
			m.OriginsNeverVisited, m.OriginsWithPendingChanges, m.LastUpdate); err != nil {
			return err
		}
	}
	return rw.Close()
}

func (a *app) updateMetricsCommand() *cobra.Command {
	var lf listerFlag
	cmd := &cobra.Command{
		Use:   "update-metrics",
		Short: "Recompute the scheduler metrics (of one lister, or all)",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, id, err := a.openStoreForLister(cmd, &lf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			ms, err := st.MetricsUpdate(ctx, id, a.now().UTC())
			if err != nil {
				return fmt.Errorf("update metrics: %w", err)
			}
			a.recordAction(ctx, st, revisit.ActionRefreshMetrics, revisit.ListerTarget(id), "metrics", len(ms))
			return a.printMetrics(ctx, st, ms)
		},
	}
	lf.register(cmd)
	return cmd
}

func (a *app) metricsCommand() *cobra.Command {
	var (
		lf        listerFlag
		visitType string
	)
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "Print the scheduler metrics computed by update-metrics",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, id, err := a.openStoreForLister(cmd, &lf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			ms, err := st.MetricsGet(ctx, id, visitType)
			if err != nil {
				return fmt.Errorf("metrics: %w", err)
			}
			return a.printMetrics(ctx, st, ms)
		},
	}
	lf.register(cmd)
	cmd.Flags().StringVar(&visitType, "visit-type", "", "only this visit `type`")
	return cmd
}
