package api

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/access"
)

// Scope is the access a route needs when the API has tokens.
type Scope string

// The scopes of routes.
const (
	// ScopePublic routes need no token: health and the OpenAPI document.
	ScopePublic Scope = "public"
	// ScopeRead routes change nothing; read and write tokens may call
	// them.
	ScopeRead Scope = "read"
	// ScopeWrite routes change something; only write tokens may call
	// them.
	ScopeWrite Scope = "write"
)

// Route is one route of the API, with what the OpenAPI document says of
// it.
type Route struct {
	// Method and Path are the pattern of the route, as in "GET
	// /api/v1/task-types/{type}".
	Method, Path string
	// Scope is the access the route needs.
	Scope Scope
	// Summary says what the route does.
	Summary string
	// Params are its query parameters (path parameters come from Path).
	Params []Param
	// Body is a value of the type of its request body, nil for none.
	Body any
	// Response is a value of the type of its response body.
	Response any

	maxBody int64
	handle  http.HandlerFunc
}

// Param is a query parameter of a route.
type Param struct {
	Name string
	// Type is the JSON Schema type: string, integer or boolean.
	Type string
	// Repeated parameters may be given several times.
	Repeated    bool
	Description string
}

// Routes returns the routes the server serves, in the order of the
// OpenAPI document.
func (s *Server) Routes() []Route { return s.routes() }

// routes is the route table.
func (s *Server) routes() []Route {
	rs := []Route{
		{Method: "GET", Path: "/healthz", Scope: ScopePublic, Summary: "The process is up.",
			Response: healthResponse{}, handle: s.handleHealthz},
		{Method: "GET", Path: "/readyz", Scope: ScopePublic,
			Summary:  "The database, the broker and the journal's brokers are reachable and the orchestrator's loops are healthy (503 otherwise).",
			Response: readyResponse{}, handle: s.handleReadyz},
	}
	if s.cfg.Metrics != nil {
		rs = append(rs, Route{Method: "GET", Path: "/metrics", Scope: ScopeRead,
			Summary: "Prometheus metrics of this process (text exposition format).", handle: s.handleMetrics})
	}
	if s.cfg.HealthOnly {
		return withLimits(rs)
	}
	rs = append(rs, Route{Method: "GET", Path: "/api/v1/openapi.json", Scope: ScopePublic,
		Summary: "This document.", Response: map[string]any{}, handle: s.handleOpenAPI})
	if s.st != nil {
		rs = append(rs, s.dataRoutes()...)
		rs = append(rs, s.actionRoutes()...)
	}
	if s.q != nil {
		rs = append(rs,
			Route{Method: "POST", Path: "/api/v1/queues/{queue}/lease", Scope: ScopeWrite,
				Summary: "Lease task messages of a queue (embedded broker), long-polling up to wait_seconds.",
				Body:    leaseRequest{}, Response: leaseResponse{}, handle: s.handleLease},
			Route{Method: "POST", Path: "/api/v1/messages/{id}/heartbeat", Scope: ScopeWrite,
				Summary: "Extend the lease of a leased message.",
				Body:    heartbeatRequest{}, Response: heartbeatResponse{}, handle: s.handleHeartbeat},
			Route{Method: "POST", Path: "/api/v1/messages/{id}/result", Scope: ScopeWrite,
				Summary: "Post the result of a message leased to the worker; a repeated result is ignored.",
				Body:    resultRequest{}, Response: resultResponse{}, handle: s.handleResult})
	}
	return withLimits(rs)
}

// dataRoutes are the routes over the store.
func (s *Server) dataRoutes() []Route {
	listerFilter := []Param{{Name: "lister_id", Type: "string", Description: "only this lister's (UUID)"}}
	pageParams := func(limit revisit.Limit) []Param {
		return []Param{
			{Name: "limit", Type: "integer", Description: fmt.Sprintf("page size, %d to %d (default %d)", limit.Min, limit.Max, limit.Def)},
			{Name: "page_token", Type: "string", Description: "the next_page_token of the previous page"}}
	}
	rs := []Route{
		{Method: "GET", Path: "/api/v1/task-types", Scope: ScopeRead, Summary: "List the task types.",
			Response: TaskTypesResponse{}, handle: s.handleTaskTypeList},
		{Method: "POST", Path: "/api/v1/task-types", Scope: ScopeWrite, Summary: "Create a task type (409 if it exists).",
			Body: TaskType{}, Response: TaskType{}, handle: s.handleTaskTypeCreate},
		{Method: "GET", Path: "/api/v1/task-types/{type}", Scope: ScopeRead, Summary: "Show one task type.",
			Response: TaskType{}, handle: s.handleTaskTypeGet},
		{Method: "GET", Path: "/api/v1/listers", Scope: ScopeRead,
			Summary: "List the listers: all, those with the given ids, or the one of a name and instance name.",
			Params: []Param{{Name: "id", Type: "string", Repeated: true, Description: "lister UUID"},
				{Name: "name", Type: "string"}, {Name: "instance_name", Type: "string"}},
			Response: ListersResponse{}, handle: s.handleListerList},
		{Method: "POST", Path: "/api/v1/listers", Scope: ScopeWrite, Summary: "Get or create the lister of a name and instance name.",
			Body: ListerRequest{}, Response: Lister{}, handle: s.handleListerGetOrCreate},
		{Method: "GET", Path: "/api/v1/listed-origins", Scope: ScopeRead,
			Summary: "One page of listed origins in (lister_id, url, visit_type) order; next_page_token is absent on the last page.",
			Params: append(listerFilter,
				Param{Name: "url", Type: "string", Repeated: true, Description: "only these URLs"},
				Param{Name: "visit_type", Type: "string"},
				Param{Name: "enabled", Type: "string", Description: "true (default), false or any"},
				Param{Name: "limit", Type: "integer", Description: "page size, 1 to 10000 (default 1000)"},
				Param{Name: "page_token", Type: "string", Description: "the next_page_token of the previous page"}),
			Response: ListedOriginsPage{}, handle: s.handleOriginList},
		{Method: "GET", Path: "/api/v1/origins/search", Scope: ScopeRead,
			Summary:  "Search listed origins by URL (a prefix or a substring), lister, visit type and enabled, a page at a time in (url, visit_type, lister_id) order; a page reads a bounded number of matching URLs, so it may be short, even empty, and still have a next_page_token, absent once every match has been read. Refused (503, unavailable) while the store's URL search is off (revisit db search).",
			Params:   originSearchParams,
			Response: OriginSearchPage{}, handle: s.handleOriginSearch},
		{Method: "GET", Path: "/api/v1/origins/browse", Scope: ScopeRead,
			Summary: "Browse the listed origins of a visit type without a visit in flight, a page at a time either way, " +
				"in the order of a view (by the time last scheduled, or the failures by the time of their last visit); a " +
				"page reads a bounded number of rows, so it may be short, even empty, and still have a next_page_token.",
			Params:   originBrowseParams,
			Response: OriginBrowsePage{}, handle: s.handleOriginBrowse},
		{Method: "GET", Path: "/api/v1/origins/detail", Scope: ScopeRead,
			Summary: "One origin: its listed rows, visit stats, last results (at most 5, newest first), next position on its visit type's clock and the cooldowns that hold it, explained, and its visits in flight (404 when revisit knows nothing of it).",
			Params: []Param{{Name: "url", Type: "string", Description: "the origin's URL"},
				{Name: "visit_type", Type: "string"}},
			Response: OriginDetail{}, handle: s.handleOriginDetail},
		{Method: "POST", Path: "/api/v1/listed-origins", Scope: ScopeWrite,
			Summary: "Record (upsert) a batch of at most 10000 listed origins, whole or not at all.",
			Body:    RecordRequest{}, Response: RecordResponse{}, maxBody: MaxBatchBodyBytes, handle: s.handleOriginRecord},
		{Method: "POST", Path: "/api/v1/next-visits/peek", Scope: ScopeRead,
			Summary: "The origins a grab would choose, without marking them scheduled.",
			Body:    GrabRequest{}, Response: OriginsResponse{}, handle: s.handleGrab(true)},
		{Method: "POST", Path: "/api/v1/next-visits/grab", Scope: ScopeWrite,
			Summary: "Choose the next origins to visit and mark them scheduled (for operators).",
			Body:    GrabRequest{}, Response: OriginsResponse{}, handle: s.handleGrab(false)},
		{Method: "GET", Path: "/api/v1/visit-stats", Scope: ScopeRead,
			Summary: "The visit stats of origins of one visit type (those that exist).",
			Params: []Param{{Name: "visit_type", Type: "string"},
				{Name: "url", Type: "string", Repeated: true, Description: "1 to 1000 URLs"}},
			Response: VisitStatsResponse{}, handle: s.handleVisitStats},
		{Method: "GET", Path: "/api/v1/queue-positions/{visit_type}", Scope: ScopeRead,
			Summary:  "The queue position (virtual clock, seconds) of a visit type.",
			Response: QueuePosition{}, handle: s.handleQueuePosition},
		{Method: "POST", Path: "/api/v1/visit-statuses", Scope: ScopeWrite,
			Summary: "Ingest a JSON array of at most 10000 visit statuses, all checked before any is processed; they close the visits in flight they end.",
			Body:    []visitStatusDoc{}, Response: VisitStatusesResponse{}, maxBody: MaxBatchBodyBytes,
			handle: s.handleVisitStatuses},
		{Method: "GET", Path: "/api/v1/scheduler-metrics", Scope: ScopeRead,
			Summary:  "The stored scheduler metrics, per lister and visit type.",
			Params:   append(listerFilter, Param{Name: "visit_type", Type: "string"}),
			Response: MetricsResponse{}, handle: s.handleMetricsGet},
		{Method: "POST", Path: "/api/v1/scheduler-metrics/refresh", Scope: ScopeWrite,
			Summary: "Recompute the scheduler metrics (of one lister, or all) and return them.",
			Body:    RefreshRequest{}, Response: MetricsResponse{}, handle: s.handleMetricsRefresh},
		{Method: "GET", Path: "/api/v1/queues", Scope: ScopeRead,
			Summary:  "Per visit type: its queue, maximum length, depth (null when unknown) and visits in flight.",
			Response: QueuesResponse{}, handle: s.handleQueues},
		{Method: "GET", Path: "/api/v1/dashboard", Scope: ScopeRead,
			Summary:  "The figures of the dashboard: queues, loop states, policies, results and scheduler metrics.",
			Response: Dashboard{}, handle: s.handleDashboard},
		{Method: "GET", Path: "/api/v1/history", Scope: ScopeRead,
			Summary: "Per visit type, the last minutes of the figures this process keeps a day of: visits scheduled " +
				"by policy, results by outcome and visits lost per minute, queue depth, free slots and grab latency; " +
				"null for a minute without a value.",
			Params: []Param{{Name: "minutes", Type: "integer",
				Description: "how many minutes up to the last whole one, 1 to 1440 (default 60)"}},
			Response: HistoryResponse{}, handle: s.handleHistory},
		{Method: "GET", Path: "/api/v1/broker/queues", Scope: ScopeRead,
			Summary: "Every queue of the task types (and, with the embedded broker, every queue published to) as the broker " +
				"sees it now: messages waiting, and leased (embedded broker) or consumers (RabbitMQ).",
			Response: BrokerQueuesResponse{}, handle: s.handleBrokerQueues},
		{Method: "GET", Path: "/api/v1/tasks", Scope: ScopeRead,
			Summary: "One page of generic tasks in id order, filtered; next_page_token is absent on the last page.",
			Params: append([]Param{{Name: "type", Type: "string", Description: "only this task type's"},
				{Name: "status", Type: "string", Description: "next_run_not_scheduled, next_run_scheduled, completed or disabled"},
				{Name: "policy", Type: "string", Description: "oneshot or recurring"},
				{Name: "priority", Type: "string", Description: "high, normal, low, or none (the tasks without priority)"}},
				pageParams(revisit.PageSize)...),
			Response: TasksPage{}, handle: s.handleTaskList},
		{Method: "GET", Path: "/api/v1/tasks/{id}", Scope: ScopeRead, Summary: "One generic task and its runs, newest first.",
			Response: TaskDetail{}, handle: s.handleTaskGet},
		{Method: "GET", Path: "/api/v1/actions", Scope: ScopeRead,
			Summary: "One page of the operator's actions that changed something (console, API or CLI on the store), " +
				fmt.Sprintf("newest first, kept %d days: when, by whom, the action, its target and its answer; ",
					revisit.OperatorActionRetention/(24*time.Hour)) +
				"next_page_token is absent on the last page.",
			Params: append([]Param{{Name: "action", Type: "string", Description: "only this action's (as pause or visit_now)"},
				{Name: "by", Type: "string", Description: "only those done by this token's name (or anonymous, cli:USER)"}},
				pageParams(revisit.OperatorActionPageSize)...),
			Response: OperatorActionsPage{}, handle: s.handleActionList},
	}
	if s.q != nil {
		rs = append(rs,
			Route{Method: "GET", Path: "/api/v1/queues/{queue}/messages", Scope: ScopeRead,
				Summary: "One page of the messages of an embedded broker's queue: waiting now, in the order workers will " +
					"lease them (expired leases, then highest priority first, then enqueue order), or leased now, in " +
					"enqueue order; with the origin each visits and the worker holding it; next_page_token is absent " +
					"on the last page.",
				Params: append([]Param{{Name: "state", Type: "string",
					Description: "waiting (default: a worker may lease them now) or leased (held by a worker now)"}},
					pageParams(revisit.QueueMessagePageSize)...),
				Response: QueueMessagesResponse{}, handle: s.handleQueueMessages},
			Route{Method: "GET", Path: "/api/v1/workers", Scope: ScopeRead,
				Summary: "The embedded broker's workers this server saw since it started (what they did through it) " +
					"and those holding leases now, with their leases.",
				Response: WorkersResponse{}, handle: s.handleWorkers})
	}
	return rs
}

// actionRoutes are the operator's actions of the console
// (docs/actions.md), each logged and recorded with who asked.
func (s *Server) actionRoutes() []Route {
	origin := "Body: url, visit_type and lister_id (the lister's row only; every lister's without it)."
	rs := []Route{
		{Method: "POST", Path: "/api/v1/visits", Scope: ScopeWrite,
			Summary: "Visit one origin now: its visit is sent at once, with a high priority, to its visit type's queue " +
				"whatever its depth, and is in flight as the orchestrator's are; 404 for an origin not listed, 409 (saying " +
				"since when) when a visit of it is in flight, unless force is true.",
			Body: VisitNowRequest{}, Response: VisitNowResponse{}, handle: s.handleVisitNow},
		{Method: "POST", Path: "/api/v1/listed-origins/disable", Scope: ScopeWrite,
			Summary: "Disable an origin: no policy chooses it until it is enabled, or listed again. " + origin,
			Body:    OriginEnabledRequest{}, Response: OriginEnabledResponse{}, handle: s.handleOriginEnabled(false)},
		{Method: "POST", Path: "/api/v1/listed-origins/enable", Scope: ScopeWrite,
			Summary: "Enable an origin. " + origin,
			Body:    OriginEnabledRequest{}, Response: OriginEnabledResponse{}, handle: s.handleOriginEnabled(true)},
		{Method: "POST", Path: "/api/v1/visit-types/{visit_type}/pause", Scope: ScopeWrite,
			Summary: "Pause a visit type: its orchestrator loop runs no round, in any process, until resumed " +
				"(a visit type paused already keeps who paused it and when).",
			Response: VisitTypePause{}, handle: s.handlePause},
		{Method: "POST", Path: "/api/v1/visit-types/{visit_type}/resume", Scope: ScopeWrite,
			Summary:  "Resume a paused visit type: its loop runs a round at once; was_paused says whether it was paused.",
			Response: ResumeResponse{}, handle: s.handleResume},
		{Method: "POST", Path: "/api/v1/visit-types/{visit_type}/requeue-lost", Scope: ScopeWrite,
			Summary: "Declare lost now every visit of the visit type sent and still without a result, and offer " +
				"their origins again at once (for messages the workers lost); a late result still counts.",
			Response: RequeueResponse{}, handle: s.handleRequeueLost},
		{Method: "POST", Path: "/api/v1/tasks/{id}/disable", Scope: ScopeWrite,
			Summary:  "Disable a generic task: it is not dispatched again unless respawned.",
			Response: TaskState{}, handle: s.handleTaskAction(revisit.ActionDisableTask, s.disableTask)},
		{Method: "POST", Path: "/api/v1/tasks/{id}/respawn", Scope: ScopeWrite,
			Summary: "Respawn a disabled or completed generic task: due now, status next_run_not_scheduled, its " +
				"retries back (409 for a task waiting or dispatched).",
			Response: TaskState{}, handle: s.handleTaskAction(revisit.ActionRespawnTask, s.respawnTask)},
		{Method: "POST", Path: "/api/v1/tasks/{id}/run-now", Scope: ScopeWrite,
			Summary: "Make a generic task waiting for its next run due now, its retries back (409 for a task " +
				"dispatched, disabled or completed).",
			Response: TaskState{}, handle: s.handleTaskAction(revisit.ActionRunTaskNow, s.runTaskNow)},
		{Method: "POST", Path: "/api/v1/queues/{queue}/purge", Scope: ScopeWrite,
			Summary: "Purge a queue: delete its messages waiting for a worker (not those a worker holds now). With the " +
				"embedded broker their visits are declared lost at once and their origins offered again; with " +
				"RabbitMQ (visits_lost null) they are lost at their timeout. 404 for a queue that does not exist, " +
				"503 without a broker.",
			Response: PurgeResponse{}, handle: s.handlePurge},
	}
	if s.q != nil {
		rs = append(rs,
			Route{Method: "POST", Path: "/api/v1/messages/{id}/drop", Scope: ScopeWrite,
				Summary: "Drop one message of the embedded broker, waiting or leased (its worker's heartbeat and result " +
					"then get 404), and declare its visit lost so that its origin is offered again; 404 for an " +
					"unknown message, 409 for one whose result is stored.",
				Response: MessageActionResponse{}, handle: s.handleDropMessage},
			Route{Method: "POST", Path: "/api/v1/messages/{id}/requeue", Scope: ScopeWrite,
				Summary: "Take a leased message of the embedded broker back from its worker: it waits again in its place " +
					"(its worker's heartbeat gets 409; its result still counts until the message is leased again); " +
					"404 for an unknown message, 409 for one not leased.",
				Response: MessageActionResponse{}, handle: s.handleRequeueMessage})
	}
	return rs
}

// withLimits gives routes without their own body limit MaxBodyBytes.
func withLimits(rs []Route) []Route {
	for i := range rs {
		if rs[i].maxBody == 0 {
			rs[i].maxBody = MaxBodyBytes
		}
	}
	return rs
}

// wrap checks the access and bounds the body of a route's requests.
func (s *Server) wrap(rt Route) http.Handler {
	guard := access.Guard{Tokens: s.cfg.Tokens}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Scope != ScopePublic {
			name, err := guard.Check(r, rt.Scope == ScopeWrite)
			if err != nil {
				if revisit.Code(err) == access.CodeUnauthorized {
					w.Header().Set("WWW-Authenticate", guard.Challenge())
				}
				s.writeError(w, r, err)
				return
			}
			r = withCaller(r, name)
		}
		if err := checkQuery(r, rt.Params); err != nil {
			s.writeError(w, r, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, rt.maxBody)
		rt.handle(w, r)
	})
}

// checkQuery refuses query parameters the route does not take, repeated
// ones it takes once, and values that are not valid UTF-8.
func checkQuery(r *http.Request, params []Param) error {
	for name, vs := range r.URL.Query() {
		i := slices.IndexFunc(params, func(p Param) bool { return p.Name == name })
		switch {
		case i < 0:
			return revisit.Invalidf(name, "unknown query parameter")
		case len(vs) > 1 && !params[i].Repeated:
			return revisit.Invalidf(name, "given %d times, at most once", len(vs))
		}
		for _, v := range vs {
			if err := revisit.ValidateText(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
