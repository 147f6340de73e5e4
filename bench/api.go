package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// APITarget is P8's bound on the p99 latency of API reads under
// APIClients concurrent clients (performance.md), with zero errors.
const (
	APITarget  = 50 * time.Millisecond
	APIClients = 200
)

// APIPaths are the reads P8 names: a page of origins, the scheduler
// metrics, the task types; and the queues.
var APIPaths = []string{
	"/api/v1/listed-origins?limit=100",
	"/api/v1/scheduler-metrics",
	"/api/v1/task-types",
	"/api/v1/queues",
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
}

// APIReport is what RunAPI measured, over every path.
type APIReport struct {
	Clients   int           `json:"clients"`
	Requests  int           `json:"requests"`
	Errors    int           `json:"errors"`
	PerSecond float64       `json:"requests_per_s"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	Max       time.Duration `json:"max_ns"`
	// FirstError says what the first error was, if any.
	FirstError string `json:"first_error,omitempty"`
}

// RunAPI has cfg.Clients clients read APIPaths in turn from the server for
// cfg.Duration, and reports the latencies of their requests. An answer
// other than 200, or no answer, is an error.
func RunAPI(ctx context.Context, cfg APIConfig) (APIReport, error) {
	if cfg.Clients <= 0 || cfg.Duration <= 0 {
		return APIReport{}, errors.New("clients and duration must be positive")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: cfg.Clients, MaxIdleConnsPerHost: cfg.Clients}}
	defer hc.CloseIdleConnections()
	base := strings.TrimRight(cfg.Server, "/")
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var (
		mu    sync.Mutex
		times []time.Duration
		rep   = APIReport{Clients: cfg.Clients}
		wg    sync.WaitGroup
	)
	start := time.Now()
	for c := range cfg.Clients {
		wg.Go(func() {
			var mine []time.Duration
			errs, first := 0, ""
			for i := c; ctx.Err() == nil; i++ {
				t0 := time.Now()
				err := get(ctx, hc, base+APIPaths[i%len(APIPaths)], cfg.Token)
				if ctx.Err() != nil {
					break // the run ended during the request: not counted
				}
				mine = append(mine, time.Since(t0))
				if err != nil {
					if errs == 0 {
						first = err.Error()
					}
					errs++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			times = append(times, mine...)
			rep.Errors += errs
			if rep.FirstError == "" {
				rep.FirstError = first
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(times) == 0 {
		return rep, errors.New("no request completed")
	}
	slices.Sort(times)
	rep.Requests = len(times)
	rep.PerSecond = float64(len(times)) / elapsed.Seconds()
	rep.P50, rep.P99, rep.Max = times[len(times)/2], times[min(len(times)-1, len(times)*99/100)], times[len(times)-1]
	return rep, nil
}

// get reads one URL, requiring a 200 answer.
func get(ctx context.Context, hc *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
