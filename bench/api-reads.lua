-- wrk script for P8 (docs/performance.md): cycles through the API reads,
-- one path per request.
local paths = {"/api/v1/listed-origins?limit=100", "/api/v1/scheduler-metrics", "/api/v1/task-types", "/api/v1/queues"}
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
