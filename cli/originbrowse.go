package cli

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

var browsedColumns = append(slices.Clone(originMatchColumns), column{name: "last_scheduled"})

// browseFields names the fields of a browse as the command line gives
// them.
var browseFields = map[string]string{"visit_type": "VISIT_TYPE", "outcome": "--outcome", "limit": "--limit",
	"page_token": "--page-token", "enabled": "--disabled"}

func (a *app) originBrowseCommand() *cobra.Command {
	var (
		lf                       listerFlag
		failures, disabled, desc bool
		outcome                  string
		limit                    int
		pageToken                string
		all                      bool
	)
	cmd := &cobra.Command{
		Use:   "browse VISIT_TYPE",
		Short: "Browse a visit type's origins: those waiting longest, or its failures",
		Long: `Browse the listed origins of VISIT_TYPE that have no visit in flight, in
the order of the time they were last scheduled, the never scheduled first:
those that have waited longest come first (--newest-first: those scheduled
last). --failures browses instead the origins whose last visit failed or
found nothing, by the time of that visit. --disabled shows the disabled
origins; --outcome keeps those whose last visit had this outcome. A page
reads a bounded number of rows, so it may hold fewer than --limit rows,
even none, and still have a next page: its token is printed on standard
error; --all follows every page.`,
		Example: "  revisit origin browse git\n" +
			"  revisit origin browse git --failures --newest-first\n" +
			"  revisit origin browse git --disabled --lister gitlab",
		Args: exactArgs("VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b := revisit.OriginBrowse{VisitType: args[0], View: revisit.ViewScheduled, Descending: desc,
				Limit: limit, PageToken: pageToken}
			if failures {
				b.View, b.Enabled = revisit.ViewFailures, revisit.AnyEnabled
			}
			if disabled {
				b.Enabled = revisit.OnlyDisabled
			}
			var err error
			if b.Outcome, err = revisit.ParseOutcomeFilter(outcome); err != nil {
				return usageError{named("--outcome", err)}
			}
			if err := revisit.BrowsePageSize.Check(limit); err != nil {
				return usageError{named("--limit", err)}
			}
			if err := b.Validate(); err != nil {
				return flagged(err, browseFields)
			}
			st, id, err := a.openStoreForLister(cmd, &lf)
			if err != nil {
				return err
			}
			b.ListerID = id
			ctx := cmd.Context()
			names := newListerNames(st)
			rw := a.rows(browsedColumns)
			for {
				page, err := st.OriginsBrowse(ctx, b)
				if err != nil {
					return fmt.Errorf("browse origins: %w", flagged(err, browseFields))
				}
				ids := make([]uuid.UUID, len(page.Origins))
				for i, o := range page.Origins {
					ids[i] = o.ListerID
				}
				if err := names.load(ctx, ids); err != nil {
					return err
				}
				for _, o := range page.Origins {
					if err := rw.Row(append(originMatchRow(o.OriginMatch, names), o.LastScheduled)...); err != nil {
						return err
					}
				}
				if more, err := a.pageEnd(rw, page.NextPageToken, all, "origins may follow"); !more {
					return err
				}
				b.PageToken = page.NextPageToken
			}
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&failures, "failures", false, "the origins whose last visit failed or found nothing, by its time")
	fl.BoolVar(&disabled, "disabled", false, "the disabled origins")
	fl.BoolVar(&desc, "newest-first", false, "the newest first")
	fl.StringVar(&outcome, "outcome", "", "only those whose last visit was successful, failed, not_found, or never visited (never)")
	lf.registerAs(cmd, "only the rows of the lister")
	fl.IntVar(&limit, "limit", revisit.BrowsePageSize.Def, fmt.Sprintf("rows per page (1 to %d)", revisit.BrowsePageSize.Max))
	fl.StringVar(&pageToken, "page-token", "", "continue at this `token` (printed by a previous call)")
	fl.BoolVar(&all, "all", false, "follow every page")
	return cmd
}
