package batch

import (
	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/pagetoken"
)

// OperatorActionsStart validates a listing of the operator's actions and
// returns the id it starts before (0: from the newest) and its page size.
func OperatorActionsStart(f revisit.OperatorActionFilter) (beforeID int64, limit int, err error) {
	if err := f.Validate(); err != nil {
		return 0, 0, err
	}
	if f.PageToken != "" {
		if beforeID, err = pagetoken.DecodeID(f.PageToken); err != nil {
			return 0, 0, err
		}
	}
	if limit = f.Limit; limit == 0 {
		limit = revisit.OperatorActionPageSize.Def
	}
	return beforeID, limit, nil
}

// OperatorActionsPage is IDPage for actions read newest first: the token
// resumes before the last action of the page.
func OperatorActionsPage(actions []revisit.OperatorAction, limit int) revisit.OperatorActionPage {
	as, next := IDPage(actions, limit, func(a revisit.OperatorAction) int64 { return a.ID })
	if as == nil {
		as = []revisit.OperatorAction{}
	}
	return revisit.OperatorActionPage{Actions: as, NextPageToken: next}
}
