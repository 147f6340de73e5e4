package swhimport

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// Checked is what a verification found in one table.
type Checked struct {
	Table string
	// Source and Target count the rows compared on each side.
	Source, Target int64
	// Differing counts the rows missing on one side or different.
	Differing int64
	// First names the first few differing rows by their key.
	First []string
}

// maxNamed bounds the differing rows a verification names per table.
const maxNamed = 5

// differ records a differing row, named by key.
func (c *Checked) differ(key string) {
	c.Differing++
	if len(c.First) < maxNamed {
		c.First = append(c.First, key)
	}
}

// VerifyTarget is what a verification reads of the store.
type VerifyTarget interface {
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error)
	VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error)
	QueuePositions(ctx context.Context) (map[string]int64, error)
	TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error)
	TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error)
}

// Verify compares the source, table by table, with what the store holds,
// every imported column: the listed origins, tasks and runs in both
// directions (a row on one side only differs), the visit stats of the
// source's origins (the store also keeps stats revisit learned since).
// Runs are those since runsSince (zero: all), as the import copied.
func Verify(ctx context.Context, from string, t VerifyTarget, runsSince time.Time) ([]Checked, error) {
	src, err := connect(ctx, from)
	if err != nil {
		return nil, err
	}
	defer src.close()
	var out []Checked
	for _, check := range []func(context.Context, *source, VerifyTarget) (Checked, error){
		verifyTaskTypes, verifyListers, verifyVisitStats, verifyListedOrigins, verifyQueuePositions, verifyTasks,
		func(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
			return verifyRuns(ctx, s, t, runsSince)
		},
	} {
		c, err := check(ctx, src, t)
		if err != nil {
			return out, fmt.Errorf("verifying %s: %w", c.Table, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// canonical is a row's columns as one comparable text: JSON of the row
// with times in UTC to the microsecond and empty objects as none.
func canonical(v any) string {
	b, err := json.Marshal(normalized(v))
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func normalized(v any) any {
	switch v := v.(type) {
	case revisit.Lister:
		var state any
		_ = json.Unmarshal(v.CurrentState, &state)
		v.CurrentState = nil
		return []any{v.ID, v.Name, v.InstanceName, utc(v.Created), utc(v.Updated), state, utcPtr(v.LastListingFinishedAt),
			v.FirstVisitsQueuePrefix, utcPtr(v.FirstVisitsScheduledAt)}
	case revisit.ListedOrigin:
		if len(v.ExtraLoaderArguments) == 0 {
			v.ExtraLoaderArguments = nil
		}
		v.FirstSeen, v.LastSeen, v.LastUpdate = utc(v.FirstSeen), utc(v.LastSeen), utcPtr(v.LastUpdate)
		return v
	case revisit.VisitStats:
		v.LastSuccessful, v.LastVisit, v.LastScheduled = utcPtr(v.LastSuccessful), utcPtr(v.LastVisit), utcPtr(v.LastScheduled)
		if len(v.LastSnapshot) == 0 {
			v.LastSnapshot = nil
		}
		v.Recent = nil
		return v
	case revisit.Task:
		v.NextRun = utc(v.NextRun)
		if len(v.Arguments.Args) == 0 {
			v.Arguments.Args = nil
		}
		if len(v.Arguments.Kwargs) == 0 {
			v.Arguments.Kwargs = nil
		}
		return v
	case revisit.TaskRun:
		v.Confirmed = nil // revisit's own
		v.Scheduled, v.Started, v.Ended = utcPtr(v.Scheduled), utcPtr(v.Started), utcPtr(v.Ended)
		return v
	}
	return v
}

func utc(t time.Time) time.Time { return revisit.Microsecond(t).UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := utc(*t)
	return &u
}

// compareMaps checks two keyed sets of rows.
func compareMaps[K cmp.Ordered, V any](c *Checked, src, dst map[K]V) {
	c.Source, c.Target = int64(len(src)), int64(len(dst))
	keys := slices.Sorted(maps.Keys(src))
	for k := range dst {
		if _, ok := src[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		s, inSrc := src[k]
		d, inDst := dst[k]
		if !inSrc || !inDst || canonical(s) != canonical(d) {
			c.differ(fmt.Sprint(k))
		}
	}
}

func verifyTaskTypes(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableTaskTypes}
	theirs, err := s.taskTypes(ctx)
	if err != nil {
		return c, err
	}
	ours, err := t.TaskTypeList(ctx)
	if err != nil {
		return c, err
	}
	byName := func(ts []revisit.TaskType) map[string]revisit.TaskType {
		m := map[string]revisit.TaskType{}
		for _, tt := range ts {
			tt.RunTimeout = 0 // revisit's own
			m[tt.Type] = tt
		}
		return m
	}
	compareMaps(&c, byName(theirs), byName(ours))
	return c, nil
}

func verifyListers(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableListers}
	theirs, err := s.listers(ctx)
	if err != nil {
		return c, err
	}
	ours, err := t.ListerList(ctx)
	if err != nil {
		return c, err
	}
	byID := func(ls []revisit.Lister) map[string]revisit.Lister {
		m := map[string]revisit.Lister{}
		for _, l := range ls {
			m[l.ID.String()] = l
		}
		return m
	}
	compareMaps(&c, byID(theirs), byID(ours))
	return c, nil
}

func verifyQueuePositions(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableQueuePositions}
	theirs, err := s.queuePositions(ctx)
	if err != nil {
		return c, err
	}
	ours, err := t.QueuePositions(ctx)
	if err != nil {
		return c, err
	}
	compareMaps(&c, theirs, ours)
	return c, nil
}

// verifyListedOrigins walks both sides in (lister_id, url) order, the
// source's read in one ordered stream in the store's byte order, and
// compares each (lister, URL)'s rows as sets: the visit types of one URL
// may sort differently on the two sides.
func verifyListedOrigins(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableListedOrigins}
	rows := query(ctx, s, scanOrigin, time.Time{}, originColumns+` ORDER BY lister_id, url COLLATE "C"`)
	defer rows.close()
	next := rows.next
	f := revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled, Limit: revisit.PageSize.Max}
	nextOurs := newStream(func() ([]revisit.ListedOrigin, bool, error) {
		page, err := t.ListedOriginsGet(ctx, f)
		f.PageToken = page.NextPageToken
		return page.Origins, page.NextPageToken != "", err
	}).next
	theirs, err := next()
	if err != nil {
		return c, err
	}
	ours, err := nextOurs()
	if err != nil {
		return c, err
	}
	group := func(first *revisit.ListedOrigin, read func() (*revisit.ListedOrigin, error), count *int64) (map[string]string, *revisit.ListedOrigin, error) {
		g := map[string]string{}
		o := first
		for o != nil && o.ListerID == first.ListerID && o.URL == first.URL {
			g[o.VisitType] = canonical(*o)
			*count++
			var err error
			if o, err = read(); err != nil {
				return nil, nil, err
			}
		}
		return g, o, nil
	}
	for theirs != nil || ours != nil {
		order := 0
		switch {
		case theirs == nil:
			order = 1
		case ours == nil:
			order = -1
		default:
			order = cmp.Or(bytes.Compare(theirs.ListerID[:], ours.ListerID[:]), cmp.Compare(theirs.URL, ours.URL))
		}
		var sg, dg map[string]string
		key := ""
		if order <= 0 {
			key = theirs.ListerID.String() + " " + theirs.URL
			if sg, theirs, err = group(theirs, next, &c.Source); err != nil {
				return c, err
			}
		}
		if order >= 0 {
			key = ours.ListerID.String() + " " + ours.URL
			if dg, ours, err = group(ours, nextOurs, &c.Target); err != nil {
				return c, err
			}
		}
		if !maps.Equal(sg, dg) {
			c.differ(key)
		}
	}
	return c, nil
}

func scanOrigin(row pgx.Row) (revisit.ListedOrigin, error) {
	var (
		o     revisit.ListedOrigin
		extra string
	)
	if err := row.Scan(&o.ListerID, &o.URL, &o.VisitType, &extra, &o.Enabled, &o.FirstSeen, &o.LastSeen,
		&o.LastUpdate, &o.IsFork, &o.ForkedFromURL); err != nil {
		return o, err
	}
	return o, json.Unmarshal([]byte(extra), &o.ExtraLoaderArguments)
}

// verifyVisitStats reads the source's stats in one stream, and the
// store's of the same origins a batch at a time.
func verifyVisitStats(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableVisitStats}
	rows := s.visitStats(ctx, nil, time.Time{})
	defer rows.close()
	for {
		theirs, err := rows.batch(DefaultBatch)
		if err != nil || len(theirs) == 0 {
			return c, err
		}
		keys := make([]revisit.OriginKey, len(theirs))
		for i, st := range theirs {
			keys[i] = st.Key()
		}
		ours, err := t.VisitStatsGet(ctx, keys)
		if err != nil {
			return c, err
		}
		byKey := make(map[revisit.OriginKey]revisit.VisitStats, len(ours))
		for _, st := range ours {
			byKey[st.Key()] = st
		}
		c.Source += int64(len(theirs))
		c.Target += int64(len(ours))
		for _, st := range theirs {
			if o, ok := byKey[st.Key()]; !ok || canonical(st) != canonical(o) {
				c.differ(st.URL + " " + st.VisitType)
			}
		}
	}
}

// stream reads rows a batch at a time: fill returns the next batch and
// whether more may follow.
type stream[T any] struct {
	buf  []T
	more bool
	fill func() ([]T, bool, error)
}

func newStream[T any](fill func() ([]T, bool, error)) *stream[T] {
	return &stream[T]{more: true, fill: fill}
}

// next returns the next row, nil at the end.
func (s *stream[T]) next() (*T, error) {
	for len(s.buf) == 0 && s.more {
		var err error
		if s.buf, s.more, err = s.fill(); err != nil {
			return nil, err
		}
	}
	if len(s.buf) == 0 {
		return nil, nil
	}
	row := s.buf[0]
	s.buf = s.buf[1:]
	return &row, nil
}

// verifyTasks walks both sides by id.
func verifyTasks(ctx context.Context, s *source, t VerifyTarget) (Checked, error) {
	c := Checked{Table: TableTasks}
	theirs := s.tasks(ctx, 0, time.Time{}, 0)
	defer theirs.close()
	f := revisit.TaskFilter{Limit: DefaultBatch}
	ours := newStream(func() ([]revisit.Task, bool, error) {
		page, err := t.TasksGet(ctx, f)
		f.PageToken = page.NextPageToken
		return page.Tasks, page.NextPageToken != "", err
	})
	a, err := theirs.next()
	if err != nil {
		return c, err
	}
	b, err := ours.next()
	for err == nil && (a != nil || b != nil) {
		switch {
		case b == nil || (a != nil && a.ID < b.ID):
			c.Source++
			c.differ(fmt.Sprint(a.ID))
			a, err = theirs.next()
		case a == nil || b.ID < a.ID:
			c.Target++
			c.differ(fmt.Sprint(b.ID))
			b, err = ours.next()
		default:
			c.Source++
			c.Target++
			if canonical(*a) != canonical(*b) {
				c.differ(fmt.Sprint(a.ID))
			}
			if a, err = theirs.next(); err == nil {
				b, err = ours.next()
			}
		}
	}
	return c, err
}

// verifyRuns compares, a batch of the store's tasks at a time, their runs
// on both sides.
func verifyRuns(ctx context.Context, s *source, t VerifyTarget, since time.Time) (Checked, error) {
	c := Checked{Table: TableTaskRuns}
	f := revisit.TaskFilter{Limit: DefaultBatch}
	for {
		page, err := t.TasksGet(ctx, f)
		if err != nil {
			return c, err
		}
		ids := make([]int64, len(page.Tasks))
		for i, tk := range page.Tasks {
			ids[i] = tk.ID
		}
		theirs, err := s.runsOf(ctx, ids, since)
		if err != nil {
			return c, err
		}
		ours, err := t.TaskRunsGet(ctx, ids)
		if err != nil {
			return c, err
		}
		src, dst := map[int64]revisit.TaskRun{}, map[int64]revisit.TaskRun{}
		for _, r := range theirs {
			src[r.ID] = r
		}
		for _, r := range ours {
			if since.IsZero() || !runTime(r).Before(since) {
				dst[r.ID] = r
			}
		}
		part := Checked{}
		compareMaps(&part, src, dst)
		c.Source, c.Target, c.Differing = c.Source+part.Source, c.Target+part.Target, c.Differing+part.Differing
		for _, k := range part.First {
			if len(c.First) < maxNamed {
				c.First = append(c.First, k)
			}
		}
		if page.NextPageToken == "" {
			return c, nil
		}
		f.PageToken = page.NextPageToken
	}
}

// runTime is the time --runs-since compares: the start, else the
// schedule, else the end.
func runTime(r revisit.TaskRun) time.Time {
	for _, t := range []*time.Time{r.Started, r.Scheduled, r.Ended} {
		if t != nil {
			return *t
		}
	}
	return time.Time{}
}
