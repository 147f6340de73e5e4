package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// originTarget reads the arguments URL VISIT_TYPE of an origin and the
// lister flag of an action on it, and opens the backend that acts.
func (a *app) originTarget(cmd *cobra.Command, args []string, lf *listerFlag) (backend, revisit.OriginKey, *uuid.UUID, error) {
	key := revisit.OriginKey{URL: args[0], VisitType: args[1]}
	err := flagged(revisit.ValidateOriginKey(key), map[string]string{"url": "URL", "visit_type": "VISIT_TYPE"})
	if err != nil {
		return nil, key, nil, err
	}
	st, listerID, err := a.openStoreForLister(cmd, lf)
	return st, key, listerID, err
}

func (a *app) originVisitNowCommand() *cobra.Command {
	var (
		lf    listerFlag
		force bool
	)
	cmd := &cobra.Command{
		Use:   "visit-now URL VISIT_TYPE",
		Short: "Visit one origin now, whatever the policies say",
		Long: `Send the visit of one origin at once, with a high priority, to its visit
type's queue (the backend_name of load-VISIT_TYPE), whatever the queue's
depth: the origin is marked scheduled and its visit is in flight, recorded
with the policy "operator", until its result. The message carries the
origin's row of --lister, or else an enabled row, then the one listed last.
When a visit of the origin is in flight already, nothing is sent unless
--force. Through --server, the server's broker sends it; otherwise the
configured broker (--broker).`,
		Args: exactArgs("URL", "VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, key, listerID, err := a.originTarget(cmd, args, &lf)
			if err != nil {
				return err
			}
			req := api.VisitNowRequest{URL: key.URL, VisitType: key.VisitType, ListerID: listerID, Force: force}
			var sent api.VisitNowResponse
			if c, ok := st.(*client.Client); ok {
				sent, err = c.VisitNow(cmd.Context(), req)
			} else {
				sent, err = a.visitNow(cmd, req)
			}
			if err != nil {
				return fmt.Errorf("visit %s (%s) now: %w", key.URL, key.VisitType, forceHint(err))
			}
			return a.printSummary(fmt.Sprintf("sent visit %s of %s (%s) to queue %s", sent.ID, sent.URL, sent.VisitType,
				sent.Queue), cols("id", "url", "visit_type", "lister_id", "queue", "scheduled_at"),
				sent.ID, sent.URL, sent.VisitType, sent.ListerID, sent.Queue, sent.ScheduledAt)
		},
	}
	lf.registerAs(cmd, "send the row of the lister")
	cmd.Flags().BoolVar(&force, "force", false, "send it even when a visit of the origin is in flight")
	return cmd
}

// visitNow sends the visit through the store and the configured broker.
func (a *app) visitNow(cmd *cobra.Command, req api.VisitNowRequest) (api.VisitNowResponse, error) {
	st, err := a.openStore(cmd)
	if err != nil {
		return api.VisitNowResponse{}, err
	}
	ctx := cmd.Context()
	tt, err := loadTaskType(ctx, st, req.VisitType)
	if err != nil {
		return api.VisitNowResponse{}, err
	}
	b, err := a.openBroker(cmd, false)
	if err != nil {
		return api.VisitNowResponse{}, err
	}
	key := revisit.OriginKey{URL: req.URL, VisitType: req.VisitType}
	v, err := visitsend.SendOrigin(ctx, st, b, a.senderConfig(), tt, revisit.OriginDispatchParams{
		Key: key, ListerID: req.ListerID, Now: a.now(), Force: req.Force})
	if err == nil {
		a.recordAction(ctx, st, revisit.ActionVisitNow, revisit.OriginTarget(key), "visit", v.ID, "queue", tt.BackendName,
			"force", req.Force)
	}
	return api.VisitNowResponse{ID: v.ID, URL: v.Origin.URL, VisitType: v.Origin.VisitType, ListerID: v.Origin.ListerID,
		Queue: tt.BackendName, ScheduledAt: v.ScheduledAt}, err
}

// forceHint words the refusal of a visit of an origin in flight in the
// command line's terms.
func forceHint(err error) error {
	var e *revisit.Error
	if errors.As(err, &e) && e.Code == revisit.CodeConflict {
		return revisit.Errorf(revisit.CodeConflict, "%s; --force sends another",
			strings.TrimSuffix(e.Message, api.VisitInFlightHint))
	}
	return err
}

// originEnabledCommand builds origin enable, or disable.
func (a *app) originEnabledCommand(enabled bool) *cobra.Command {
	var lf listerFlag
	verb := map[bool]string{true: "enable", false: "disable"}[enabled]
	long := map[bool]string{
		true: `Enable the listed rows of an origin, every lister's or only --lister's:
the policies choose it again, and its visit type's loop is woken.`,
		false: `Disable the listed rows of an origin, every lister's or only --lister's: no
policy chooses it until it is enabled, or listed again (a listing sets its
row as the lister says).`,
	}[enabled]
	cmd := &cobra.Command{
		Use:   verb + " URL VISIT_TYPE",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " an origin",
		Long:  long + "\n\nIt prints how many rows changed: none when they were " + verb + "d already.",
		Args:  exactArgs("URL", "VISIT_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, key, listerID, err := a.originTarget(cmd, args, &lf)
			if err != nil {
				return err
			}
			n, err := st.ListedOriginsSetEnabled(cmd.Context(), key, listerID, enabled)
			if err != nil {
				return fmt.Errorf("%s %s (%s): %w", verb, key.URL, key.VisitType, err)
			}
			a.recordAction(cmd.Context(), st, api.OriginEnabledAction(enabled), revisit.OriginTarget(key),
				api.OriginEnabledAnswer(listerID, n)...)
			return a.printSummary(fmt.Sprintf("%sd %s (%s): %d listed row(s) changed", verb, key.URL, key.VisitType, n),
				cols("url", "visit_type", "lister_id", "enabled", "changed"), key.URL, key.VisitType, listerID, enabled, n)
		},
	}
	lf.registerAs(cmd, "only the row of the lister")
	return cmd
}
