package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

var listerColumns = []column{
	{name: "id"}, {name: "name"}, {name: "instance_name"},
	{name: "created", wide: true}, {name: "updated"},
	{name: "last_listing_finished_at"}, {name: "current_state", wide: true},
}

func listerRow(l revisit.Lister) []any {
	return []any{l.ID, l.Name, l.InstanceName, l.Created, l.Updated,
		orText{l.LastListingFinishedAt, "never"}, l.CurrentState}
}

func (a *app) listerCommand() *cobra.Command {
	lc := &cobra.Command{
		Use:   "lister",
		Short: "Inspect listers",
	}
	lc.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the listers",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ls, err := st.ListerList(cmd.Context())
			if err != nil {
				return fmt.Errorf("list listers: %w", err)
			}
			rw := a.rows(listerColumns)
			for _, l := range ls {
				if err := rw.Row(listerRow(l)...); err != nil {
					return err
				}
			}
			return rw.Close()
		},
	})

	var id string
	show := &cobra.Command{
		Use:   "show NAME [INSTANCE] | --id UUID",
		Short: "Show a lister and the visit types of its origins",
		Args: func(cmd *cobra.Command, args []string) error {
			if id != "" && len(args) > 0 {
				return usagef("give NAME [INSTANCE] or --id, not both")
			}
			if id == "" {
				return rangeArgs(1, 2, "NAME [INSTANCE]")(cmd, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var lf listerFlag
			if id != "" {
				lf.id = id
			} else {
				lf.spec = args[0]
				if len(args) == 2 {
					lf.spec += "/" + args[1]
				}
			}
			if _, _, _, err := lf.parse(); err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			l, err := lf.resolve(cmd.Context(), st)
			if err != nil {
				return err
			}
			vts, err := st.ListerVisitTypes(cmd.Context(), l.ID)
			if err != nil {
				return fmt.Errorf("visit types of lister %s: %w", l.ID, err)
			}
			if vts == nil {
				vts = []string{}
			}
			return a.printObject(append(listerColumns[:len(listerColumns):len(listerColumns)], column{name: "visit_types"}),
				append(listerRow(*l), vts)...)
		},
	}
	show.Flags().StringVar(&id, "id", "", "the lister's `UUID`")
	lc.AddCommand(show)
	return lc
}
