package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhrpc"
	"github.com/revisit-sched/revisit/swhwire"
)

// P9's targets (performance.md): recording through the Software Heritage
// RPC at RPCRecordRatio of the direct store path or better, and a grab of
// 1000 over the RPC at RPCGrabTarget p50 or less.
const (
	RPCRecordRatio = 0.80
	RPCGrabTarget  = 15 * time.Millisecond
)

// RPCConfig configures RunRPC.
type RPCConfig struct {
	URL     string
	Origins int
	// RecordBatches is how many batches of 1000 (half new, half updates)
	// each path records.
	RecordBatches int
	// Grabs is how many grabs of 1000 each path makes per policy.
	Grabs int
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// RPCReport is what RunRPC measured: each figure through the RPC (a
// loopback HTTP server, msgpack both ways; the client's decoding of the
// answers left out, as it is the client's own) and
// directly on the store, on the same store in the same run.
type RPCReport struct {
	URL     string `json:"store"`
	Origins int    `json:"origins"`
	// RecordRPC and RecordDirect are origins/s recorded in batches of 1000.
	RecordRPC    float64 `json:"record_rpc_origins_per_s"`
	RecordDirect float64 `json:"record_direct_origins_per_s"`
	// GrabsRPC and GrabsDirect are the grabs of 1000 of every policy of
	// the git visit type, in the orchestrator's steady state (Visited).
	GrabsRPC    []Latency `json:"grab_rpc"`
	GrabsDirect []Latency `json:"grab_direct"`
}

// RecordRatio is the RPC's recording rate over the direct path's.
func (r RPCReport) RecordRatio() float64 {
	if r.RecordDirect == 0 {
		return 0
	}
	return r.RecordRPC / r.RecordDirect
}

// RunRPC loads the reference data set into the store at cfg.URL (unless a
// previous run left it there), serves the Software Heritage RPC over it on
// a loopback port, and measures P9: recording batches of 1000 through
// origins/record against ListedOriginsRecord, batch by batch in turn, and
// grabs of 1000 through origins/grab_next against GrabNextVisits.
func RunRPC(ctx context.Context, cfg RPCConfig) (RPCReport, error) {
	rep := RPCReport{URL: store.Redact(cfg.URL), Origins: cfg.Origins}
	if cfg.RecordBatches < 1 || cfg.Grabs < 1 {
		return rep, revisit.Invalidf("record-batches", "record batches and grabs must be at least 1")
	}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return rep, err
	}
	srv := &http.Server{Handler: swhrpc.New(swhrpc.Config{Store: se.Store, Clock: se.clk.Now})}
	go srv.Serve(ln)
	defer srv.Close()
	c := &rpcClient{base: "http://" + ln.Addr().String() + "/", hc: &http.Client{Timeout: time.Minute}}

	progress(cfg.Progress, "record %d batches of 1000 through the RPC and as many directly, in turn", cfg.RecordBatches)
	if rep.RecordRPC, rep.RecordDirect, err = timeRecordRPC(ctx, se, c, cfg.RecordBatches); err != nil {
		return rep, err
	}
	for _, gc := range grabCases(se.a) {
		if gc.visitType != "git" {
			continue
		}
		progress(cfg.Progress, "grab %s", gc.name)
		direct, err := timeGrabs(ctx, se.Store, gc, se.now, cfg.Grabs, 1000, Visited)
		if err != nil {
			return rep, err
		}
		remote, err := timeGrabsWith(ctx, se.Store, c.grab, gc, se.now, cfg.Grabs, 1000, Visited)
		if err != nil {
			return rep, err
		}
		rep.GrabsDirect = append(rep.GrabsDirect, direct)
		rep.GrabsRPC = append(rep.GrabsRPC, remote)
	}
	return rep, nil
}

// timeRecordRPC records batches of 1000 alternately through the RPC and
// directly, so that both meet the same store as it grows, and returns
// both rates in origins/s. The RPC's time includes the client's encoding
// of the request, not its decoding of the answer.
func timeRecordRPC(ctx context.Context, se *session, c *rpcClient, batches int) (remote, direct float64, err error) {
	viaRPC := recordBatches(se.ds, se.a.ID, se.b.ID, batches)
	viaStore := recordBatches(se.ds, se.a.ID, se.b.ID, batches)
	var tRPC, tStore time.Duration
	for k := range batches {
		b := viaStore[k*1000 : (k+1)*1000]
		start := time.Now()
		if _, err := se.ListedOriginsRecord(ctx, b); err != nil {
			return 0, 0, err
		}
		tStore += time.Since(start)
		b = viaRPC[k*1000 : (k+1)*1000]
		start = time.Now()
		got, decoding, err := c.record(ctx, b)
		if err != nil {
			return 0, 0, err
		}
		tRPC += time.Since(start) - decoding
		keys := map[[3]string]bool{}
		for _, o := range b {
			keys[[3]string{o.ListerID.String(), o.URL, o.VisitType}] = true
		}
		if got != len(keys) {
			return 0, 0, fmt.Errorf("origins/record returned %d origins for a batch of %d distinct origins", got, len(keys))
		}
	}
	n := float64(batches * 1000)
	return n / tRPC.Seconds(), n / tStore.Seconds(), nil
}

// rpcClient calls the RPC as the Python RemoteScheduler does: every
// parameter sent, msgpack both ways.
type rpcClient struct {
	base string
	hc   *http.Client
}

// call posts params to path and returns the decoded answer, and how long
// decoding it took.
func (c *rpcClient) call(ctx context.Context, path string, params swhwire.Map) (any, time.Duration, error) {
	body, err := swhwire.Encode(params)
	if err != nil {
		return nil, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/x-msgpack")
	req.Header.Set("Accept", "application/x-msgpack")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	v, err := swhwire.Decode(raw)
	decoding := time.Since(start)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		if e, perr := swhwire.ParseException(v); perr == nil {
			return nil, 0, fmt.Errorf("%s: %d %s: %s", path, resp.StatusCode, e.Type, e.Message)
		}
		return nil, 0, fmt.Errorf("%s: %s", path, resp.Status)
	}
	return v, decoding, nil
}

// record sends origins/record and returns how many origins came back, and
// how long decoding them took.
func (c *rpcClient) record(ctx context.Context, origins []revisit.ListedOrigin) (int, time.Duration, error) {
	models := make([]any, len(origins))
	for i, o := range origins {
		models[i] = listedOriginRequest(o)
	}
	v, decoding, err := c.call(ctx, "origins/record", swhwire.Map{{Key: "listed_origins", Value: models}})
	if err != nil {
		return 0, 0, err
	}
	got, ok := v.([]any)
	if !ok {
		return 0, 0, errors.New("origins/record: the answer is not a list")
	}
	return len(got), decoding, nil
}

// grab sends origins/grab_next with every parameter, as the client does,
// and returns the origins and how long decoding them took: the time of a
// client, which the Python client spends its own way.
func (c *rpcClient) grab(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, time.Duration, error) {
	cd := revisit.DefaultCooldowns()
	var lister any
	if p.ListerID != nil {
		lister = p.ListerID.String()
	}
	v, decoding, err := c.call(ctx, "origins/grab_next", swhwire.Map{
		{Key: "visit_type", Value: p.VisitType}, {Key: "count", Value: p.Count},
		{Key: "policy", Value: string(p.Policy)}, {Key: "enabled", Value: true},
		{Key: "lister_uuid", Value: lister}, {Key: "lister_name", Value: nil},
		{Key: "lister_instance_name", Value: nil}, {Key: "timestamp", Value: p.Now},
		{Key: "absolute_cooldown", Value: swhwire.NewTimedelta(cd.Absolute)},
		{Key: "scheduled_cooldown", Value: swhwire.NewTimedelta(cd.Scheduled)},
		{Key: "failed_cooldown", Value: swhwire.NewTimedelta(cd.Failed)},
		{Key: "not_found_cooldown", Value: swhwire.NewTimedelta(cd.NotFound)},
		{Key: "tablesample", Value: nil}, {Key: "dry_run", Value: p.DryRun},
	})
	if err != nil {
		return nil, 0, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, 0, errors.New("origins/grab_next: the answer is not a list")
	}
	origins := make([]revisit.ListedOrigin, 0, len(list))
	for i, e := range list {
		m, ok := e.(swhwire.Model)
		if !ok || m.Type != "ListedOrigin" {
			return nil, 0, fmt.Errorf("origins/grab_next: answer[%d] is not a ListedOrigin", i)
		}
		url, _ := m.Fields.Get("url")
		vt, _ := m.Fields.Get("visit_type")
		u, _ := url.(string)
		t, _ := vt.(string)
		origins = append(origins, revisit.ListedOrigin{URL: u, VisitType: t})
	}
	return origins, decoding, nil
}

// listedOriginRequest is o as the Python client sends a ListedOrigin.
func listedOriginRequest(o revisit.ListedOrigin) swhwire.Model {
	args := map[string]any{}
	for k, v := range o.ExtraLoaderArguments {
		args[k] = v
	}
	return swhwire.Model{Type: "ListedOrigin", Fields: swhwire.Map{
		{Key: "lister_id", Value: o.ListerID}, {Key: "url", Value: o.URL}, {Key: "visit_type", Value: o.VisitType},
		{Key: "extra_loader_arguments", Value: args}, {Key: "last_update", Value: swhwire.Optional(o.LastUpdate)},
		{Key: "is_fork", Value: swhwire.Optional(o.IsFork)}, {Key: "forked_from_url", Value: swhwire.Optional(o.ForkedFromURL)},
		{Key: "enabled", Value: o.Enabled}, {Key: "first_seen", Value: nil}, {Key: "last_seen", Value: nil},
	}}
}
