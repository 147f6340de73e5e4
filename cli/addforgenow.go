package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

// defaultFirstVisitsPrefix prefixes the backend names of the load task
// types to name the queues of a new forge's first visits, as upstream does.
const defaultFirstVisitsPrefix = "add_forge_now"

func (a *app) addForgeNowCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "add-forge-now",
		Short: "Bring in a new forge: list it at once, then send its first visits",
	}
	c.AddCommand(a.registerListerCommand(), a.scheduleFirstVisitsCommand())
	return c
}

func (a *app) registerListerCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "register-lister LISTER_NAME [KEY=VALUE...]",
		Short: "Create a one-shot, high-priority task of type list-LISTER_NAME, due now",
		Long: `Creates a one-shot task of the task type list-LISTER_NAME, with priority high
and due now, whose keyword arguments are the KEY=VALUE pairs (each VALUE a
string): the runner sends it at once to the priority queue of the type. The
task type must exist.

This is upstream's "swh scheduler add-forge-now register-lister".`,
		Example: "  revisit add-forge-now register-lister gitlab url=https://gitlab.example.org/api/v4/ instance=gitlab.example.org",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("want arguments LISTER_NAME [KEY=VALUE...], got none")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			kwargs, err := parseKwargs(args[1:], func(v string) any { return v })
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			tt, err := taskTypeNamed(ctx, st, "list-"+args[0])
			if err != nil {
				return err
			}
			ts, err := st.TasksCreate(ctx, []revisit.NewTask{{Type: tt.Type, NextRun: a.now(), Policy: revisit.TaskOneshot,
				Priority: revisit.PriorityHigh, Arguments: revisit.TaskArguments{Args: []any{}, Kwargs: kwargs}}})
			if err != nil {
				return fmt.Errorf("create task: %w", err)
			}
			return a.printObject(taskColumns, taskRow(ts[0])...)
		},
	}
}

func (a *app) scheduleFirstVisitsCommand() *cobra.Command {
	var (
		lf         listerFlag
		visitTypes []string
		prefix     string
		o          sendOptions
	)
	cmd := &cobra.Command{
		Use:   "schedule-first-visits --visit-type VT [--visit-type VT]... --lister NAME[/INSTANCE]",
		Short: "Send the lister's origins not visited since its last listing to the first-visit queues",
		Long: `For each visit type, sends the lister's origins not scheduled since its last
listing finished (policy first_visits_after_listing) to the queue
PREFIX:BACKEND_NAME, where BACKEND_NAME is the backend_name of the task type
load-VT: as many as the queue has free slots. Each visit is in flight until
its result, as the orchestrator's are. It prints the free slots found, the
visits sent and the messages the broker did not confirm, by visit type.

"revisit first-visits run", and the firstvisits role of "revisit serve", do
this for every lister with a first-visits queue prefix once its listing
finishes.

This is upstream's "swh scheduler add-forge-now schedule-first-visits".`,
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(visitTypes) == 0 {
				return usagef("--visit-type: name at least one visit type")
			}
			for _, vt := range visitTypes {
				if err := revisit.ValidateVisitType(vt); err != nil {
					return usageError{named("--visit-type", err)}
				}
			}
			name, _, id, err := lf.parse()
			if err != nil {
				return err
			}
			if name == "" && id == nil {
				return usagef("--lister: name the lister whose origins to send (NAME[/INSTANCE], or --lister-id)")
			}
			if prefix == "" {
				return usagef("--queue-prefix: must not be empty")
			}
			st, err := a.openStore(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			listerID, err := lf.resolveID(ctx, st)
			if err != nil {
				return err
			}
			var targets []queueTarget
			var unknown []string
			for _, vt := range visitTypes {
				tt, err := loadTaskType(ctx, st, vt)
				if revisit.Code(err) == revisit.CodeNotFound {
					unknown = append(unknown, "load-"+vt)
					continue
				}
				if err != nil {
					return err
				}
				targets = append(targets, queueTarget{visitType: vt, taskType: tt, queue: prefix + ":" + tt.BackendName})
			}
			if len(unknown) > 0 {
				return revisit.Errorf(revisit.CodeNotFound, "no task type %s (add it with revisit task-type add or register); nothing sent",
					strings.Join(unknown, ", "))
			}
			b, err := a.openBroker(cmd, false)
			if err != nil {
				return err
			}
			p := revisit.GrabParams{Policy: revisit.FirstVisitsAfterListing, ListerID: listerID}
			return a.fillQueues(ctx, st, b, p, targets, o)
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&visitTypes, "visit-type", nil, "send the origins of this visit `type` (repeatable; at least one)")
	f.StringVar(&prefix, "queue-prefix", defaultFirstVisitsPrefix, "the queues are `PREFIX`:BACKEND_NAME")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the messages that would be sent; mark and send nothing")
	return cmd
}
