// revisit console, the page of one origin (/origin?url=…&visit_type=…):
// GET /api/v1/origins/detail, drawn and refreshed every few seconds.
// Helpers are console.js's.
"use strict";

const REFRESH_MS = 5000;
const params = new URLSearchParams(location.search);
const listerNames = new Map(); // lister id -> NAME or NAME/INSTANCE, from the listed rows

function fields(dl, pairs) {
  dl.replaceChildren(...pairs.flatMap(([name, label, value]) =>
    [el("dt", {}, label), el("dd", { "data-field": name }, value)]));
}

// when writes a time and how long before or after now it is.
function when(t, now, none) {
  return t ? `${fmtTime(t)} (${fmtSince(t, now)})` : (none === undefined ? "never" : none);
}

function verdict(d) {
  const held = d.cooldowns.filter((c) => c.holds).map((c) => c.cooldown.replace("_", " "));
  if (d.listed.length > 0 && !d.listed.some((r) => r.enabled)) {
    return "Disabled: no grab picks it until a lister lists it again.";
  }
  if (d.eligible) return "Eligible now: a grab may pick it through the policies its rows qualify for.";
  return `Held back now by the ${held.join(", ")} cooldown${held.length > 1 ? "s" : ""}.`;
}

function render(d) {
  for (const r of d.listed) listerNames.set(r.lister_id, r.lister);
  document.title = `${d.url} · revisit`;
  document.getElementById("visit-type").textContent = d.visit_type;
  document.getElementById("url").textContent = d.url;
  document.getElementById("verdict").textContent = verdict(d);

  const s = d.visit_stats || {};
  fields(document.getElementById("visits"), [
    ["last_visit_status", "outcome", s.last_visit_status || "never visited"],
    ["last_visit", "ended", when(s.last_visit, d.now)],
    ["last_successful", "last successful visit", when(s.last_successful, d.now)],
    ["last_snapshot", "last snapshot", s.last_snapshot || "none"],
    ["successive_visits", "visits in a row with this outcome", s.last_visit ? fmt(s.successive_visits) : "none"],
    ["last_scheduled", "last scheduled", when(s.last_scheduled, d.now)],
  ]);

  const flight = document.getElementById("in-flight");
  flight.querySelector("tbody").replaceChildren(...d.in_flight.map((v) => el("tr", { "data-visit": v.id },
    el("td", { "data-field": "state" }, v.state), el("td", {}, when(v.scheduled_at, d.now)),
    el("td", {}, when(v.sent_at, d.now, "not yet")), el("td", {}, v.policy),
    el("td", {}, listerNames.get(v.lister_id) || v.lister_id), el("td", {}, v.owner), el("td", {}, v.id))));
  flight.hidden = d.in_flight.length === 0;
  document.getElementById("no-flight").hidden = d.in_flight.length > 0;

  const n = d.next_visit;
  fields(document.getElementById("next-visit"), [
    ["next_visit_queue_position", "origin's next position", n.next_visit_queue_position === null ? "none" : fmt(n.next_visit_queue_position)],
    ["queue_position", `${d.visit_type} queue position`, fmt(n.queue_position)],
    ["ahead_seconds", "ahead of the queue", n.ahead_seconds === null ? "—"
      : `${fmt(n.ahead_seconds)} s (${n.ahead_seconds < 0 ? "behind by " : ""}${fmtSpan(n.ahead_seconds)})`],
  ]);
  document.getElementById("next-explanation").textContent = n.explanation;

  document.querySelector("#cooldowns tbody").replaceChildren(...d.cooldowns.map((c) => el("tr", { "data-cooldown": c.cooldown },
    el("td", {}, c.cooldown.replace("_", " ")), el("td", {}, c.length),
    el("td", { "data-field": "holds", class: c.holds ? "holds" : "passes" }, c.holds ? "holds" : "passes"),
    el("td", {}, c.holds ? when(c.until, d.now) : "—"),
    el("td", { class: "explanation" }, c.explanation))));

  document.querySelector("#listed tbody").replaceChildren(...d.listed.map((r) => el("tr", { "data-lister": r.lister },
    el("td", {}, r.lister), el("td", { "data-field": "enabled" }, r.enabled ? "yes" : "no"),
    el("td", {}, fmtTime(r.last_update, "unknown")), el("td", {}, fmtTime(r.first_seen)), el("td", {}, fmtTime(r.last_seen)),
    el("td", {}, r.policies.join(", ")), el("td", {}, JSON.stringify(r.extra_loader_arguments)))));

  document.getElementById("origin").hidden = false;
  setStatus("updated " + fmtTime(d.now));
}

async function refresh() {
  try {
    render(await apiGet("/api/v1/origins/detail?" + new URLSearchParams({
      url: params.get("url") || "", visit_type: params.get("visit_type") || "" })));
  } catch (e) {
    setStatus(e.message, true);
  }
}

onLogin(refresh);
refresh();
setInterval(refresh, REFRESH_MS);
