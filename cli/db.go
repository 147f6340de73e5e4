package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func (a *app) dbCommand() *cobra.Command {
	db := &cobra.Command{
		Use:   "db",
		Short: "Manage the store's schema and its search of origins by URL",
	}
	db.AddCommand(&cobra.Command{
		Use:   "migrate",
		Short: "Apply the pending schema migrations",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			from, to, err := store.Migrate(cmd.Context(), url)
			if err != nil {
				return fmt.Errorf("migrate %s: %w", store.Redact(url), err)
			}
			sentence := fmt.Sprintf("schema migrated from version %d to %d", from, to)
			if from == to {
				sentence = fmt.Sprintf("schema up to date (version %d)", to)
			}
			return a.printSummary(sentence, cols("from", "to"), from, to)
		},
	})
	db.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Print the applied and latest schema versions",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			url, err := a.resolveStoreURL(cmd)
			if err != nil {
				return err
			}
			current, latest, err := store.SchemaStatus(cmd.Context(), url)
			if revisit.Code(err) == revisit.CodeNotFound {
				return openStoreError(url, err)
			}
			if err != nil {
				return fmt.Errorf("schema status of %s: %w", store.Redact(url), err)
			}
			upToDate := current == latest
			sentence := fmt.Sprintf("schema version %d, latest %d: up to date", current, latest)
			if !upToDate {
				sentence = fmt.Sprintf("schema version %d, latest %d: %d migration(s) pending (run `revisit db migrate`)",
					current, latest, latest-current)
			}
			return a.printSummary(sentence, cols("current", "latest", "up_to_date"), current, latest, upToDate)
		},
	})
	db.AddCommand(a.dbSearchCommand())
	return db
}
