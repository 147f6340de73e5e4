package recording_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/recording"
	"github.com/revisit-sched/revisit/store"
)

var (
	_ recording.Store = store.Store(nil)
	_ recording.Store = (*client.Client)(nil)
)

// fakeStore keeps the last version of each origin it is given, and the
// listers it created.
type fakeStore struct {
	mu      sync.Mutex
	origins map[revisit.OriginKey]revisit.ListedOrigin
	listers map[[2]string]revisit.Lister
	creates int
	fail    error
}

func newFakeStore() *fakeStore {
	return &fakeStore{origins: map[revisit.OriginKey]revisit.ListedOrigin{}, listers: map[[2]string]revisit.Lister{}}
}

func (f *fakeStore) ListedOriginsRecord(_ context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var res revisit.RecordResult
	if f.fail != nil {
		return res, f.fail
	}
	for _, o := range origins {
		if _, ok := f.origins[o.Key()]; ok {
			res.Updated++
		} else {
			res.Inserted++
		}
		f.origins[o.Key()] = o
	}
	return res, nil
}

func (f *fakeStore) ListerGetOrCreate(_ context.Context, name, instance string) (revisit.Lister, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates++
	l, ok := f.listers[[2]string{name, instance}]
	if !ok {
		l = revisit.Lister{ID: uuid.New(), Name: name, InstanceName: instance}
		f.listers[[2]string{name, instance}] = l
	}
	return l, nil
}

func (f *fakeStore) ListerGetByIDs(_ context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []revisit.Lister
	for _, l := range f.listers {
		for _, id := range ids {
			if l.ID == id {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// lister is the lister of the origins of the tests.
var lister = uuid.New()

func origin(i, version int) revisit.ListedOrigin {
	return revisit.ListedOrigin{ListerID: lister, URL: fmt.Sprintf("https://example.org/r%d", i), VisitType: "git",
		Enabled: true, ExtraLoaderArguments: map[string]any{"v": version}}
}

func TestWriterKeepsEachOriginsOrder(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	written := 0
	w := recording.NewWriter(context.Background(), st, recording.Config{Writers: 4, BatchSize: 3,
		Written: func(n int) { written += n }})
	for v := range 5 {
		for i := range 20 {
			require.NoError(t, w.Add(origin(i, v)))
		}
	}
	res, err := w.Close()
	require.NoError(t, err)
	require.Equal(t, revisit.RecordResult{Inserted: 20, Updated: 80}, res)
	require.Equal(t, 100, written)
	for _, o := range st.origins {
		require.Equal(t, 4, o.ExtraLoaderArguments["v"], "the last version wins")
	}
}

func TestWriterFails(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	st.fail = errors.New("disk full")
	w := recording.NewWriter(context.Background(), st, recording.Config{BatchSize: 1})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = w.Add(origin(i, 0))
	}
	_, closeErr := w.Close()
	require.ErrorIs(t, closeErr, st.fail)
	require.ErrorContains(t, closeErr, "record origins: disk full")
}

func TestListers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newFakeStore()
	listers := recording.NewListers(st)
	line, err := recording.ParseLine([]byte(`{"url": "https://x.org/r", "visit_type": "git", "lister_name": "l", "lister_instance_name": "i"}`))
	require.NoError(t, err)
	o1, err := listers.Origin(ctx, line)
	require.NoError(t, err)
	o2, err := listers.Origin(ctx, line)
	require.NoError(t, err)
	require.Equal(t, st.listers[[2]string{"l", "i"}].ID, o1.ListerID)
	require.Equal(t, o1, o2)
	require.Equal(t, 1, st.creates, "a lister is asked for once")

	id := uuid.New()
	line, err = recording.ParseLine([]byte(`{"url": "https://x.org/r", "visit_type": "git", "lister_id": "` + id.String() + `"}`))
	require.NoError(t, err)
	o, err := listers.Origin(ctx, line)
	require.NoError(t, err)
	require.Equal(t, id, o.ListerID)

	unknown, err := recording.UnknownListers(ctx, st, []uuid.UUID{o1.ListerID, id})
	require.NoError(t, err)
	require.Equal(t, map[uuid.UUID]bool{id: true}, unknown)
}

func TestBatch(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	good, bad := origin(1, 0), origin(2, 0)
	bad.URL = "nope"
	_, err := recording.Batch(context.Background(), st, []revisit.ListedOrigin{good, bad})
	var invalid *recording.InvalidOrigin
	require.ErrorAs(t, err, &invalid)
	require.Equal(t, 1, invalid.Index)
	require.ErrorContains(t, invalid.Err, "url:")
	require.Empty(t, st.origins, "nothing written")

	res, err := recording.Batch(context.Background(), st, []revisit.ListedOrigin{good})
	require.NoError(t, err)
	require.Equal(t, revisit.RecordResult{Inserted: 1}, res)
}
