// A task's page: the task of the page's URL (?id=N) and its runs, newest
// first (GET /api/v1/tasks/{id}).

import { disableTask, respawnTask, runTaskNow } from "./actions.js";
import { getJSON, setStatus } from "./api.js";
import { el, field } from "./dom.js";
import { clockSeconds, count, dateTime, seconds, words } from "./format.js";
import { cell, params, start, table } from "./page.js";

// ran writes how long a run took, from its start (else its schedule) to
// its end; "—" while it runs.
function ran(r) {
  const from = r.started || r.scheduled;
  return r.ended && from ? seconds((new Date(r.ended) - new Date(from)) / 1000) : "—";
}

function runRow(r) {
  return el("tr", { "data-run": String(r.id) },
    cell("id", String(r.id)), cell("status", words(r.status)), cell("scheduled", dateTime(r.scheduled, "—")),
    cell("confirmed", dateTime(r.confirmed, "not confirmed")), cell("started", dateTime(r.started, "—")),
    cell("ended", dateTime(r.ended, "—")), cell("duration", ran(r)), cell("backend_id", r.backend_id),
    cell("metadata", Object.keys(r.metadata).length ? JSON.stringify(r.metadata) : "none"));
}

async function load() {
  if (!/^\d+$/.test(id || "")) {
    setStatus("no task: open this page from the tasks page (/task?id=N)", true);
    return;
  }
  const d = await getJSON("/api/v1/tasks/" + id);
  if (!d) return;
  const t = d.task;
  document.getElementById("title").textContent = `Task ${t.id} (${t.type})`;
  document.getElementById("task").replaceChildren(
    ...field("type", "type", t.type), ...field("status", "status", words(t.status)),
    ...field("policy", "policy", t.policy), ...field("priority", "priority", t.priority || "none"),
    ...field("next run", "next_run", dateTime(t.next_run)),
    ...field("interval between runs", "current_interval", t.current_interval),
    ...field("retries left", "retries_left", count(t.retries_left)),
    ...field("positional arguments", "args", JSON.stringify(t.arguments.args)),
    ...field("keyword arguments", "kwargs", JSON.stringify(t.arguments.kwargs)));
  table("runs", d.runs.map(runRow), "No run yet.");
  showActions(t);
  setStatus("updated " + clockSeconds(new Date()));
}

// showActions shows the buttons that apply to the task: a disabled or
// completed task is respawned; another disabled, and, waiting for its next
// run, run now.
function showActions(t) {
  const respawnable = t.status === "disabled" || t.status === "completed";
  document.getElementById("run-now").hidden = t.status !== "next_run_not_scheduled";
  document.getElementById("disable").hidden = respawnable;
  document.getElementById("respawn").hidden = !respawnable;
  document.getElementById("task-actions").hidden = false;
}

const id = params.get("id");
document.getElementById("run-now").addEventListener("click", () => runTaskNow(id));
document.getElementById("disable").addEventListener("click", () => disableTask(id));
document.getElementById("respawn").addEventListener("click", () => respawnTask(id));
document.addEventListener("revisit:changed", load);

start(load);
