// The workers page: the embedded broker's workers this server saw since it
// started, and those holding leases now (GET /api/v1/workers).

import { getJSON, setStatus } from "./api.js";
import { el } from "./dom.js";
import { clock, clockSeconds, count, dateTime, fromNow, outcomeName } from "./format.js";
import { cell, start, table } from "./page.js";

const REFRESH_MS = 5000;

// ago writes a time of this server's memory and how long ago it was;
// none when there is none.
function ago(t, now, none) {
  return t ? el("span", { title: dateTime(t) }, fromNow(t, now)) : none;
}

// leases writes the messages a worker holds, by queue.
function leases(held) {
  const queues = Object.keys(held).sort();
  if (queues.length === 0) return "none";
  const total = queues.reduce((n, q) => n + held[q], 0);
  return queues.length === 1 ? count(total) : `${count(total)} (` + queues.map((q) => `${q}: ${count(held[q])}`).join(", ") + ")";
}

// RESULT_WORDS write the statuses of the worker protocol in the console's
// vocabulary of outcomes: successful, failed, not found, eventful a flag.
const RESULT_WORDS = { eventful: "successful, eventful", uneventful: "successful, not eventful" };
const RESULT_ORDER = ["eventful", "uneventful", "failed", "not_found"];

// results writes the results a worker reported, by outcome.
function results(r) {
  const rank = (s) => (RESULT_ORDER.includes(s) ? RESULT_ORDER.indexOf(s) : RESULT_ORDER.length);
  const statuses = Object.keys(r).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return statuses.length ? statuses.map((s) => `${RESULT_WORDS[s] || outcomeName(s)}: ${count(r[s])}`).join("; ") : "none";
}

function row(w, now) {
  const unseen = w.seen ? "" : "not seen by this server";
  return el("tr", { "data-worker": w.name },
    cell("name", w.name), cell("queues", w.queues.join(", ") || "—"), cell("leases_held", leases(w.leases_held)),
    cell("next_lease_expiry", w.next_lease_expiry ? `${dateTime(w.next_lease_expiry)} (${fromNow(w.next_lease_expiry, now)})` : "—"),
    cell("last_seen", ago(w.last_seen, now, unseen)), cell("last_lease", ago(w.last_lease, now, "—")),
    cell("last_heartbeat", ago(w.last_heartbeat, now, "—")), cell("last_result", ago(w.last_result, now, "—")),
    cell("results", results(w.results)));
}

async function load() {
  const d = await getJSON("/api/v1/workers");
  if (!d) return;
  const now = new Date(d.generated_at);
  const since = new Date(d.since);
  document.getElementById("workers-note").title = "since " + dateTime(d.since);
  let note = `Workers seen by this server since ${clock(since)}, when it started: what they did through it ` +
    `is kept in its memory only, for ${count(d.max_workers)} workers at most. ` +
    "Leases held now come from the store, whichever server a worker leased through.";
  if (d.forgotten > 0) note += ` ${count(d.forgotten)} workers seen longest ago were forgotten.`;
  document.getElementById("workers-note").textContent = note;
  table("workers", d.workers.map((w) => row(w, now)), "No worker seen yet, and none holds a lease.");
  setStatus("updated " + clockSeconds(now));
}

start(load);
setInterval(load, REFRESH_MS);
