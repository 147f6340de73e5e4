// The tasks page: the task types with their settings (GET
// /api/v1/task-types) and one page of the generic tasks the page's URL
// selects (GET /api/v1/tasks); each task links to its page.

import { getJSON, setStatus } from "./api.js";
import { el } from "./dom.js";
import { clockSeconds, count, dateTime, words } from "./format.js";
import { cell, nextLink, params, start, table } from "./page.js";

const PAGE_SIZE = 100;
const FILTERS = { type: "type", status: "task-status", policy: "policy", priority: "priority" };

// duration writes a duration of the API ("1d", "12h"), or unset when it
// is zero.
function duration(d, unset) {
  return d && d !== "0" ? d : unset;
}

// bounds writes the bounds of a recurring task's interval.
function bounds(tt) {
  const lo = duration(tt.min_interval, ""), hi = duration(tt.max_interval, "");
  if (!lo && !hi) return "unbounded";
  return `${lo || "none"} to ${hi || "none"}`;
}

function typeRow(tt) {
  return el("tr", { "data-task-type": tt.type },
    cell("type", tt.type), cell("backend_name", tt.backend_name), cell("default_interval", duration(tt.default_interval, "none")),
    cell("bounds", bounds(tt)),
    cell("backoff_factor", tt.backoff_factor ? String(tt.backoff_factor) : "unset"),
    cell("max_queue_length", count(tt.max_queue_length)), cell("num_retries", count(tt.num_retries)),
    cell("retry_delay", duration(tt.retry_delay, "1h (the default)")),
    cell("run_timeout", duration(tt.run_timeout, "1d (the default)")));
}

// argumentsText writes a task's arguments as Python would call it.
function argumentsText(a) {
  const parts = a.args.map((v) => JSON.stringify(v));
  for (const [k, v] of Object.entries(a.kwargs)) parts.push(`${k}=${JSON.stringify(v)}`);
  return parts.join(", ") || "none";
}

function taskRow(t) {
  return el("tr", { "data-task": String(t.id) },
    cell("id", el("a", { href: "/task?" + new URLSearchParams({ id: t.id }) }, String(t.id))),
    cell("type", t.type), cell("arguments", argumentsText(t.arguments)), cell("status", words(t.status)),
    cell("policy", t.policy), cell("priority", t.priority || "none"), cell("next_run", dateTime(t.next_run)),
    cell("current_interval", duration(t.current_interval, "none")), cell("retries_left", count(t.retries_left)));
}

// fillForm lists the task types in the filter and shows the page's filters.
function fillForm(types) {
  document.getElementById("type").replaceChildren(el("option", { value: "" }, "any"),
    ...types.map((tt) => el("option", { value: tt.type }, tt.type)));
  for (const [name, id] of Object.entries(FILTERS)) {
    if (params.get(name)) document.getElementById(id).value = params.get(name);
  }
}

async function load() {
  const types = await getJSON("/api/v1/task-types");
  if (!types) return;
  table("task-types", types.task_types.map(typeRow), "No task type: register one (revisit task-type register FILE).");
  fillForm(types.task_types);
  const query = new URLSearchParams({ limit: PAGE_SIZE });
  for (const name of [...Object.keys(FILTERS), "page_token"]) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  const page = await getJSON("/api/v1/tasks?" + query);
  if (!page) return;
  table("tasks", page.tasks.map(taskRow), "No task matches.");
  nextLink("next", page.next_page_token);
  setStatus("updated " + clockSeconds(new Date()));
}

start(load);
