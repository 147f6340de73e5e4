package recording

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// Listers resolves the listers that lines name by name and instance,
// creating those missing; it asks the store once per lister.
type Listers struct {
	st  ListerCreator
	ids map[[2]string]uuid.UUID
}

// NewListers returns a Listers resolving into st.
func NewListers(st ListerCreator) *Listers {
	return &Listers{st: st, ids: map[[2]string]uuid.UUID{}}
}

// Origin returns the line's origin with its lister ID set: the line's own,
// or that of the lister it names, created when missing. It fails with the
// store's error.
func (l *Listers) Origin(ctx context.Context, line Line) (revisit.ListedOrigin, error) {
	if line.ListerID != nil {
		return line.Origin, nil
	}
	key := [2]string{line.Name, line.Instance}
	id, ok := l.ids[key]
	if !ok {
		lister, err := l.st.ListerGetOrCreate(ctx, line.Name, line.Instance)
		if err != nil {
			return line.Origin, err
		}
		id = lister.ID
		l.ids[key] = id
	}
	o := line.Origin
	o.ListerID = id
	return o, nil
}

// UnknownListers returns those of ids that name no lister.
func UnknownListers(ctx context.Context, st ListerFinder, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	found := map[uuid.UUID]bool{}
	for chunk := range slices.Chunk(ids, 1000) {
		ls, err := st.ListerGetByIDs(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("look up listers: %w", err)
		}
		for _, l := range ls {
			found[l.ID] = true
		}
	}
	unknown := map[uuid.UUID]bool{}
	for _, id := range ids {
		if !found[id] {
			unknown[id] = true
		}
	}
	return unknown, nil
}
