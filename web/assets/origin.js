// revisit console, the page of one origin (/origin?url=…&visit_type=…):
// GET /api/v1/origins/detail, drawn and refreshed every few seconds, and
// the operator's actions on it (actions.js).

import { setOriginEnabled, visitNow } from "./actions.js";
import { getJSON, onLogin, setStatus } from "./api.js";
import { el } from "./dom.js";
import { count, dateTime, outcomeName, policyName, seconds, when } from "./format.js";
import { params } from "./page.js";

const REFRESH_MS = 5000;
const listerNames = new Map(); // lister id -> NAME or NAME/INSTANCE, from the listed rows

function fields(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([name, label, value]) =>
    [el("dt", {}, label), el("dd", { "data-field": name }, value)]));
}

function verdict(d) {
  const held = d.cooldowns.filter((c) => c.holds).map((c) => c.cooldown.replace("_", " "));
  if (d.listed.length > 0 && !d.listed.some((r) => r.enabled)) {
    return "Disabled: no grab picks it until a lister lists it again.";
  }
  if (d.eligible) return "Eligible now: a grab may pick it through the policies its rows qualify for.";
  return `Held back now by the ${held.join(", ")} cooldown${held.length > 1 ? "s" : ""}.`;
}

// dueWords says when the origin is due on its visit type's clock, in
// hours and days of that clock.
function dueWords(n, visitType) {
  if (n.ahead_seconds === null) return "at its first visit's place (no position before it)";
  const span = seconds(Math.abs(n.ahead_seconds));
  return n.ahead_seconds > 0 ? `in ${span} of ${visitType}'s clock` : `now: ${span} behind ${visitType}'s clock`;
}

// COOLDOWNS_FROM says whose cooldowns the table applies.
const COOLDOWNS_FROM = {
  orchestrator: "With the lengths the orchestrator of this server uses for this visit type.",
  defaults: "With their default lengths: no orchestrator runs in this server to say its own.",
};

function render(d) {
  const now = new Date(d.now);
  for (const r of d.listed) listerNames.set(r.lister_id, r.lister);
  document.title = `${d.url} · revisit`;
  document.getElementById("visit-type").textContent = d.visit_type;
  document.getElementById("url").textContent = d.url;
  document.getElementById("verdict").textContent = verdict(d);

  const s = d.visit_stats || {};
  fields(document.getElementById("visits"), [
    ["last_visit_status", "outcome", s.last_visit_status ? outcomeName(s.last_visit_status) : "never visited"],
    ["last_visit", "ended", when(s.last_visit, now)],
    ["last_successful", "last successful visit", when(s.last_successful, now)],
    ["last_snapshot", "last snapshot", s.last_snapshot || "none"],
    ["successive_visits", "visits in a row with this outcome", s.last_visit ? count(s.successive_visits) : "none"],
    ["last_scheduled", "last scheduled", when(s.last_scheduled, now)],
  ]);

  const recent = document.getElementById("recent");
  recent.querySelector("tbody").replaceChildren(...d.recent_results.map((r) => el("tr", { "data-date": r.date },
    el("td", { "data-field": "date" }, when(r.date, now)), el("td", { "data-field": "status" }, outcomeName(r.status)),
    el("td", { "data-field": "eventful" }, r.status !== "successful" ? "—" : r.eventful ? "yes" : "no"))));
  recent.hidden = d.recent_results.length === 0;
  document.getElementById("no-recent").hidden = d.recent_results.length > 0;

  const flight = document.getElementById("in-flight");
  flight.querySelector("tbody").replaceChildren(...d.in_flight.map((v) => el("tr", { "data-visit": v.id },
    el("td", { "data-field": "state" }, v.state), el("td", {}, when(v.scheduled_at, now)),
    el("td", {}, when(v.sent_at, now, "not yet")), el("td", {}, v.policy),
    el("td", {}, listerNames.get(v.lister_id) || v.lister_id), el("td", {}, v.owner), el("td", {}, v.id))));
  flight.hidden = d.in_flight.length === 0;
  document.getElementById("no-flight").hidden = d.in_flight.length > 0;

  const n = d.next_visit;
  fields(document.getElementById("next-visit"), [
    ["ahead_seconds", "due", dueWords(n, d.visit_type)],
    ["next_visit_queue_position", "origin's next position", n.next_visit_queue_position === null ? "none" : count(n.next_visit_queue_position)],
    ["queue_position", `${d.visit_type} queue position`, count(n.queue_position)],
  ]);
  document.getElementById("next-explanation").textContent = n.explanation;
  document.getElementById("cooldowns-from").textContent = COOLDOWNS_FROM[d.cooldowns_from] || "";

  document.querySelector("#cooldowns tbody").replaceChildren(...d.cooldowns.map((c) => el("tr", { "data-cooldown": c.cooldown },
    el("td", {}, c.cooldown.replace("_", " ")), el("td", {}, c.length),
    el("td", { "data-field": "holds", class: c.holds ? "holds" : "passes" }, c.holds ? "holds" : "passes"),
    el("td", {}, c.holds ? when(c.until, now) : "—"),
    el("td", { class: "explanation" }, c.explanation))));

  // The button that applies: disable while a row is enabled, enable
  // while one is disabled (both when the listers' rows differ).
  document.getElementById("disable").hidden = !d.listed.some((r) => r.enabled);
  document.getElementById("enable").hidden = !d.listed.some((r) => !r.enabled);

  document.querySelector("#listed tbody").replaceChildren(...d.listed.map((r) => el("tr", { "data-lister": r.lister },
    el("td", { "data-field": "lister" }, el("a", { href: "/origins?" + new URLSearchParams({ lister: r.lister, visit_type: d.visit_type }) }, r.lister)), el("td", { "data-field": "enabled" }, r.enabled ? "yes" : "no"),
    el("td", {}, dateTime(r.last_update, "unknown")), el("td", {}, dateTime(r.first_seen)), el("td", {}, dateTime(r.last_seen)),
    el("td", { "data-field": "policies" }, r.policies.map(policyName).join(", ") || "none"), el("td", {}, JSON.stringify(r.extra_loader_arguments)))));

  document.getElementById("origin").hidden = false;
  setStatus("updated " + dateTime(d.now));
}

async function refresh() {
  const d = await getJSON("/api/v1/origins/detail?" + new URLSearchParams({
    url: params.get("url") || "", visit_type: params.get("visit_type") || "" }));
  if (d) render(d);
}

const url = params.get("url") || "";
const visitType = params.get("visit_type") || "";

// links links the origin's visit type's task type, queue and failures.
async function links() {
  const taskType = "load-" + visitType;
  document.getElementById("task-type-link").href = "/tasks?" + new URLSearchParams({ type: taskType });
  document.getElementById("task-type-link").textContent = "task type " + taskType;
  document.getElementById("failures-link").href = "/origins?" + new URLSearchParams({ view: "failures", order: "desc", visit_type: visitType });
  const t = await getJSON("/api/v1/task-types/" + encodeURIComponent(taskType));
  if (t) {
    document.getElementById("queue-link").href = "/queues?" + new URLSearchParams({ queue: t.backend_name });
    document.getElementById("queue-link").textContent = "queue " + t.backend_name;
  }
}
document.getElementById("visit-now").addEventListener("click", () => visitNow(url, visitType));
document.getElementById("disable").addEventListener("click", () => setOriginEnabled(url, visitType, false));
document.getElementById("enable").addEventListener("click", () => setOriginEnabled(url, visitType, true));
document.addEventListener("revisit:changed", refresh);

onLogin(() => { links(); refresh(); });
links();
refresh();
setInterval(refresh, REFRESH_MS);
