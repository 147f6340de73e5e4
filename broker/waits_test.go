package broker_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

func TestErrorsOfUnavailableDependenciesClassifyAsWaits(t *testing.T) {
	for err, reason := range map[error]string{
		broker.ErrQueueMissing:                          "queue_missing",
		fmt.Errorf("depth: %w", broker.ErrDepthUnknown): "depth_unknown",
		broker.ErrUnavailable:                           "broker_unavailable",
	} {
		var werr *supervise.WaitError
		if !errors.As(supervise.Classify(err), &werr) || werr.Reason != reason {
			t.Errorf("Classify(%v) = %v, want reason %s", err, supervise.Classify(err), reason)
		}
	}
}
