package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// ListerStatements read and write listers.
type ListerStatements interface {
	// ListerInsertOrGet creates l (id, name, instance, created = updated,
	// first-visits queue prefix) unless a lister of its name and
	// instance exists, and returns the lister stored under them; false
	// when it cannot see it yet (another writer's, not committed when the
	// statement began).
	ListerInsertOrGet(ctx context.Context, l revisit.Lister) (revisit.Lister, bool, error)
	// ListerNamed reads the lister of that name and instance; false if
	// absent.
	ListerNamed(ctx context.Context, name, instanceName string) (revisit.Lister, bool, error)
	// ListerUpdateIfUnchanged writes l's state (state, its JSON),
	// LastListingFinishedAt and first visits and sets its updated to
	// updated, if its stored updated is l.Updated, and returns it as
	// stored; false otherwise.
	ListerUpdateIfUnchanged(ctx context.Context, l revisit.Lister, state []byte, updated time.Time) (revisit.Lister, bool, error)
	// ListersAll reads every lister, by name and instance name.
	ListersAll(ctx context.Context) ([]revisit.Lister, error)
	// ListersWithIDs reads the listers with those ids, by name and
	// instance name.
	ListersWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	// ListerWrite writes l as it is (state, its JSON), replacing the
	// lister of its id; false, writing nothing, when another lister has
	// its name and instance.
	ListerWrite(ctx context.Context, l revisit.Lister, state []byte) (bool, error)
}

// ListerGetOrCreate returns the lister of that name and instance, creating
// it if needed.
func (f *Front) ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	return f.listerGetOrCreate(ctx, name, instanceName, nil)
}

// ListerGetOrCreateForFirstVisits is ListerGetOrCreate that gives a lister
// it creates that first-visits queue prefix.
func (f *Front) ListerGetOrCreateForFirstVisits(ctx context.Context, name, instanceName, queuePrefix string) (revisit.Lister, error) {
	if err := revisit.ValidateFirstVisitsQueuePrefix(&queuePrefix); err != nil {
		return revisit.Lister{}, err
	}
	return f.listerGetOrCreate(ctx, name, instanceName, &queuePrefix)
}

// listerGetOrCreate returns the lister of that name and instance, creating
// it with that first-visits queue prefix (nil: none) if needed.
func (f *Front) listerGetOrCreate(ctx context.Context, name, instanceName string, queuePrefix *string) (revisit.Lister, error) {
	if err := revisit.ValidateListerName(name, instanceName); err != nil {
		return revisit.Lister{}, err
	}
	now := f.d.Now()
	l := revisit.Lister{ID: uuid.New(), Name: name, InstanceName: instanceName, Created: now, Updated: now,
		CurrentState: json.RawMessage("{}"), FirstVisitsQueuePrefix: queuePrefix}
	var seen bool
	l, err := value(ctx, f.d.WriteOne, fmt.Sprintf("get or create lister %s/%s", name, instanceName), func(x Statements) (revisit.Lister, error) {
		stored, ok, err := x.ListerInsertOrGet(ctx, l)
		seen = ok
		return stored, err
	})
	if err == nil && !seen {
		return f.ListerGet(ctx, name, instanceName)
	}
	return l, err
}

// ListerGet returns the lister of that name and instance; ErrNotFound if
// absent.
func (f *Front) ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	var found bool
	l, err := value(ctx, f.d.Read, fmt.Sprintf("get lister %s/%s", name, instanceName), func(x Statements) (l revisit.Lister, err error) {
		l, found, err = x.ListerNamed(ctx, name, instanceName)
		return l, err
	})
	if err == nil && !found {
		err = revisit.Errorf(revisit.CodeNotFound, "lister %s/%s not found", name, instanceName)
	}
	return l, err
}

// ListerUpdate stores the lister's state if nobody updated it since
// l.Updated (to the microsecond), and returns it with its new Updated: the
// clock's now, or one microsecond after the old one if the clock has not
// moved past it. ErrStaleData if the lister changed since the caller read
// it, ErrNotFound if it does not exist.
func (f *Front) ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error) {
	state, err := ListerState(l.CurrentState)
	if err != nil {
		return revisit.Lister{}, err
	}
	if err := revisit.ValidateFirstVisitsQueuePrefix(l.FirstVisitsQueuePrefix); err != nil {
		return revisit.Lister{}, err
	}
	old := revisit.Microsecond(l.Updated)
	l.Updated, l.LastListingFinishedAt = old, revisit.MicrosecondPtr(l.LastListingFinishedAt)
	l.FirstVisitsScheduledAt = revisit.MicrosecondPtr(l.FirstVisitsScheduledAt)
	return value(ctx, f.d.WriteOne, "update lister "+l.ID.String(), func(x Statements) (revisit.Lister, error) {
		updated, ok, err := x.ListerUpdateIfUnchanged(ctx, l, state, later(f.d.Now(), old))
		if err != nil || ok {
			return updated, err
		}
		found, err := x.ListersWithIDs(ctx, []uuid.UUID{l.ID})
		switch {
		case err != nil:
			return revisit.Lister{}, err
		case len(found) == 0:
			return revisit.Lister{}, revisit.Errorf(revisit.CodeNotFound, "lister %s not found", l.ID)
		}
		return revisit.Lister{}, revisit.Errorf(revisit.CodeStaleData,
			"lister %s was updated at %s, after the caller's copy (%s); read it again",
			l.ID, found[0].Updated.Format(time.RFC3339Nano), old.Format(time.RFC3339Nano))
	})
}

// later returns now, or one microsecond after old if now is not after it.
func later(now, old time.Time) time.Time {
	if now.After(old) {
		return now
	}
	return old.Add(time.Microsecond)
}

// ListerList returns every lister, by name and instance name.
func (f *Front) ListerList(ctx context.Context) ([]revisit.Lister, error) {
	ls, err := value(ctx, f.d.Read, "list listers", func(x Statements) ([]revisit.Lister, error) {
		return x.ListersAll(ctx)
	})
	return nonNil(ls), err
}

// ListerGetByIDs returns the listers with those ids that exist, by name and
// instance name.
func (f *Front) ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	if len(ids) == 0 {
		return []revisit.Lister{}, nil
	}
	ls, err := value(ctx, f.d.Read, "get listers", func(x Statements) ([]revisit.Lister, error) {
		return x.ListersWithIDs(ctx, ids)
	})
	return nonNil(ls), err
}

// ListersImport writes listers as they are, every field kept
// (store.Store).
func (f *Front) ListersImport(ctx context.Context, ls []revisit.Lister) error {
	if err := batch.ImportedListers(ls); err != nil || len(ls) == 0 {
		return err
	}
	return f.d.Write(ctx, fmt.Sprintf("import %d listers", len(ls)), func(x Statements) error {
		for i, l := range ls {
			state, err := ListerState(l.CurrentState)
			if err != nil {
				return err
			}
			if written, err := x.ListerWrite(ctx, l, state); err != nil {
				return err
			} else if !written {
				return batch.ListerTaken(i, l)
			}
		}
		return nil
	})
}

// ListerState returns the compact JSON of a lister state, which must be a
// JSON object; nil or empty is the empty object.
func ListerState(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, revisit.Invalidf("current_state", "must be a JSON object")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, revisit.Invalidf("current_state", "must be a JSON object: %v", err)
	}
	return b.Bytes(), nil
}
