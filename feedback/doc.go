// Package feedback is revisit's visit-status processing (semantics.md §7,
// upstream's "journal client"): it folds the results of visits into the
// visit stats of their origins, which in turn decide when each origin is
// visited next, and disables origins that keep failing.
//
// Fold is the pure part: given the stats and queue positions it read, it
// returns the rows to write and the origins to disable. Process wraps it
// with one read and one write per batch against a Store, each write
// guarded by the last visit read, so that several callers can process
// batches at once without losing a result (docs/store.md, "Writing
// results"); it then closes the visits in flight that the results end,
// found by origin and date when a result does not name its visit.
//
// Callers sort nothing: a batch is in arrival order, messages of one origin
// are folded in that order, and a result dated at or before the origin's
// last visit is skipped as late or duplicate.
package feedback
