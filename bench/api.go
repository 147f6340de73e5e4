package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// APIClients is how many clients P8 reads with; ConsoleClients, P11.
const (
	APIClients     = 200
	ConsoleClients = 20
)

// APIGroup is a set of reads timed together against one p99 target.
type APIGroup struct {
	Name   string
	Target time.Duration
	Paths  []string
}

// APIGroups are P8's reads: a page of origins, the scheduler metrics, the
// task types and the queues, p99 ≤ 50 ms.
func APIGroups() []APIGroup {
	return []APIGroup{{Name: "reads", Target: 50 * time.Millisecond, Paths: []string{
		"/api/v1/listed-origins?limit=100",
		"/api/v1/scheduler-metrics",
		"/api/v1/task-types",
		"/api/v1/queues",
	}}}
}

// ConsoleGroups are P11's reads, each what a console page asks of the
// API: the overview (its summary and the last hour's history, p99 ≤ 100
// ms), an origin's page (p99 ≤ 100 ms), URL searches, by prefix and by
// substring (p99 ≤ 200 ms), and the origins page's views of the first
// origin's visit type, first and second pages (p99 ≤ 100 ms). The origins and the searched texts come from
// the first origins the server lists (at most samples of them): a prefix
// is an origin's URL but its last three characters, a substring its last
// eight.
func ConsoleGroups(ctx context.Context, server, token string, samples int) ([]APIGroup, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	body, err := read(ctx, hc, strings.TrimRight(server, "/")+fmt.Sprintf("/api/v1/listed-origins?limit=%d", samples), token)
	if err != nil {
		return nil, err
	}
	var page struct {
		Origins []struct {
			URL       string `json:"url"`
			VisitType string `json:"visit_type"`
		} `json:"origins"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("listed origins: %w", err)
	}
	if len(page.Origins) == 0 {
		return nil, errors.New("the server lists no origin: load some first (revisit bench store)")
	}
	origin := APIGroup{Name: "origin page", Target: 100 * time.Millisecond}
	search := APIGroup{Name: "URL search", Target: 200 * time.Millisecond}
	for _, o := range page.Origins {
		origin.Paths = append(origin.Paths, "/api/v1/origins/detail?"+url.Values{"url": {o.URL}, "visit_type": {o.VisitType}}.Encode())
		// The origin's URL without its last characters, and its last
		// characters: what an operator looking for a repository types.
		prefix := o.URL[:max(len(o.URL)-3, 1)]
		search.Paths = append(search.Paths, "/api/v1/origins/search?"+url.Values{"q": {prefix}, "match": {"prefix"}, "limit": {"50"}}.Encode())
		if len(o.URL) > 8 {
			part := o.URL[len(o.URL)-8:]
			search.Paths = append(search.Paths, "/api/v1/origins/search?"+url.Values{"q": {part}, "match": {"substring"}, "limit": {"50"}}.Encode())
		}
	}
	overview := APIGroup{Name: "overview", Target: 100 * time.Millisecond,
		Paths: []string{"/api/v1/dashboard", "/api/v1/history?minutes=60"}}
	browse, err := browseGroup(ctx, hc, server, token, page.Origins[0].VisitType)
	if err != nil {
		return nil, err
	}
	return []APIGroup{overview, origin, search, browse}, nil
}

// browseViews are the origins page's views, as queries of
// /api/v1/origins/browse: its tabs, and a filter its index does not hold.
var browseViews = []url.Values{
	{}, {"order": {"desc"}}, {"view": {"failures"}, "order": {"desc"}}, {"enabled": {"false"}},
	{"outcome": {"never"}}, {"outcome": {"not_found"}, "order": {"desc"}},
}

// browseGroup is the origins page's reads of a visit type: the first page
// of each view, and its second, whose token it reads first.
func browseGroup(ctx context.Context, hc *http.Client, server, token, visitType string) (APIGroup, error) {
	g := APIGroup{Name: "origins browse", Target: 100 * time.Millisecond}
	for _, v := range browseViews {
		q := url.Values{"visit_type": {visitType}, "limit": {"50"}}
		for k, vs := range v {
			q[k] = vs
		}
		first := "/api/v1/origins/browse?" + q.Encode()
		g.Paths = append(g.Paths, first)
		body, err := read(ctx, hc, strings.TrimRight(server, "/")+first, token)
		if err != nil {
			return g, err
		}
		var page struct {
			Next string `json:"next_page_token"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return g, fmt.Errorf("browse: %w", err)
		}
		if page.Next != "" {
			q.Set("page_token", page.Next)
			g.Paths = append(g.Paths, "/api/v1/origins/browse?"+q.Encode())
		}
	}
	return g, nil
}

// APIConfig configures RunAPI.
type APIConfig struct {
	// Server is the base URL of a running revisit serve.
	Server string
	// Token is sent as a bearer token when not empty.
	Token string
	// Clients is how many clients read at once, each one request at a
	// time, for Duration.
	Clients  int
	Duration time.Duration
	// Groups are the reads, taken in turn.
	Groups []APIGroup
}

// APIReport is what RunAPI measured, by group.
type APIReport struct {
	Clients   int              `json:"clients"`
	PerSecond float64          `json:"requests_per_s"`
	Groups    []APIGroupReport `json:"groups"`
}

// APIGroupReport is what RunAPI measured of one group's reads.
type APIGroupReport struct {
	Name     string        `json:"name"`
	Target   time.Duration `json:"target_p99_ns"`
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Max      time.Duration `json:"max_ns"`
	// FirstError says what the first error was, if any.
	FirstError string `json:"first_error,omitempty"`
}

// Met reports whether the group met its target: no error, p99 within it.
func (g APIGroupReport) Met() bool { return g.Errors == 0 && g.Requests > 0 && g.P99 <= g.Target }

// RunAPI has cfg.Clients clients read the groups' paths from the server
// for cfg.Duration, each group as often, and reports the latencies of
// their requests by group. An answer other than 200, or no answer, is an error.
func RunAPI(ctx context.Context, cfg APIConfig) (APIReport, error) {
	if cfg.Clients <= 0 || cfg.Duration <= 0 || len(cfg.Groups) == 0 {
		return APIReport{}, errors.New("clients, duration and groups are needed")
	}
	for _, g := range cfg.Groups {
		if len(g.Paths) == 0 {
			return APIReport{}, fmt.Errorf("group %s has no path", g.Name)
		}
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: cfg.Clients, MaxIdleConnsPerHost: cfg.Clients}}
	defer hc.CloseIdleConnections()
	base := strings.TrimRight(cfg.Server, "/")
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var (
		mu    sync.Mutex
		times = make([][]time.Duration, len(cfg.Groups))
		rep   = APIReport{Clients: cfg.Clients, Groups: make([]APIGroupReport, len(cfg.Groups))}
		wg    sync.WaitGroup
	)
	for g, group := range cfg.Groups {
		rep.Groups[g] = APIGroupReport{Name: group.Name, Target: group.Target}
	}
	start := time.Now()
	for c := range cfg.Clients {
		wg.Go(func() {
			// The groups in turn, so that each is read as often, and in
			// each group its paths in turn.
			for i := c * 7919; ctx.Err() == nil; i++ {
				g := i % len(cfg.Groups)
				paths := cfg.Groups[g].Paths
				t0 := time.Now()
				_, err := read(ctx, hc, base+paths[(i/len(cfg.Groups))%len(paths)], cfg.Token)
				if ctx.Err() != nil {
					break // the run ended during the request: not counted
				}
				d := time.Since(t0)
				mu.Lock()
				times[g] = append(times[g], d)
				if r := &rep.Groups[g]; err != nil {
					if r.Errors == 0 {
						r.FirstError = err.Error()
					}
					r.Errors++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for g, ts := range times {
		if len(ts) == 0 {
			continue
		}
		slices.Sort(ts)
		r := &rep.Groups[g]
		r.Requests = len(ts)
		r.P50, r.P99, r.Max = ts[len(ts)/2], ts[min(len(ts)-1, len(ts)*99/100)], ts[len(ts)-1]
		total += len(ts)
	}
	if total == 0 {
		return rep, errors.New("no request completed")
	}
	rep.PerSecond = float64(total) / elapsed.Seconds()
	return rep, nil
}

// read reads one URL, requiring a 200 answer, and returns its body.
func read(ctx context.Context, hc *http.Client, url, token string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}
