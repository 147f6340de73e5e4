package storetest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func exerciseOrigins(t *testing.T, newStore NewStore) {
	parallel(t, "ListedOrigins/InsertThenRerecord", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		t1 := base.Add(1500 * time.Nanosecond)
		f.clock.Set(t1)

		// v1: optional fields unknown, nil extra arguments.
		v1 := origin(l.ID, "a", "git")
		v1.ExtraLoaderArguments = nil
		r := f.record(v1)
		require.Equal(t, revisit.RecordResult{Inserted: 1}, r)
		got := f.get(l.ID, "a", "git")
		requireTime(t, t1, got.FirstSeen, "insert: first_seen = now")
		requireTime(t, t1, got.LastSeen, "insert: last_seen = now")
		require.True(t, got.Enabled)
		require.NotNil(t, got.ExtraLoaderArguments, "never nil when read")
		require.Empty(t, got.ExtraLoaderArguments)
		require.Nil(t, got.LastUpdate)
		require.Nil(t, got.IsFork)
		require.Nil(t, got.ForkedFromURL)

		// v2: every field set.
		t2 := t1.Add(time.Hour)
		f.clock.Set(t2)
		v2 := origin(l.ID, "a", "git")
		v2.Enabled = false
		v2.ExtraLoaderArguments = map[string]any{"branch": "main", "opts": map[string]any{"deep": true}}
		v2.LastUpdate = atp(-day + 3500*time.Nanosecond)
		v2.IsFork = bp(true)
		v2.ForkedFromURL = sp(url("upstream"))
		r = f.record(v2)
		require.Equal(t, revisit.RecordResult{Updated: 1}, r)
		got = f.get(l.ID, "a", "git")
		requireTime(t, t1, got.FirstSeen, "update keeps first_seen")
		requireTime(t, t2, got.LastSeen, "update moves last_seen")
		require.False(t, got.Enabled)
		require.Equal(t, v2.ExtraLoaderArguments, got.ExtraLoaderArguments)
		requireTimePtr(t, v2.LastUpdate, got.LastUpdate)
		require.Equal(t, bp(true), got.IsFork)
		require.Equal(t, sp(url("upstream")), got.ForkedFromURL)

		// v3: back to unknown, and a fork flag false (not the same as nil).
		t3 := t2.Add(time.Hour)
		f.clock.Set(t3)
		v3 := origin(l.ID, "a", "git")
		v3.IsFork = bp(false)
		r = f.record(v3)
		require.Equal(t, revisit.RecordResult{Updated: 1}, r)
		got = f.get(l.ID, "a", "git")
		requireTime(t, t1, got.FirstSeen)
		requireTime(t, t3, got.LastSeen)
		require.True(t, got.Enabled)
		require.Empty(t, got.ExtraLoaderArguments, "extra arguments overwritten by {}")
		require.NotNil(t, got.ExtraLoaderArguments)
		require.Nil(t, got.LastUpdate, "last_update overwritten by nil")
		require.Equal(t, bp(false), got.IsFork)
		require.Nil(t, got.ForkedFromURL, "forked_from_url overwritten by nil")

		// v4: is_fork back to nil.
		f.record(origin(l.ID, "a", "git"))
		require.Nil(t, f.get(l.ID, "a", "git").IsFork)
	})

	// Each row of a page, and of a grab, has fields of its own: a store
	// reading nullable columns through one holder must not hand every row
	// the same value.
	parallel(t, "ListedOrigins/RowsOfAPageKeepTheirOwnFields", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.clock.Set(at(-2 * day))
		forks := []struct {
			isFork *bool
			from   *string
		}{{bp(true), sp(url("up-a"))}, {nil, nil}, {bp(false), sp(url("up-c"))}, {bp(true), nil}}
		var batch []revisit.ListedOrigin
		for i, fk := range forks {
			o := origin(l.ID, string(rune('a'+i)), "git")
			o.IsFork, o.ForkedFromURL = fk.isFork, fk.from
			batch = append(batch, o)
		}
		f.record(batch...)
		page, err := f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
		require.NoError(t, err)
		got := f.grab(revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: base})
		for _, rows := range [][]revisit.ListedOrigin{page.Origins, got} {
			require.Len(t, rows, len(forks))
			for _, o := range rows {
				fk := forks[strings.TrimPrefix(o.URL, url(""))[0]-'a']
				require.Equal(t, fk.isFork, o.IsFork, o.URL)
				require.Equal(t, fk.from, o.ForkedFromURL, o.URL)
			}
		}
	})

	parallel(t, "ListedOrigins/DuplicatesInBatchLastWins", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		first := origin(l.ID, "a", "git")
		first.ExtraLoaderArguments = map[string]any{"n": "first"}
		first.LastUpdate = atp(-2 * day)
		last := origin(l.ID, "a", "git")
		last.Enabled = false
		last.ExtraLoaderArguments = map[string]any{"n": "last"}
		r := f.record(first, origin(l.ID, "b", "git"), last)
		require.Equal(t, revisit.RecordResult{Inserted: 2}, r, "a duplicate inside a batch counts once")
		got := f.get(l.ID, "a", "git")
		require.False(t, got.Enabled)
		require.Equal(t, map[string]any{"n": "last"}, got.ExtraLoaderArguments)
		require.Nil(t, got.LastUpdate, "the last duplicate wins whole")

		f.clock.Advance(time.Hour)
		r = f.record(last, first, origin(l.ID, "c", "git"))
		require.Equal(t, revisit.RecordResult{Inserted: 1, Updated: 1}, r)
		got = f.get(l.ID, "a", "git")
		require.True(t, got.Enabled)
		require.Equal(t, map[string]any{"n": "first"}, got.ExtraLoaderArguments)
		requireTimePtr(t, first.LastUpdate, got.LastUpdate)
		require.Len(t, f.all(revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled}), 3)
	})

	parallel(t, "ListedOrigins/RecordCounts", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		r := f.record(origin(l.ID, "a", "git"), origin(l.ID, "b", "git"))
		require.Equal(t, revisit.RecordResult{Inserted: 2}, r)
		r = f.record(origin(l.ID, "a", "git"), origin(l.ID, "b", "git"), origin(l.ID, "c", "git"),
			origin(l.ID, "d", "git"), origin(l.ID, "a", "hg"))
		require.Equal(t, revisit.RecordResult{Inserted: 3, Updated: 2}, r)
		r = f.record(origin(l.ID, "a", "git"))
		require.Equal(t, revisit.RecordResult{Updated: 1}, r, "an unchanged origin is still updated (last_seen)")
		r, err := f.s.ListedOriginsRecord(f.ctx, nil)
		require.NoError(t, err, "an empty batch is fine")
		require.Equal(t, revisit.RecordResult{}, r)
	})

	parallel(t, "ListedOrigins/DistinctRows", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		oa := origin(a.ID, "x", "git")
		oa.ExtraLoaderArguments = map[string]any{"who": "a-git"}
		oh := origin(a.ID, "x", "hg")
		oh.ExtraLoaderArguments = map[string]any{"who": "a-hg"}
		ob := origin(b.ID, "x", "git")
		ob.ExtraLoaderArguments = map[string]any{"who": "b-git"}
		ob.Enabled = false
		r := f.record(oa, oh, ob)
		require.Equal(t, revisit.RecordResult{Inserted: 3}, r)
		require.Equal(t, "a-git", f.get(a.ID, "x", "git").ExtraLoaderArguments["who"])
		require.Equal(t, "a-hg", f.get(a.ID, "x", "hg").ExtraLoaderArguments["who"])
		require.Equal(t, "b-git", f.get(b.ID, "x", "git").ExtraLoaderArguments["who"])
		require.True(t, f.get(a.ID, "x", "git").Enabled, "rows of other listers are independent")
	})

	parallel(t, "ListedOrigins/InvalidBatchWritesNothing", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "existing", "git"))
		before := f.get(l.ID, "existing", "git")

		// Each spoiled field, by what spoils it.
		bad := map[string]struct {
			field string
			spoil func(o *revisit.ListedOrigin)
		}{
			"url with NUL":        {"url", func(o *revisit.ListedOrigin) { o.URL = "a\x00b" }},
			"url empty":           {"url", func(o *revisit.ListedOrigin) { o.URL = "" }},
			"url too long":        {"url", func(o *revisit.ListedOrigin) { o.URL = url(strings.Repeat("x", revisit.MaxURLLength)) }},
			"visit type":          {"visit_type", func(o *revisit.ListedOrigin) { o.VisitType = "Git!" }},
			"visit type empty":    {"visit_type", func(o *revisit.ListedOrigin) { o.VisitType = "" }},
			"unknown lister":      {"lister_id", func(o *revisit.ListedOrigin) { o.ListerID = uuid.New() }},
			"nil lister":          {"lister_id", func(o *revisit.ListedOrigin) { o.ListerID = uuid.Nil }},
			"forked_from_url bad": {"forked_from_url", func(o *revisit.ListedOrigin) { o.ForkedFromURL = sp("") }},
			"url invalid UTF-8":   {"url", func(o *revisit.ListedOrigin) { o.URL = "https://e.org/\xff\xfe" }},
			"forked_from_url invalid UTF-8": {"forked_from_url", func(o *revisit.ListedOrigin) {
				o.ForkedFromURL = sp("https://e.org/\xff\xfe")
			}},
			"extra arguments too deep": {"extra_loader_arguments" + strings.Repeat(".a", revisit.MaxExtraLoaderArgumentsDepth), func(o *revisit.ListedOrigin) {
				o.ExtraLoaderArguments = nested(revisit.MaxExtraLoaderArgumentsDepth + 1)
			}},
			"extra arguments too large": {"extra_loader_arguments", func(o *revisit.ListedOrigin) {
				o.ExtraLoaderArguments = map[string]any{"a": strings.Repeat("x", revisit.MaxExtraLoaderArgumentsBytes)}
			}},
			"extra arguments invalid UTF-8": {"extra_loader_arguments.a[1]", func(o *revisit.ListedOrigin) {
				o.ExtraLoaderArguments = map[string]any{"a": []any{"ok", "\xff"}}
			}},
		}
		f.clock.Advance(time.Hour)
		for what, c := range bad {
			for pos := range 3 {
				batch := []revisit.ListedOrigin{origin(l.ID, "new1", "git"), origin(l.ID, "existing", "git"), origin(l.ID, "new2", "git")}
				batch[1].Enabled = false
				c.spoil(&batch[pos])
				_, err := f.s.ListedOriginsRecord(f.ctx, batch)
				requireInvalid(t, err, fmt.Sprintf("origins[%d].%s", pos, c.field), "%s at %d", what, pos)
			}
		}
		all := f.all(revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled})
		require.Len(t, all, 1, "nothing of the invalid batches was written")
		after := f.get(l.ID, "existing", "git")
		require.True(t, after.Enabled, "the existing row was not updated")
		requireTime(t, before.LastSeen, after.LastSeen)

		deepest := origin(l.ID, "deepest", "git")
		deepest.ExtraLoaderArguments = nested(revisit.MaxExtraLoaderArgumentsDepth)
		f.record(deepest)
		require.Equal(t, deepest.ExtraLoaderArguments, f.get(l.ID, "deepest", "git").ExtraLoaderArguments,
			"extra loader arguments as deep as allowed are kept whole")
	})

	parallel(t, "ListedOrigins/Pagination", func(t *testing.T) {
		f := newFixture(t, newStore)
		want := paginationFixture(f)
		for _, size := range []int{1, 2, 3, 5, 7, 10, 11} {
			t.Run(fmt.Sprint(size), func(t *testing.T) {
				flt := revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled, Limit: size}
				var got []revisit.ListedOrigin
				for page := 0; ; page++ {
					require.Less(t, page, len(want)+1, "too many pages")
					p, err := f.s.ListedOriginsGet(f.ctx, flt)
					require.NoError(t, err)
					got = append(got, p.Origins...)
					if len(got) < len(want) {
						require.Len(t, p.Origins, size, "page %d is full", page)
						require.NotEmpty(t, p.NextPageToken, "page %d: a row follows", page)
						flt.PageToken = p.NextPageToken
						continue
					}
					require.NotEmpty(t, p.Origins, "no trailing empty page")
					require.Empty(t, p.NextPageToken, "no row follows page %d", page)
					break
				}
				require.Equal(t, keys(want), keys(got), "every row once, in (lister_id, url, visit_type) order")
			})
		}
		t.Run("default limit", func(t *testing.T) {
			p, err := f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled})
			require.NoError(t, err)
			require.Equal(t, keys(want), keys(p.Origins))
			require.Empty(t, p.NextPageToken)
		})
	})

	parallel(t, "ListedOrigins/Filters", func(t *testing.T) {
		f := newFixture(t, newStore)
		want := paginationFixture(f)
		lo := want[0].ListerID
		hi := want[len(want)-1].ListerID
		sel := func(keep func(o revisit.ListedOrigin) bool) []okey {
			var out []okey
			for _, o := range want {
				if keep(o) {
					out = append(out, keyOf(o))
				}
			}
			return out
		}
		check := func(name string, flt revisit.ListedOriginFilter, keep func(o revisit.ListedOrigin) bool) {
			t.Helper()
			exp := sel(keep)
			require.NotEmpty(t, exp, name)
			require.Equal(t, exp, keys(f.all(flt)), name)
			flt.Limit = 2
			require.Equal(t, exp, keys(f.all(flt)), name+", pages of 2")
		}
		check("enabled by default", revisit.ListedOriginFilter{},
			func(o revisit.ListedOrigin) bool { return o.Enabled })
		check("disabled", revisit.ListedOriginFilter{Enabled: revisit.OnlyDisabled},
			func(o revisit.ListedOrigin) bool { return !o.Enabled })
		check("lister", revisit.ListedOriginFilter{ListerID: &lo, Enabled: revisit.AnyEnabled},
			func(o revisit.ListedOrigin) bool { return o.ListerID == lo })
		check("other lister, enabled", revisit.ListedOriginFilter{ListerID: &hi},
			func(o revisit.ListedOrigin) bool { return o.ListerID == hi && o.Enabled })
		check("urls", revisit.ListedOriginFilter{URLs: []string{url("u1"), url("u3")}, Enabled: revisit.AnyEnabled},
			func(o revisit.ListedOrigin) bool { return o.URL == url("u1") || o.URL == url("u3") })
		check("one url", revisit.ListedOriginFilter{URLs: []string{url("u2")}, Enabled: revisit.AnyEnabled},
			func(o revisit.ListedOrigin) bool { return o.URL == url("u2") })
		check("visit type", revisit.ListedOriginFilter{VisitType: "git", Enabled: revisit.AnyEnabled},
			func(o revisit.ListedOrigin) bool { return o.VisitType == "git" })
		check("lister, url, visit type, enabled",
			revisit.ListedOriginFilter{ListerID: &lo, URLs: []string{url("u1")}, VisitType: "hg"},
			func(o revisit.ListedOrigin) bool {
				return o.ListerID == lo && o.URL == url("u1") && o.VisitType == "hg" && o.Enabled
			})
		none := uuid.New()
		require.Empty(t, f.all(revisit.ListedOriginFilter{ListerID: &none, Enabled: revisit.AnyEnabled}))
		require.Empty(t, f.all(revisit.ListedOriginFilter{URLs: []string{url("zz")}, Enabled: revisit.AnyEnabled}))
		require.Empty(t, f.all(revisit.ListedOriginFilter{VisitType: "bzr", Enabled: revisit.AnyEnabled}))
	})

	// The Software Heritage RPC's page token, [lister_id, url], resumes
	// after every row of that lister and URL, whatever their visit types.
	parallel(t, "ListedOrigins/AfterListerURL", func(t *testing.T) {
		f := newFixture(t, newStore)
		want := paginationFixture(f)
		after := func(from revisit.ListerURL, o revisit.ListedOrigin) bool {
			if c := bytes.Compare(o.ListerID[:], from.ListerID[:]); c != 0 {
				return c > 0
			}
			return o.URL > from.URL
		}
		// walk reads every page from after, the next pages by page token.
		walk := func(flt revisit.ListedOriginFilter, from revisit.ListerURL) []okey {
			t.Helper()
			flt.AfterListerURL = &from
			var got []okey
			for page := 0; ; page++ {
				require.Less(t, page, len(want)+1, "too many pages")
				p, err := f.s.ListedOriginsGet(f.ctx, flt)
				require.NoError(t, err)
				got = append(got, keys(p.Origins)...)
				if p.NextPageToken == "" {
					return got
				}
				flt.AfterListerURL, flt.PageToken = nil, p.NextPageToken
			}
		}
		starts := []revisit.ListerURL{{ListerID: uuid.Nil, URL: ""}, {ListerID: want[0].ListerID, URL: url("u1x")},
			{ListerID: want[len(want)-1].ListerID, URL: url("zz")}}
		for _, o := range want {
			starts = append(starts, revisit.ListerURL{ListerID: o.ListerID, URL: o.URL})
		}
		for _, from := range starts {
			for _, flt := range []revisit.ListedOriginFilter{{Enabled: revisit.AnyEnabled},
				{Enabled: revisit.AnyEnabled, Limit: 2}, {VisitType: "git", Limit: 1}} {
				var exp []okey
				for _, o := range want {
					if after(from, o) && (flt.VisitType == "" || o.VisitType == flt.VisitType) &&
						(flt.Enabled == revisit.AnyEnabled || o.Enabled) {
						exp = append(exp, keyOf(o))
					}
				}
				require.Equal(t, exp, walk(flt, from), "after %s %s, %+v", from.ListerID, from.URL, flt)
			}
		}

		first, err := f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled, Limit: 1})
		require.NoError(t, err)
		_, err = f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled,
			PageToken: first.NextPageToken, AfterListerURL: &revisit.ListerURL{ListerID: want[0].ListerID, URL: want[0].URL}})
		requireInvalid(t, err, "page_token")
		_, err = f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{
			AfterListerURL: &revisit.ListerURL{ListerID: want[0].ListerID, URL: "https://e.org/\xff"}})
		requireInvalid(t, err, "page_token")
	})

	parallel(t, "ListedOrigins/GarbagePageToken", func(t *testing.T) {
		f := newFixture(t, newStore)
		paginationFixture(f)
		for _, tok := range []string{"garbage", "%%%", "eyJmb28iOiAiYmFyIn0", "AAAA"} {
			_, err := f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{PageToken: tok, Enabled: revisit.AnyEnabled})
			requireInvalid(t, err, "page_token", "token %q", tok)
		}
	})

	parallel(t, "ListedOrigins/ListerVisitTypes", func(t *testing.T) {
		f := newFixture(t, newStore)
		want := paginationFixture(f)
		lo := want[0].ListerID
		hi := want[len(want)-1].ListerID
		vts, err := f.s.ListerVisitTypes(f.ctx, lo)
		require.NoError(t, err)
		require.Equal(t, []string{"git", "hg", "svn"}, vts)
		vts, err = f.s.ListerVisitTypes(f.ctx, hi)
		require.NoError(t, err)
		require.Equal(t, []string{"cvs", "git", "hg"}, vts)
		vts, err = f.s.ListerVisitTypes(f.ctx, f.lister("empty", "").ID)
		require.NoError(t, err)
		require.Empty(t, vts)
	})
}

// paginationFixture records, in a scrambled order, rows whose keys share
// lister and url but differ by visit type, and share urls across the two
// listers; some are disabled. It returns them in key order.
// nested returns extra loader arguments nesting depth objects:
// {"a": {"a": … {}}}.
func nested(depth int) map[string]any {
	m := map[string]any{}
	for range depth - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

func paginationFixture(f *fixture) []revisit.ListedOrigin {
	f.t.Helper()
	a := f.lister("gitlab", "gitlab.com")
	b := f.lister("gitlab", "framagit.org")
	lo, hi := a, b
	if originLess(origin(b.ID, "u", "git"), origin(a.ID, "u", "git")) {
		lo, hi = b, a
	}
	type spec struct {
		l        revisit.Lister
		name, vt string
		disabled bool
	}
	specs := []spec{
		{hi, "u3", "git", false}, {lo, "u1", "svn", false}, {hi, "u1", "git", true},
		{lo, "u2", "git", false}, {hi, "u2", "hg", false}, {lo, "u1", "git", false},
		{hi, "u3", "cvs", false}, {lo, "u3", "hg", true}, {lo, "u1", "hg", false},
		{hi, "u2", "git", false},
	}
	var all []revisit.ListedOrigin
	for i, s := range specs {
		o := origin(s.l.ID, s.name, s.vt)
		o.Enabled = !s.disabled
		all = append(all, o)
		if i%3 == 2 {
			f.record(all[i-2 : i+1]...)
		}
	}
	f.record(all[9])
	sortOrigins(all)
	return all
}
