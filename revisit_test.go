package revisit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

func TestErrorsMatchByCode(t *testing.T) {
	err := fmt.Errorf("update lister: %w", revisit.Errorf(revisit.CodeStaleData, "lister %s changed", "x"))
	if !errors.Is(err, revisit.ErrStaleData) {
		t.Fatal("wrapped stale-data error does not match ErrStaleData")
	}
	if errors.Is(err, revisit.ErrNotFound) {
		t.Fatal("stale-data error matches ErrNotFound")
	}
	if got := revisit.Code(err); got != revisit.CodeStaleData {
		t.Fatalf("Code = %q", got)
	}
	if got := revisit.Code(errors.New("boom")); got != revisit.CodeInternal {
		t.Fatalf("Code of a plain error = %q", got)
	}
	if got := revisit.Invalidf("url", "missing").Error(); got != "url: missing" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range revisit.Policies {
		if got, err := revisit.ParsePolicy(string(p)); err != nil || got != p {
			t.Fatalf("ParsePolicy(%q) = %q, %v", p, got, err)
		}
	}
	_, err := revisit.ParsePolicy("fastest_first")
	if !errors.Is(err, revisit.ErrUnknownPolicy) || !strings.Contains(err.Error(), "already_visited_order_by_lag") {
		t.Fatalf("unknown policy error %v does not name the known policies", err)
	}
}

func TestGrabParamsValidate(t *testing.T) {
	id := uuid.New()
	good := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst}
	cases := []struct {
		field string
		edit  func(p *revisit.GrabParams)
	}{
		{"visit_type", func(p *revisit.GrabParams) { p.VisitType = "Git Hub" }},
		{"count", func(p *revisit.GrabParams) { p.Count = 0 }},
		{"count", func(p *revisit.GrabParams) { p.Count = -3 }},
		{"count", func(p *revisit.GrabParams) { p.Count = revisit.MaxGrabCount + 1 }},
		{"policy", func(p *revisit.GrabParams) { p.Policy = "nope" }},
		{"sample", func(p *revisit.GrabParams) { p.Sample = 1 }},
		{"sample", func(p *revisit.GrabParams) { p.Sample = -0.5 }},
		{"lister_name", func(p *revisit.GrabParams) { p.ListerInstanceName = "gitlab.com" }},
		{"lister", func(p *revisit.GrabParams) { p.Policy = revisit.FirstVisitsAfterListing }},
		{"cooldowns", func(p *revisit.GrabParams) { p.Cooldowns = &revisit.Cooldowns{Failed: -time.Hour} }},
	}
	for _, c := range cases {
		p := good
		c.edit(&p)
		_, err := p.Validate()
		var e *revisit.Error
		if !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("%+v: error %v, want one naming %q", p, err, c.field)
		}
	}
	c, err := good.Validate()
	if err != nil || c != revisit.DefaultCooldowns() {
		t.Fatalf("good params: %v, cooldowns %+v", err, c)
	}
	good.Policy, good.ListerID = revisit.FirstVisitsAfterListing, &id
	if _, err := good.Validate(); err != nil {
		t.Fatalf("first_visits_after_listing with a lister: %v", err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC) }
	r, _, err := good.Resolve(clock)
	if err != nil || !r.Now.Equal(clock().Truncate(time.Microsecond)) {
		t.Fatalf("Resolve: now %v, %v", r.Now, err)
	}
}

func TestValidateOriginURLAndVisitType(t *testing.T) {
	for _, u := range []string{"https://github.com/a/b", "svn://svn.example.org/repo", "https://pypi.org/project/x/", "file:///srv/git/x"} {
		if err := revisit.ValidateOriginURL(u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
	for _, u := range []string{"", "a\x00b", "https://e.org/\xff", strings.Repeat("x", revisit.MaxURLLength+1)} {
		if err := revisit.ValidateOriginURL(u); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("%.40q: %v, want invalid", u, err)
		}
	}
	// Any other text names an origin, as upstream stores it; revisit's own
	// API and files take absolute URLs only.
	for _, u := range []string{"github.com/a/b", "https://a b", "https://x/\n", "http://[::1", "foo"} {
		if err := revisit.ValidateOriginURL(u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
		if err := revisit.ValidateAbsoluteURL(u); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("%q: %v, want not absolute", u, err)
		}
	}
	for _, vt := range []string{"git", "tarball-directory", "svn-export", "git.checkout_2"} {
		if err := revisit.ValidateVisitType(vt); err != nil {
			t.Errorf("%q: %v", vt, err)
		}
	}
	for _, vt := range []string{"", "Git", "-git", "git lab", strings.Repeat("g", 65)} {
		if err := revisit.ValidateVisitType(vt); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("%q: %v, want invalid", vt, err)
		}
	}
}

func TestTaskTypeVisitTypeAndValidate(t *testing.T) {
	if vt, ok := (revisit.TaskType{Type: "load-git"}).VisitType(); !ok || vt != "git" {
		t.Fatalf("load-git: %q %v", vt, ok)
	}
	if _, ok := (revisit.TaskType{Type: "list-gitlab-full"}).VisitType(); ok {
		t.Fatal("list-gitlab-full has a visit type")
	}
	bad := revisit.TaskType{Type: "load-git", BackendName: "x", MinInterval: 2 * time.Hour, MaxInterval: time.Hour}
	var e *revisit.Error
	if err := bad.Validate(); !errors.As(err, &e) || e.Field != "min_interval" {
		t.Fatalf("min > max: %v", err)
	}
	if err := (revisit.TaskType{Type: "load-git"}).Validate(); !errors.As(err, &e) || e.Field != "backend_name" {
		t.Fatalf("missing backend: %v", err)
	}
}

func TestInputRules(t *testing.T) {
	l := revisit.Limit{Field: "max", Min: 1, Max: 100, Def: 1}
	if n, err := l.Value(nil); n != 1 || err != nil {
		t.Errorf("absent: %d, %v; want the default", n, err)
	}
	zero := 0
	if _, err := l.Value(&zero); err == nil || err.Error() != "max: must be between 1 and 100, not 0" {
		t.Errorf("explicit 0: %v", err)
	}
	if _, err := l.Parse("ten"); err == nil || err.Error() != `max: want an integer between 1 and 100, got "ten"` {
		t.Errorf("not an integer: %v", err)
	}
	if _, err := revisit.ParseSnapshotID("snapshot", "00"); err == nil ||
		err.Error() != `snapshot: want a snapshot id of 40 hex digits (20 bytes), got "00"` {
		t.Errorf("short snapshot: %v", err)
	}
	if id, err := revisit.ParseSnapshotID("snapshot", "0123456789abcdef0123456789abcdef01234567"); err != nil || len(id) != 20 {
		t.Errorf("snapshot id: %x, %v", id, err)
	}
	if err := revisit.ValidateText("name", "caf\xe9"); err == nil || err.Error() != "name: not valid UTF-8" {
		t.Errorf("invalid UTF-8: %v", err)
	}
	deep := map[string]any{}
	for range revisit.MaxExtraLoaderArgumentsDepth - 1 {
		deep = map[string]any{"a": []any{deep}}
	}
	if err := revisit.ValidateExtraLoaderArguments(deep); err == nil {
		t.Error("nesting 63 deep accepted")
	}
	if err := revisit.ValidateExtraLoaderArguments(map[string]any{"k": map[string]any{"\xff": 1}}); err == nil ||
		err.Error() != "extra_loader_arguments.k: a key is not valid UTF-8" {
		t.Errorf("invalid UTF-8 key: %v", err)
	}
}

func TestValidateFirstVisitsQueuePrefix(t *testing.T) {
	p := func(s string) *string { return &s }
	for _, ok := range []*string{nil, p("high"), p("é"), p(strings.Repeat("p", revisit.MaxQueuePrefixLength))} {
		if err := revisit.ValidateFirstVisitsQueuePrefix(ok); err != nil {
			t.Errorf("prefix %v refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("p", revisit.MaxQueuePrefixLength+1), strings.Repeat("é", 128), "a\xff"} {
		err := revisit.ValidateFirstVisitsQueuePrefix(&bad)
		var e *revisit.Error
		if !errors.As(err, &e) || e.Code != revisit.CodeInvalid || e.Field != "first_visits_queue_prefix" {
			t.Errorf("prefix %q: got %v, want an invalid-input error naming first_visits_queue_prefix", bad, err)
		}
	}
}

func TestNamesTimesAndLongValues(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"load-", `type: "load-": a load- task type names a visit type after its prefix, and "" is not one`},
		{"load-git\x00", `type: "load-git\x00" holds a control character (NUL, newline, tab…)`},
		{"list\ngitlab", `type: "list\ngitlab" holds a control character (NUL, newline, tab…)`},
		{" load-git", `type: " load-git" has white space at its start or end`},
		{strings.Repeat("x", 300), "type: 300 bytes long, at most 255"},
	} {
		err := (revisit.TaskType{Type: c.name, BackendName: "q"}).Validate()
		if !errors.Is(err, revisit.ErrInvalid) || err.Error() != c.want {
			t.Errorf("task type %q: %v, want %s", c.name, err, c.want)
		}
	}
	if err := (revisit.TaskType{Type: "load-git", BackendName: "q\n"}).Validate(); err == nil {
		t.Error("a backend name with a newline accepted")
	}
	for _, c := range [][2]string{{"", ""}, {"gitlab ", ""}, {"gitlab", "\x00"}, {"gitlab", strings.Repeat("é", 200)}} {
		if err := revisit.ValidateListerName(c[0], c[1]); !errors.Is(err, revisit.ErrInvalid) {
			t.Errorf("lister %q/%q: %v", c[0], c[1], err)
		}
	}
	if err := revisit.ValidateListerName("gitlab", ""); err != nil {
		t.Errorf("a lister without instance name: %v", err)
	}

	for _, s := range []string{"0000-01-01T00:00:00Z", "9999-12-31T23:00:00-02:00"} {
		if _, err := revisit.ParseTime("last_update", s); !errors.Is(err, revisit.ErrInvalid) ||
			!strings.Contains(err.Error(), "outside years 1 to 9999") {
			t.Errorf("%s: %v", s, err)
		}
	}
	if tm, err := revisit.ParseTime("last_update", "0001-01-01T00:00:00Z"); err != nil || !tm.IsZero() {
		t.Errorf("year 1 is a date: %v, %v", tm, err)
	}

	long := strings.Repeat("a", 100_000)
	for _, err := range []error{revisit.Invalidf("policy", "%q is not a policy", long), func() error {
		_, err := revisit.ParsePolicy(long)
		return err
	}()} {
		if len(err.Error()) > 300 || !strings.Contains(err.Error(), "(100000 bytes)") {
			t.Errorf("an error of %d bytes: %.200s", len(err.Error()), err)
		}
	}
}
