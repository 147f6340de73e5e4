package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
)

// The operators' actions (revisit.OperatorAction): revisit history
// --actions lists them, and the commands that act on the store directly
// record theirs, as the API records those done through it.

var actionColumns = []column{
	{name: "id", wide: true}, {name: "at"}, {name: "by"}, {name: "action"}, {name: "target"}, {name: "answer"},
}

// actionFields names the fields of a listing of actions as the command
// line gives them.
var actionFields = map[string]string{"action": "--action", "by": "--by", "limit": "--limit",
	"page_token": "--page-token"}

// actionListFlags are the flags of revisit history --actions.
type actionListFlags struct {
	filter revisit.OperatorActionFilter
	all    bool
}

// register adds the flags to cmd.
func (f *actionListFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.filter.Action, "action", "", "with --actions: only this `action`'s (as pause or visit_now)")
	fl.StringVar(&f.filter.By, "by", "", "with --actions: only those done by `who` (a token's name, anonymous, cli:USER)")
	fl.IntVar(&f.filter.Limit, "limit", revisit.OperatorActionPageSize.Def, "with --actions: actions per page (1 to 1000)")
	fl.StringVar(&f.filter.PageToken, "page-token", "", "with --actions: continue at this `token` (printed by a previous call)")
	fl.BoolVar(&f.all, "all", false, "with --actions: follow every page")
}

// listActions prints the actions f selects, newest first, from the server
// of --server or else from the store. A --limit of 0 is refused, not read
// as the default.
func (a *app) listActions(cmd *cobra.Command, f actionListFlags) error {
	err := revisit.OperatorActionPageSize.Check(f.filter.Limit)
	if err == nil {
		err = f.filter.Validate()
	}
	if err != nil {
		return flagged(err, actionFields)
	}
	st, err := a.backend(cmd)
	if err != nil {
		return err
	}
	rw := a.rows(actionColumns)
	for {
		page, err := st.OperatorActionsList(cmd.Context(), f.filter)
		if err != nil {
			return fmt.Errorf("actions: %w", flagged(err, actionFields))
		}
		for _, ac := range page.Actions {
			if err := rw.Row(ac.ID, ac.At, ac.By, ac.Action, ac.Target, ac.Answer); err != nil {
				return err
			}
		}
		if more, err := a.pageEnd(rw, page.NextPageToken, f.all, "actions follow"); !more {
			return err
		}
		f.filter.PageToken = page.NextPageToken
	}
}

// actionRecorder is a backend that records actions: the store. The API
// client is none: through --server, the server records what it does.
type actionRecorder interface {
	OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error)
}

// recordAction records an action done on st, when st is the store: by
// the operator (cli:USER), now, what came of it from attrs (key-value
// pairs, revisit.ActionAnswer). The action is done already: a failure to
// record it is logged, and fails nothing.
func (a *app) recordAction(ctx context.Context, st backend, action, target string, attrs ...any) {
	rec, ok := st.(actionRecorder)
	if !ok {
		return
	}
	_, err := rec.OperatorActionRecord(context.WithoutCancel(ctx), revisit.OperatorAction{At: a.now(), By: a.operator(),
		Action: action, Target: target, Answer: revisit.ActionAnswer(attrs...)})
	if err != nil {
		a.log.Error("action done but not recorded", "action", action, "target", target, "err", err)
	}
}

// recordTaskActions records an action done on each task of ids, whose
// status is now status (recordAction).
func (a *app) recordTaskActions(ctx context.Context, st backend, action string, ids []int64, status revisit.TaskStatus) {
	for _, id := range ids {
		a.recordAction(ctx, st, action, revisit.TaskTarget(id), "status", status)
	}
}
