package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

func (a *app) visitTypeCommand() *cobra.Command {
	vt := &cobra.Command{
		Use:   "visit-type",
		Short: "Pause, resume and requeue the visits of a visit type (for operators)",
	}
	vt.AddCommand(
		a.visitTypeActionCommand("pause", "Pause a visit type's orchestrator loop",
			`Pause a visit type: its orchestrator loop runs no round (it neither grabs,
sends nor declares visits lost), in any process, until it is resumed.
Results still come in. A visit type paused already keeps who paused it
and when. Through the store, the pause (and the action, as every action
of this command) is recorded as by cli:$USER.`,
			func(cmd *cobra.Command, st backend, visitType string) error {
				p, err := st.VisitTypePauseSet(cmd.Context(), revisit.Pause{VisitType: visitType, By: a.operator(),
					At: a.now()})
				if err != nil {
					return err
				}
				a.recordAction(cmd.Context(), st, revisit.ActionPause, visitType, "paused_by", p.By, "paused_at", p.At)
				return a.printSummary(fmt.Sprintf("%s paused by %s at %s", visitType, p.By, text(p.At)),
					cols("visit_type", "paused_by", "paused_at"), visitType, p.By, p.At)
			}),
		a.visitTypeActionCommand("resume", "Resume a paused visit type",
			"Resume a paused visit type: its loop runs a round at once.",
			func(cmd *cobra.Command, st backend, visitType string) error {
				was, err := st.VisitTypePauseClear(cmd.Context(), visitType)
				if err != nil {
					return err
				}
				a.recordAction(cmd.Context(), st, revisit.ActionResume, visitType, "was_paused", was)
				sentence := visitType + " resumed"
				if !was {
					sentence = visitType + " was not paused"
				}
				return a.printSummary(sentence, cols("visit_type", "was_paused"), visitType, was)
			}),
		a.visitTypeActionCommand("requeue-lost", "Declare lost the visits sent and without a result, and offer their origins again",
			`Declare lost now every visit of the visit type that was sent and has no
result yet, and offer their origins again at once: for messages the
workers lost (a purged queue, workers gone for good). A result that comes
later still counts. Not for a slow queue: a message still queued or
running gets its origin visited twice.`,
			func(cmd *cobra.Command, st backend, visitType string) error {
				n, err := st.VisitsExpire(cmd.Context(), visitType, a.now())
				if err != nil {
					return err
				}
				a.recordAction(cmd.Context(), st, revisit.ActionRequeueLost, visitType, "lost", n)
				return a.printSummary(fmt.Sprintf("declared %d visit(s) of %s lost; their origins are offered again", n,
					visitType), cols("visit_type", "lost"), visitType, n)
			}),
	)
	return vt
}

// visitTypeActionCommand builds a command acting on the visit type of its
// argument, which must have its load task type.
func (a *app) visitTypeActionCommand(name, short, long string,
	act func(cmd *cobra.Command, st backend, visitType string) error) *cobra.Command {
	return &cobra.Command{
		Use:   name + " VISIT_TYPE",
		Short: short,
		Long:  long,
		Args:  exactArgs("VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			vt := args[0]
			if err := revisit.ValidateVisitType(vt); err != nil {
				return flagged(err, map[string]string{"visit_type": "VISIT_TYPE"})
			}
			st, err := a.backend(cmd)
			if err != nil {
				return err
			}
			if _, err := loadTaskType(cmd.Context(), st, vt); err != nil {
				return fmt.Errorf("%s %s: %w", name, vt, err)
			}
			if err := act(cmd, st, vt); err != nil {
				return fmt.Errorf("%s %s: %w", name, vt, err)
			}
			return nil
		},
	}
}

// operator names who acts on the store directly, as a pause records it:
// cli:$USER, or cli without $USER.
func (a *app) operator() string {
	for _, kv := range a.env.Environ {
		if user, ok := strings.CutPrefix(kv, "USER="); ok && user != "" {
			return "cli:" + user
		}
	}
	return "cli"
}
