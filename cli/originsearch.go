package cli

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

var originMatchColumns = []column{
	{name: "url"}, {name: "visit_type"}, {name: "lister"}, {name: "lister_id", wide: true},
	{name: "enabled"}, {name: "last_update"}, {name: "first_seen", wide: true}, {name: "last_seen", wide: true},
	{name: "last_visit"}, {name: "last_visit_status"},
}

func originMatchRow(m revisit.OriginMatch, names *listerNames) []any {
	var status any
	if m.LastVisitStatus != nil {
		status = string(*m.LastVisitStatus)
	}
	return []any{m.URL, m.VisitType, names.label(m.ListerID), m.ListerID, m.Enabled, m.LastUpdate,
		m.FirstSeen, m.LastSeen, m.LastVisit, status}
}

// searchFields names the fields of an origin search as the command line
// gives them.
var searchFields = map[string]string{"q": "TEXT", "visit_type": "--visit-type", "limit": "--limit",
	"page_token": "--page-token"}

func (a *app) originSearchCommand() *cobra.Command {
	var (
		lf                 listerFlag
		prefix, contains   bool
		visitType, enabled string
		limit              int
		pageToken          string
		all                bool
	)
	cmd := &cobra.Command{
		Use:   "search [--prefix|--contains] TEXT",
		Short: "Search listed origins by URL",
		Long: `Search the listed origins whose URL starts with TEXT (--prefix, the
default; "" finds every origin) or contains it (--contains, 3 characters or
more); case counts. The rows come in (url, visit type, lister) order, with
the last visit of their origin. A page reads a bounded number of matching
URLs, so it may hold fewer than --limit rows, even none, and still have a
next page: its token is printed on standard error; --all follows every
page.`,
		Example: "  revisit origin search https://github.com/torvalds/\n" +
			"  revisit origin search --contains linux --visit-type git --enabled false",
		Args: exactArgs("TEXT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := revisit.OriginSearch{Query: args[0], Match: revisit.MatchPrefix, VisitType: visitType,
				Limit: limit, PageToken: pageToken}
			switch {
			case prefix && contains:
				return usagef("give --prefix or --contains, not both")
			case contains:
				s.Match = revisit.MatchSubstring
			}
			var err error
			if s.Enabled, err = revisit.ParseEnabledFilter(enabled); err != nil {
				return usagef("--enabled: %q is not one of true, false, any", enabled)
			}
			if err := revisit.PageSize.Check(limit); err != nil {
				return usageError{named("--limit", err)}
			}
			if err := s.Validate(); err != nil {
				return flagged(err, searchFields)
			}
			st, id, err := a.openStoreForLister(cmd, &lf)
			if err != nil {
				return err
			}
			s.ListerID = id
			ctx := cmd.Context()
			names := newListerNames(st)
			rw := a.rows(originMatchColumns)
			for {
				page, err := st.OriginsSearch(ctx, s)
				if err != nil {
					return fmt.Errorf("search origins: %w", flagged(err, searchFields))
				}
				ids := make([]uuid.UUID, len(page.Origins))
				for i, m := range page.Origins {
					ids[i] = m.ListerID
				}
				if err := names.load(ctx, ids); err != nil {
					return err
				}
				for _, m := range page.Origins {
					if err := rw.Row(originMatchRow(m, names)...); err != nil {
						return err
					}
				}
				if more, err := a.pageEnd(rw, page.NextPageToken, all, "matches may follow"); !more {
					return err
				}
				s.PageToken = page.NextPageToken
			}
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&prefix, "prefix", false, "find the URLs that start with TEXT (the default)")
	fl.BoolVar(&contains, "contains", false, "find the URLs that contain TEXT (3 characters or more)")
	lf.registerAs(cmd, "only the rows of the lister")
	fl.StringVar(&visitType, "visit-type", "", "only origins of this visit `type`")
	fl.StringVar(&enabled, "enabled", "any", "which rows: true, false or any")
	fl.IntVar(&limit, "limit", revisit.PageSize.Def, "rows per page (1 to 10000)")
	fl.StringVar(&pageToken, "page-token", "", "continue at this `token` (printed by a previous call)")
	fl.BoolVar(&all, "all", false, "follow every page")
	return cmd
}
