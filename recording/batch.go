package recording

import (
	"context"
	"fmt"

	"github.com/revisit-sched/revisit"
)

// InvalidOrigin is the error of a batch whose origin at Index is invalid.
type InvalidOrigin struct {
	Index int
	Err   error
}

func (e *InvalidOrigin) Error() string { return fmt.Sprintf("origin %d: %v", e.Index, e.Err) }
func (e *InvalidOrigin) Unwrap() error { return e.Err }

// Batch records one batch of listed origins, whose lister IDs are set, in
// one call to the store: whole or not at all. Every origin is validated
// first; the first invalid one fails the batch with an *InvalidOrigin and
// nothing written.
func Batch(ctx context.Context, st Recorder, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	for i, o := range origins {
		if err := o.ValidateAbsolute(); err != nil {
			return revisit.RecordResult{}, &InvalidOrigin{Index: i, Err: err}
		}
	}
	return st.ListedOriginsRecord(ctx, origins)
}
