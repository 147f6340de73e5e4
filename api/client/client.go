// Package client is the Go client of revisit's HTTP API (package api): the
// CLI uses it when given --server, so that an operator can drive a remote
// revisit. Its methods have the names and signatures of the store.Store
// methods they stand for, and return the same *revisit.Error values (the
// API's error codes), so that code written against a store works against a
// server.
//
//	c, err := client.New("http://127.0.0.1:5080", token, nil)
//	tts, err := c.TaskTypeList(ctx)
package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
)

// Client calls one revisit server.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the server at base (http://host:port, or its
// API's URL http://host:port/api/v1), sending token as a bearer token
// when not empty. A nil hc uses a client with a one-minute timeout.
func New(base, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server %q is not an http:// or https:// URL", base)
	}
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	// The server's root is the base, whether or not the URL names the
	// API's path too.
	root := strings.TrimSuffix(strings.TrimRight(base, "/"), "/api/v1")
	return &Client{base: root, token: token, http: hc}, nil
}

// do sends a request with body in (nil: none) as JSON, and decodes the
// JSON answer into out. An error answer becomes the *revisit.Error it
// describes.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return revisit.Errorf(revisit.CodeUnavailable, "%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return revisit.Errorf(revisit.CodeUnavailable, "%s %s: reading the answer: %v", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var eb api.ErrorBody
		if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
			return fmt.Errorf("%s %s: %s", method, path, resp.Status)
		}
		return &revisit.Error{Code: eb.Error.Code, Message: eb.Error.Message, Field: eb.Error.Field}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// TaskTypeList returns every task type, by name.
func (c *Client) TaskTypeList(ctx context.Context) ([]revisit.TaskType, error) {
	var out api.TaskTypesResponse
	err := c.do(ctx, "GET", "/api/v1/task-types", nil, nil, &out)
	return domains(out.TaskTypes, api.TaskType.Domain), err
}

// TaskTypeGet returns one task type; a not-found error if absent.
func (c *Client) TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error) {
	var out api.TaskType
	err := c.do(ctx, "GET", "/api/v1/task-types/"+url.PathEscape(name), nil, nil, &out)
	return out.Domain(), err
}

// TaskTypeCreate stores a new task type; a conflict error if it exists.
func (c *Client) TaskTypeCreate(ctx context.Context, t revisit.TaskType) error {
	var out api.TaskType
	return c.do(ctx, "POST", "/api/v1/task-types", nil, api.NewTaskType(t), &out)
}

// ListerList returns every lister.
func (c *Client) ListerList(ctx context.Context) ([]revisit.Lister, error) {
	return c.listers(ctx, nil)
}

// ListerGet returns the lister of that name and instance; a not-found
// error if absent.
func (c *Client) ListerGet(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	ls, err := c.listers(ctx, url.Values{"name": {name}, "instance_name": {instanceName}})
	if err != nil {
		return revisit.Lister{}, err
	}
	if len(ls) == 0 {
		return revisit.Lister{}, revisit.Errorf(revisit.CodeNotFound, "no lister %s (instance %q)", name, instanceName)
	}
	return ls[0], nil
}

// ListerGetByIDs returns the listers with those ids that exist.
func (c *Client) ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := url.Values{}
	for _, id := range ids {
		q.Add("id", id.String())
	}
	return c.listers(ctx, q)
}

func (c *Client) listers(ctx context.Context, q url.Values) ([]revisit.Lister, error) {
	var out api.ListersResponse
	err := c.do(ctx, "GET", "/api/v1/listers", q, nil, &out)
	return domains(out.Listers, api.Lister.Domain), err
}

// ListerGetOrCreate returns the lister of that name and instance, creating
// it if needed.
func (c *Client) ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error) {
	var out api.Lister
	err := c.do(ctx, "POST", "/api/v1/listers", nil, api.ListerRequest{Name: name, InstanceName: instanceName}, &out)
	return out.Domain(), err
}

// ListedOriginsRecord upserts a batch of at most api.MaxBatch origins,
// whole or not at all.
func (c *Client) ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error) {
	var out api.RecordResponse
	err := c.do(ctx, "POST", "/api/v1/listed-origins", nil,
		api.RecordRequest{Origins: domains(origins, api.NewListedOrigin)}, &out)
	return revisit.RecordResult{Inserted: out.Inserted, Updated: out.Updated}, err
}

// ListedOriginsGet returns one page of listed origins.
func (c *Client) ListedOriginsGet(ctx context.Context, f revisit.ListedOriginFilter) (revisit.ListedOriginPage, error) {
	q := url.Values{"url": f.URLs}
	if f.ListerID != nil {
		q.Set("lister_id", f.ListerID.String())
	}
	if f.VisitType != "" {
		q.Set("visit_type", f.VisitType)
	}
	q.Set("enabled", map[revisit.EnabledFilter]string{revisit.OnlyEnabled: "true", revisit.OnlyDisabled: "false",
		revisit.AnyEnabled: "any"}[f.Enabled])
	setPage(q, f.Limit, f.PageToken)
	var out api.ListedOriginsPage
	err := c.do(ctx, "GET", "/api/v1/listed-origins", q, nil, &out)
	return revisit.ListedOriginPage{Origins: domains(out.Origins, api.ListedOrigin.Domain),
		NextPageToken: out.NextPageToken}, err
}

// GrabNextVisits grabs (or, with p.DryRun, peeks at) the next origins to
// visit.
func (c *Client) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	path := "/api/v1/next-visits/grab"
	if p.DryRun {
		path = "/api/v1/next-visits/peek"
	}
	var out api.OriginsResponse
	err := c.do(ctx, "POST", path, nil, api.NewGrabRequest(p), &out)
	return domains(out.Origins, api.ListedOrigin.Domain), err
}

// VisitStatsGet returns the stats that exist among keys.
func (c *Client) VisitStatsGet(ctx context.Context, keys []revisit.OriginKey) ([]revisit.VisitStats, error) {
	byType := map[string][]string{}
	var types []string
	for _, k := range keys {
		if _, ok := byType[k.VisitType]; !ok {
			types = append(types, k.VisitType)
		}
		byType[k.VisitType] = append(byType[k.VisitType], k.URL)
	}
	var stats []revisit.VisitStats
	for _, vt := range types {
		var out api.VisitStatsResponse
		if err := c.do(ctx, "GET", "/api/v1/visit-stats", url.Values{"visit_type": {vt}, "url": byType[vt]}, nil, &out); err != nil {
			return nil, err
		}
		for _, v := range out.VisitStats {
			s, err := v.Domain()
			if err != nil {
				return nil, err
			}
			stats = append(stats, s)
		}
	}
	return stats, nil
}

// QueuePositionGet returns the visit type's queue position.
func (c *Client) QueuePositionGet(ctx context.Context, visitType string) (int64, error) {
	var out api.QueuePosition
	err := c.do(ctx, "GET", "/api/v1/queue-positions/"+url.PathEscape(visitType), nil, nil, &out)
	return out.Position, err
}

// MetricsGet reads the stored scheduler metrics, filtered by lister and
// visit type when given.
func (c *Client) MetricsGet(ctx context.Context, listerID *uuid.UUID, visitType string) ([]revisit.SchedulerMetrics, error) {
	q := url.Values{}
	if listerID != nil {
		q.Set("lister_id", listerID.String())
	}
	if visitType != "" {
		q.Set("visit_type", visitType)
	}
	var out api.MetricsResponse
	err := c.do(ctx, "GET", "/api/v1/scheduler-metrics", q, nil, &out)
	return domains(out.Metrics, api.SchedulerMetrics.Domain), err
}

// MetricsUpdate recomputes the scheduler metrics of one lister (nil: all)
// and returns them. The server's clock decides the time: now is ignored.
func (c *Client) MetricsUpdate(ctx context.Context, listerID *uuid.UUID, _ time.Time) ([]revisit.SchedulerMetrics, error) {
	var out api.MetricsResponse
	err := c.do(ctx, "POST", "/api/v1/scheduler-metrics/refresh", nil, api.RefreshRequest{ListerID: listerID}, &out)
	return domains(out.Metrics, api.SchedulerMetrics.Domain), err
}

// Queues returns the state of every visit type's queue.
func (c *Client) Queues(ctx context.Context) ([]api.Queue, error) {
	var out api.QueuesResponse
	err := c.do(ctx, "GET", "/api/v1/queues", nil, nil, &out)
	return out.Queues, err
}

// OriginsSearch returns one page of the listed rows whose URL matches the
// search (revisit.OriginSearchPage: a page may be short and still have a
// next page). A lister named by id is sent by name, as the route takes it.
func (c *Client) OriginsSearch(ctx context.Context, s revisit.OriginSearch) (revisit.OriginSearchPage, error) {
	q := url.Values{"q": {s.Query}}
	if s.Match != "" {
		q.Set("match", string(s.Match))
	}
	if err := c.setLister(ctx, q, s.ListerID); err != nil {
		return revisit.OriginSearchPage{}, err
	}
	if s.VisitType != "" {
		q.Set("visit_type", s.VisitType)
	}
	if s.Enabled != revisit.AnyEnabled {
		q.Set("enabled", strconv.FormatBool(s.Enabled == revisit.OnlyEnabled))
	}
	setPage(q, s.Limit, s.PageToken)
	var out api.OriginSearchPage
	err := c.do(ctx, "GET", "/api/v1/origins/search", q, nil, &out)
	page := revisit.OriginSearchPage{NextPageToken: out.NextPageToken}
	page.Origins = domains(out.Origins, api.OriginMatch.Domain)
	return page, err
}

// setLister sets the lister parameter of q to the name of the lister of
// id, as the routes take it, when id is given.
func (c *Client) setLister(ctx context.Context, q url.Values, id *uuid.UUID) error {
	if id == nil {
		return nil
	}
	ls, err := c.ListerGetByIDs(ctx, []uuid.UUID{*id})
	if err != nil {
		return err
	}
	if len(ls) == 0 {
		return revisit.Errorf(revisit.CodeNotFound, "no lister with id %s", id)
	}
	q.Set("lister", ls[0].Name)
	if ls[0].InstanceName != "" {
		q.Set("lister", ls[0].Name+"/"+ls[0].InstanceName)
	}
	return nil
}

// OriginsBrowse returns one page of the listed origins of a visit type in
// the order of a view (revisit.OriginBrowsePage).
func (c *Client) OriginsBrowse(ctx context.Context, b revisit.OriginBrowse) (revisit.OriginBrowsePage, error) {
	q := url.Values{"visit_type": {b.VisitType}}
	if b.View != "" {
		q.Set("view", string(b.View))
	}
	if b.Descending {
		q.Set("order", "desc")
	}
	switch b.Enabled {
	case revisit.OnlyEnabled:
		q.Set("enabled", "true")
	case revisit.OnlyDisabled:
		q.Set("enabled", "false")
	case revisit.AnyEnabled:
		q.Set("enabled", "any")
	}
	if b.Outcome != "" {
		q.Set("outcome", string(b.Outcome))
	}
	if err := c.setLister(ctx, q, b.ListerID); err != nil {
		return revisit.OriginBrowsePage{}, err
	}
	setPage(q, b.Limit, b.PageToken)
	var out api.OriginBrowsePage
	err := c.do(ctx, "GET", "/api/v1/origins/browse", q, nil, &out)
	page := revisit.OriginBrowsePage{NextPageToken: out.NextPageToken, PrevPageToken: out.PrevPageToken}
	page.Origins = domains(out.Origins, func(o api.BrowsedOrigin) revisit.BrowsedOrigin {
		return revisit.BrowsedOrigin{OriginMatch: o.OriginMatch.Domain(), LastScheduled: o.LastScheduled}
	})
	return page, err
}

// OriginDetail returns what the server knows of one origin, explained.
func (c *Client) OriginDetail(ctx context.Context, key revisit.OriginKey) (api.OriginDetail, error) {
	var out api.OriginDetail
	err := c.do(ctx, "GET", "/api/v1/origins/detail", url.Values{"url": {key.URL}, "visit_type": {key.VisitType}}, nil, &out)
	return out, err
}

// History returns the last minutes (1 to 1440; 0: the server's default)
// of the figures the server keeps in memory.
func (c *Client) History(ctx context.Context, minutes int) (api.HistoryResponse, error) {
	q := url.Values{}
	if minutes != 0 {
		q.Set("minutes", strconv.Itoa(minutes))
	}
	var out api.HistoryResponse
	err := c.do(ctx, "GET", "/api/v1/history", q, nil, &out)
	return out, err
}

// QueueMessages returns one page of the messages of a queue of the
// server's embedded broker: f's Queue, Listing (empty: waiting), Limit and
// PageToken; the server's clock decides which leases hold (f.Now is
// ignored).
func (c *Client) QueueMessages(ctx context.Context, f revisit.QueueMessageFilter) (api.QueueMessagesResponse, error) {
	q := url.Values{}
	if f.Listing != "" {
		q.Set("state", string(f.Listing))
	}
	setPage(q, f.Limit, f.PageToken)
	var out api.QueueMessagesResponse
	err := c.do(ctx, "GET", "/api/v1/queues/"+url.PathEscape(f.Queue)+"/messages", q, nil, &out)
	return out, err
}

// Workers returns the workers of the server's embedded broker.
func (c *Client) Workers(ctx context.Context) (api.WorkersResponse, error) {
	var out api.WorkersResponse
	err := c.do(ctx, "GET", "/api/v1/workers", nil, nil, &out)
	return out, err
}

// BrokerQueues returns every queue as the server's broker sees it now.
func (c *Client) BrokerQueues(ctx context.Context) (api.BrokerQueuesResponse, error) {
	var out api.BrokerQueuesResponse
	err := c.do(ctx, "GET", "/api/v1/broker/queues", nil, nil, &out)
	return out, err
}

// Tasks returns one page of generic tasks. The route filters by Type,
// Status, Policy and Priority only: other filters are an invalid-input
// error naming them.
func (c *Client) Tasks(ctx context.Context, f revisit.TaskFilter) (api.TasksPage, error) {
	switch {
	case len(f.IDs) > 0:
		return api.TasksPage{}, revisit.Invalidf("ids", "not a filter of the tasks through a server: get each with Task")
	case f.NextRunBefore != nil || f.NextRunAfter != nil:
		return api.TasksPage{}, revisit.Invalidf("next_run", "not a filter of the tasks through a server")
	}
	q := url.Values{}
	for k, v := range map[string]string{"type": f.Type, "status": string(f.Status), "policy": string(f.Policy)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Priority != nil {
		q.Set("priority", cmp.Or(string(*f.Priority), "none"))
	}
	setPage(q, f.Limit, f.PageToken)
	var out api.TasksPage
	err := c.do(ctx, "GET", "/api/v1/tasks", q, nil, &out)
	return out, err
}

// Task returns one generic task and its runs, newest first.
func (c *Client) Task(ctx context.Context, id int64) (api.TaskDetail, error) {
	var out api.TaskDetail
	err := c.do(ctx, "GET", "/api/v1/tasks/"+strconv.FormatInt(id, 10), nil, nil, &out)
	return out, err
}

// VisitNow sends the visit of one origin at once (docs/actions.md).
func (c *Client) VisitNow(ctx context.Context, req api.VisitNowRequest) (api.VisitNowResponse, error) {
	var out api.VisitNowResponse
	err := c.do(ctx, "POST", "/api/v1/visits", nil, req, &out)
	return out, err
}

// ListedOriginsSetEnabled enables or disables the listed rows of an
// origin, every lister's or only listerID's, and returns how many changed.
func (c *Client) ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID,
	enabled bool) (int, error) {
	path := "/api/v1/listed-origins/disable"
	if enabled {
		path = "/api/v1/listed-origins/enable"
	}
	var out api.OriginEnabledResponse
	err := c.do(ctx, "POST", path, nil,
		api.OriginEnabledRequest{URL: key.URL, VisitType: key.VisitType, ListerID: listerID}, &out)
	return out.Changed, err
}

// VisitTypePauseSet pauses a visit type and returns its pause. The server
// decides who paused it (the token's name) and when: p.By and p.At are
// ignored.
func (c *Client) VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	var out api.VisitTypePause
	if err := c.do(ctx, "POST", visitTypePath(p.VisitType, "pause"), nil, nil, &out); err != nil {
		return revisit.Pause{}, err
	}
	if out.Paused == nil {
		return revisit.Pause{}, fmt.Errorf("pause %s: the answer has no pause", p.VisitType)
	}
	return revisit.Pause{VisitType: out.VisitType, By: out.Paused.By, At: out.Paused.At}, nil
}

// VisitTypePauseClear resumes a visit type and reports whether it was
// paused.
func (c *Client) VisitTypePauseClear(ctx context.Context, visitType string) (bool, error) {
	var out api.ResumeResponse
	err := c.do(ctx, "POST", visitTypePath(visitType, "resume"), nil, nil, &out)
	return out.WasPaused, err
}

// VisitsExpire declares lost every visit of the visit type sent and still
// without a result, and returns how many. The server's clock is the
// bound: before is ignored.
func (c *Client) VisitsExpire(ctx context.Context, visitType string, _ time.Time) (int, error) {
	var out api.RequeueResponse
	err := c.do(ctx, "POST", visitTypePath(visitType, "requeue-lost"), nil, nil, &out)
	return out.Lost, err
}

// PurgeQueue deletes the messages of a queue waiting for a worker, through
// the server's broker (broker.Purger): VisitsLost is nil with RabbitMQ.
func (c *Client) PurgeQueue(ctx context.Context, queue string) (revisit.QueuePurge, error) {
	var out api.PurgeResponse
	if err := c.do(ctx, "POST", "/api/v1/queues/"+url.PathEscape(queue)+"/purge", nil, nil, &out); err != nil {
		return revisit.QueuePurge{}, err
	}
	return revisit.QueuePurge{Queue: out.Queue, Purged: out.Purged, VisitsLost: out.VisitsLost}, nil
}

// DropMessage deletes one message of the server's embedded broker and
// returns it as it was, and whether its visit was declared lost.
func (c *Client) DropMessage(ctx context.Context, id string) (embedded.QueuedMessage, bool, error) {
	var out api.MessageActionResponse
	err := c.do(ctx, "POST", messagePath(id, "drop"), nil, nil, &out)
	return out.Message.Embedded(), out.VisitLost, err
}

// RequeueMessage takes a leased message of the server's embedded broker
// back from its worker and returns it as it waits again.
func (c *Client) RequeueMessage(ctx context.Context, id string) (embedded.QueuedMessage, error) {
	var out api.MessageActionResponse
	err := c.do(ctx, "POST", messagePath(id, "requeue"), nil, nil, &out)
	return out.Message.Embedded(), err
}

func messagePath(id, action string) string {
	return "/api/v1/messages/" + url.PathEscape(id) + "/" + action
}

func visitTypePath(visitType, action string) string {
	return "/api/v1/visit-types/" + url.PathEscape(visitType) + "/" + action
}

// TasksSetStatus disables tasks, one request each, in order: the server
// sets no other status (an invalid-input error naming status). It stops
// at the first error, which says how many tasks were disabled before.
func (c *Client) TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error {
	if status != revisit.TaskDisabled {
		return revisit.Invalidf("status", "a server only disables tasks, not set them %s", status)
	}
	return c.taskActions(ctx, ids, "disable")
}

// TasksRespawn respawns disabled or completed tasks, one request each, in
// order: each is due now (the server's clock), so nextRun must be nil (an
// invalid-input error naming next_run); a task waiting or dispatched is a
// conflict error. It stops at the first error, which says how many tasks
// were respawned before.
func (c *Client) TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error {
	if nextRun != nil {
		return revisit.Invalidf("next_run", "a server respawns tasks due now; their next run cannot be chosen")
	}
	return c.taskActions(ctx, ids, "respawn")
}

// TasksRunNow makes tasks waiting for their next run due now, one request
// each, in order; a task dispatched, disabled or completed is a conflict
// error. It stops at the first error, which says how many tasks were made
// due before.
func (c *Client) TasksRunNow(ctx context.Context, ids []int64) error {
	return c.taskActions(ctx, ids, "run-now")
}

// taskActions posts the action to each task in turn.
func (c *Client) taskActions(ctx context.Context, ids []int64, action string) error {
	for i, id := range ids {
		var out api.TaskState
		err := c.do(ctx, "POST", "/api/v1/tasks/"+strconv.FormatInt(id, 10)+"/"+action, nil, nil, &out)
		var e *revisit.Error
		if errors.As(err, &e) && i > 0 {
			return &revisit.Error{Code: e.Code, Field: e.Field,
				Message: fmt.Sprintf("%s (the %d task(s) before it were changed)", e.Message, i)}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// OperatorActionsList returns one page of the operator's actions the
// server recorded, newest first.
func (c *Client) OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"action": f.Action, "by": f.By} {
		if v != "" {
			q.Set(k, v)
		}
	}
	setPage(q, f.Limit, f.PageToken)
	var out api.OperatorActionsPage
	err := c.do(ctx, "GET", "/api/v1/actions", q, nil, &out)
	return revisit.OperatorActionPage{Actions: domains(out.Actions, api.OperatorAction.Domain),
		NextPageToken: out.NextPageToken}, err
}

// domains maps a slice with f.
func domains[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// setPage sets the page parameters of a listing's query: limit (0: the
// server's default) and page_token (empty: the first page).
func setPage(q url.Values, limit int, token string) {
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if token != "" {
		q.Set("page_token", token)
	}
}
