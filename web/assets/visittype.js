// The card of one visit type on the overview: its loop's state in words,
// its queue, rates and totals from the server's history, its policies'
// shares, and charts of the history's window.

import { pauseVisitType, requeueLost, resumeVisitType } from "./actions.js";
import { el, field } from "./dom.js";
import { lineChart } from "./chart.js";
import { loopHint, loopWords, pausedWords } from "./loop.js";
import { count, OUTCOMES, outcomeName, percent, policyName, rate } from "./format.js";

// RECENT is how many minutes the rates average over.
const RECENT = 10;

// known returns the values of a series that a minute has.
function known(values) {
  return (values || []).filter((v) => v !== null && v !== undefined);
}

// total adds the values of a series; null when it has none.
function total(values) {
  const k = known(values);
  return k.length ? k.reduce((a, b) => a + b, 0) : null;
}

// upMinutes is how many of the last RECENT minutes the server sampled
// the visit type (its queue is measured every minute): every rate of the
// card divides by them, so that a server up for a minute shows the
// visits of that minute per minute, and the policies' rates add up to the
// visit type's.
function upMinutes(h) {
  return h ? known((h.queue_depth || []).slice(-RECENT)).length : 0;
}

// recentRate is the mean per minute of a series over the last minutes
// that the server sampled; null when it sampled none or the series has no
// value then.
function recentRate(values, minutes) {
  const recent = known((values || []).slice(-RECENT));
  return minutes > 0 && recent.length ? recent.reduce((a, b) => a + b, 0) / minutes : null;
}

// sum adds series minute by minute; a minute without a value in any of
// them has none.
function sum(series, minutes) {
  const out = new Array(minutes).fill(null);
  for (const values of series) {
    (values || []).forEach((v, i) => {
      if (v !== null && v !== undefined) out[i] = (out[i] || 0) + v;
    });
  }
  return out;
}

// charts draws the visit type's history over the window win.
function charts(v, h, win) {
  const none = new Array(win.minutes).fill(null);
  const base = { start: win.start, minutes: win.minutes };
  const policies = [...new Set([...v.policies.map((p) => p.policy), ...Object.keys(h ? h.scheduled : {})])];
  const scheduled = policies.map((p, j) => ({ label: policyName(p), cls: "c" + (j % 6),
    values: h && h.scheduled[p] ? h.scheduled[p] : none }));
  if (h && known(h.scheduled_without_policy).some((n) => n > 0)) {
    scheduled.push({ label: "policy not recorded (before the restart)", cls: "c-muted", values: h.scheduled_without_policy });
  }
  const outcomes = [...new Set([...OUTCOMES.filter((o) => h && h.results[o]), ...Object.keys(h ? h.results : {})])];
  const results = outcomes.map((o) => ({ label: outcomeName(o), cls: "o-" + o, values: h.results[o] }));
  results.push({ label: "lost", cls: "o-lost", values: h ? h.lost : none });
  return el("div", { class: "charts" },
    lineChart({ ...base, name: "scheduled", title: "Visits scheduled per minute, by policy", unit: "visits/min",
      series: scheduled }),
    lineChart({ ...base, name: "results", title: "Results per minute, by outcome, and visits lost", unit: "per minute",
      series: results }),
    lineChart({ ...base, name: "queue", title: "Queue depth and free slots", unit: "messages", series: [
        { label: "queue depth", cls: "q-depth", values: h ? h.queue_depth : none },
        { label: "free slots", cls: "q-free", values: h ? h.free_slots : none }] }),
    lineChart({ ...base, name: "latency", title: "Grab latency, 95th percentile of each minute", unit: "ms",
      scale: (s) => 1000 * s, series: [{ label: "95th percentile", cls: "c0", values: h ? h.grab_p95_seconds : none }] }));
}

// policies tables the policies: configured weight and share against the
// share of the visits they scheduled over the window.
function policies(v, h, win) {
  const scheduled = {};
  for (const p of v.policies) scheduled[p.policy] = h && h.scheduled[p.policy] ? h.scheduled[p.policy] : [];
  const all = Object.values(scheduled).reduce((a, vals) => a + (total(vals) || 0), 0);
  const head = el("tr", {}, ...["policy", "weight", "configured share", `share of the last ${win.words}`,
    "visits/min (last 10 min)", `visits (last ${win.words})`].map((t) => el("th", {}, t)));
  const rows = v.policies.map((p, j) => {
    const n = total(scheduled[p.policy]);
    const recent = recentRate(scheduled[p.policy], upMinutes(h));
    return el("tr", { "data-policy": p.policy },
      el("td", { title: p.policy }, el("span", { class: "swatch c" + (j % 6) }), policyName(p.policy)),
      el("td", {}, String(p.weight)),
      el("td", { "data-field": "share" }, percent(p.share)),
      el("td", { "data-field": "scheduled_share" }, all > 0 ? percent((n || 0) / all) : "—"),
      el("td", { "data-field": "scheduled_rate" }, recent === null ? "—" : rate(recent)),
      el("td", { "data-field": "scheduled" }, count(n || 0)));
  });
  return el("table", { class: "policies" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

// button returns a button of the operator's actions that runs act.
function button(name, label, title, act) {
  const b = el("button", { type: "button", "data-action": name, title }, label);
  b.addEventListener("click", act);
  return b;
}

// actions returns the buttons of the operator's actions on a visit type:
// pause or resume its loop, requeue its visits in flight.
function actions(v) {
  const vt = v.visit_type;
  const pause = v.paused
    ? button("resume", "Resume…", "Its loop runs a round at once.", () => resumeVisitType(vt))
    : button("pause", "Pause…", "Its loop runs no round, in any process, until resumed.", () => pauseVisitType(vt));
  return el("div", { class: "actions" }, pause,
    button("requeue-lost", "Requeue lost visits…",
      "Declare lost the visits sent and still without a result, and offer their origins again at once.",
      () => requeueLost(vt)));
}

// visitTypeCard returns the card of the dashboard's visit type v, with
// its history h (undefined before the history's first answer), the
// history's window win ({start, minutes, words}: words name its length, as
// "6 hours"), whether the orchestrator runs
// in the server's process, and the server's time now.
export function visitTypeCard(v, h, win, orchestrator, now) {
  const card = el("section", { class: "vt", "data-visit-type": v.visit_type });
  const link = (name, href, text) => el("a", { href, "data-link": name }, text);
  card.append(el("h3", {}, v.visit_type + " ", el("small", {}, `(${v.task_type}, queue ${v.queue})`)),
    el("p", { class: "links" }, link("queue", "/queues?" + new URLSearchParams({ queue: v.queue }), "its queue"), " · ",
      link("waiting", "/origins?" + new URLSearchParams({ visit_type: v.visit_type }), "origins waiting longest"), " · ",
      link("failures", "/origins?" + new URLSearchParams({ view: "failures", order: "desc", visit_type: v.visit_type }), "recent failures")),
    actions(v));
  const facts = el("div", { class: "facts" });
  const state = v.loop ? v.loop.state : (v.paused ? "paused" : "elsewhere");
  const words = !v.loop && v.paused ? pausedWords(v.paused) + " (driven by another process)" : loopWords(v.loop, now);
  facts.append(el("p", { class: "loop state-" + state, "data-field": "loop", title: loopHint(v.loop) }, words));

  const depth = el("meter", { min: 0, max: Math.max(v.max_queue_length, 1), value: v.depth || 0,
    high: v.max_queue_length * 0.95, title: "queue depth against its maximum" });
  const day = h ? h.last_24h : null;
  const allScheduled = h ? sum([...Object.values(h.scheduled), h.scheduled_without_policy], win.minutes) : [];
  const allResults = h ? sum(Object.values(h.results), win.minutes) : [];
  const figures = el("dl", { class: "figures" });
  figures.append(
    ...field("queue depth", "depth", count(v.depth), " of ",
      el("span", { "data-field": "max_queue_length" }, count(v.max_queue_length)), " ", depth),
    ...field("free slots", "free_slots", count(v.free_slots)),
    ...field("visits in flight", "in_flight", count(v.sent)),
    ...field("visits being published", "pending", count(v.pending + v.publishing)),
    ...field("visits scheduled (last 10 min)", "scheduled_rate", rate(recentRate(allScheduled, upMinutes(h)), "visits/min")),
    ...field("results (last 10 min)", "results_rate", rate(recentRate(allResults, upMinutes(h)), "results/min")),
    ...field("lost visits (24 h)", "lost_24h", day ? count(day.lost) : "no data yet"),
    ...field("lost visits awaiting a late result", "lost_kept", count(v.lost)),
  );
  facts.append(figures);

  const results = el("dl", { class: "results" });
  const outcomes = day ? [...new Set([...OUTCOMES.filter((o) => o in day.results), ...Object.keys(day.results)])] : [];
  for (const o of outcomes) results.append(...field(outcomeName(o), "results." + o, count(day.results[o])));
  if (outcomes.length === 0) results.append(el("dt", {}, "results"), el("dd", {}, "none in the last 24 h"));
  facts.append(el("h4", {}, "Results by outcome (24 h)"), results);

  if (orchestrator && v.policies.length > 0) {
    facts.append(el("h4", {}, "Policies"), policies(v, h, win));
  } else {
    facts.append(el("p", { class: "note" }, "The orchestrator does not run in this process: no policy shares."));
  }
  card.append(el("div", { class: "columns" }, facts, el("div", {}, el("h4", {}, "The last " + win.words), charts(v, h, win))));
  return card;
}
