package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// The operator's actions of the console (docs/actions.md): write routes
// that change how the scheduler runs, each logged at INFO with who asked
// and recorded in the store (GET /api/v1/actions lists them).

// ActionStore is what the console's actions need of a store.
// store.Store implements it.
type ActionStore interface {
	visitsend.Store
	// VisitsDispatchOrigin marks one origin scheduled and records its
	// visit pending; ErrConflict when one is in flight, unless forced.
	VisitsDispatchOrigin(ctx context.Context, p revisit.OriginDispatchParams) (revisit.Visit, error)
	// ListedOriginsSetEnabled enables or disables an origin's listed rows
	// and returns how many changed.
	ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID, enabled bool) (int, error)
	// VisitTypePauseSet pauses a visit type and returns its pause.
	VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error)
	// VisitTypePauseClear resumes a visit type.
	VisitTypePauseClear(ctx context.Context, visitType string) (bool, error)
	// VisitTypePauseList returns the paused visit types.
	VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error)
	// VisitsExpire declares lost the sent visits of a visit type sent
	// before `before`.
	VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error)
	// TasksGet returns one page of tasks.
	TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error)
	// TasksSetStatus sets the status of tasks; ErrNotFound for a missing
	// one.
	TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error
	// TasksRespawn makes tasks due again.
	TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error
	// OperatorActionRecord keeps an action done.
	OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error)
	// OperatorActionsList returns one page of the actions done, newest
	// first.
	OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error)
}

// anonymousCaller is who asks when the API has no tokens.
const anonymousCaller = "anonymous"

// callerKey is the context key of the name of the token a request
// carries.
type callerKey struct{}

// withCaller returns r carrying name, the name of its token ("" when the
// API has none).
func withCaller(r *http.Request, name string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, name))
}

// caller names who sent r: its token's name, or "anonymous".
func caller(r *http.Request) string {
	if name, _ := r.Context().Value(callerKey{}).(string); name != "" {
		return name
	}
	return anonymousCaller
}

// audit logs and records an action done: one INFO line naming it, its
// target, who asked and what came of it (attrs, key-value pairs as slog
// takes them), and the same in the store (revisit.OperatorAction, attrs
// its answer). The action is done already: a failure to record it, even
// once the request is gone, is logged at ERROR and fails nothing.
func (s *Server) audit(r *http.Request, action, target string, attrs ...any) {
	by := caller(r)
	s.log.Info("console action", append([]any{"action", action, "target", target, "by", by}, attrs...)...)
	_, err := s.st.OperatorActionRecord(context.WithoutCancel(r.Context()), revisit.OperatorAction{At: s.now(), By: by,
		Action: action, Target: target, Answer: revisit.ActionAnswer(attrs...)})
	if err != nil {
		s.log.Error("console action done but not recorded", "action", action, "target", target, "by", by, "err", err)
	}
}

// actionOwner names this process on the visits an operator asks for.
var actionOwner = sync.OnceValue(holder.New)
