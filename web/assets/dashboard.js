// revisit dashboard: polls GET /api/v1/dashboard and draws it. Counters
// only grow; rates come from successive polls kept in `history`. The
// helpers (el, fmt, apiGet…) are console.js's.
"use strict";

const POLL_MS = 3000;
const WINDOW_MS = 60000; // rates are per minute, over the last minute
const KEEP_MS = 15 * 60000; // the chart shows the last 15 minutes
const SVG = "http://www.w3.org/2000/svg";

const history = new Map(); // visit type -> [{t, fetched: {policy: n}}]

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// rates returns, for each policy, the visits fetched per minute over the
// last minute of samples.
function rates(samples) {
  const last = samples[samples.length - 1];
  let first = samples[0];
  for (const s of samples) {
    if (last.t - s.t <= WINDOW_MS) { first = s; break; }
  }
  const out = {};
  const dt = (last.t - first.t) / 60000;
  for (const [p, n] of Object.entries(last.fetched)) {
    out[p] = dt > 0 ? (n - (first.fetched[p] || 0)) / dt : 0;
  }
  return out;
}

// chart draws visits fetched per minute by policy over the kept samples.
function chart(samples, policies) {
  const w = 600, h = 140, pad = 28;
  const root = svg("svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, role: "img",
    "aria-label": "visits scheduled per minute by policy" });
  const series = policies.map(() => []);
  for (let i = 1; i < samples.length; i++) {
    const r = rates(samples.slice(0, i + 1));
    policies.forEach((p, j) => series[j].push([samples[i].t, r[p] || 0]));
  }
  const t0 = samples[0].t, t1 = Math.max(samples[samples.length - 1].t, t0 + 1);
  let ymax = 1;
  for (const s of series) for (const [, y] of s) ymax = Math.max(ymax, y);
  const x = (t) => pad + ((t - t0) / (t1 - t0)) * (w - 2 * pad);
  const y = (v) => h - pad / 2 - (v / ymax) * (h - pad);
  root.append(svg("line", { x1: pad, y1: y(0), x2: w - pad, y2: y(0), stroke: "#c5ccd6" }));
  const top = svg("text", { x: 2, y: y(ymax) + 4 });
  top.textContent = Math.round(ymax) + "/min";
  root.append(top);
  series.forEach((s, j) => {
    if (s.length === 0) return;
    root.append(svg("polyline", { class: "c" + (j % 6),
      points: s.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
  });
  return root;
}

function field(name, value) {
  return [el("dt", {}, name), el("dd", { "data-field": name }, value)];
}

function visitType(v, orchestrator) {
  const now = Date.now();
  const fetched = {};
  for (const p of v.policies) fetched[p.policy] = p.fetched;
  const samples = history.get(v.visit_type) || [];
  samples.push({ t: now, fetched });
  while (samples.length > 2 && now - samples[0].t > KEEP_MS) samples.shift();
  history.set(v.visit_type, samples);

  const card = el("section", { class: "vt", "data-visit-type": v.visit_type });
  const title = el("h3", {}, `${v.visit_type} `, el("small", {}, `(${v.task_type}, queue ${v.queue})`));
  if (v.healthy === false) title.append(el("span", { class: "unhealthy" }, " loop unhealthy"));
  card.append(title);

  const depth = el("meter", { min: 0, max: Math.max(v.max_queue_length, 1), value: v.depth || 0,
    high: v.max_queue_length * 0.95, title: "queue depth against its maximum" });
  const dl = el("dl");
  dl.append(
    ...field("depth", fmt(v.depth)),
    el("dt", {}, "depth / max"), el("dd", {}, depth, " ", el("span", { "data-field": "max_queue_length" }, fmt(v.max_queue_length))),
    ...field("free_slots", fmt(v.free_slots)),
    ...field("in_flight", fmt(v.sent)),
    ...field("pending", fmt(v.pending)),
    ...field("lost", fmt(v.lost)),
    ...field("lost_total", fmt(v.lost_total)),
    ...field("published", fmt(v.published)),
  );
  card.append(dl);

  const results = el("dl", { class: "results" });
  const statuses = Object.keys(v.results).sort();
  if (statuses.length === 0) results.append(el("dt", {}, "results"), el("dd", {}, "none yet"));
  for (const s of statuses) results.append(...field("results." + s, fmt(v.results[s])));
  card.append(el("h4", {}, "Results by outcome"), results);

  if (orchestrator && v.policies.length > 0) {
    const r = rates(samples);
    const totalFetched = v.policies.reduce((a, p) => a + p.fetched, 0);
    const table = el("table", { class: "policies" },
      el("thead", {}, el("tr", {}, el("th", {}, "policy"), el("th", {}, "per minute"),
        el("th", {}, "fetched"), el("th", {}, "fetched share"), el("th", {}, "configured share"))));
    const body = el("tbody");
    v.policies.forEach((p, j) => {
      const share = totalFetched > 0 ? p.fetched / totalFetched : 0;
      body.append(el("tr", { "data-policy": p.policy },
        el("td", {}, el("span", { class: "swatch c" + (j % 6) }), p.policy),
        el("td", {}, (r[p.policy] || 0).toFixed(1)),
        el("td", { "data-field": "fetched" }, fmt(p.fetched)),
        el("td", {}, (100 * share).toFixed(1) + " %"),
        el("td", { "data-field": "share" }, (100 * p.share).toFixed(1) + " %")));
    });
    table.append(body);
    card.append(el("h4", {}, "Visits scheduled per minute by policy"),
      chart(samples, v.policies.map((p) => p.policy)), table);
  } else {
    card.append(el("p", { class: "note" }, "The orchestrator does not run in this process: no policy figures."));
  }
  return card;
}

// journal shows the journal client's topic and lag by partition; the
// panel stays hidden when no journal client runs in the server's process.
function journal(j) {
  const panel = document.getElementById("journal");
  panel.hidden = !j;
  if (!j) return;
  const partitions = Object.keys(j.lag).sort((a, b) => Number(a) - Number(b));
  const total = partitions.reduce((sum, p) => sum + j.lag[p], 0);
  panel.querySelector("dl").replaceChildren(...field("topic", j.topic), ...field("total_lag", fmt(total)));
  const rows = partitions.map((p) => el("tr", { "data-partition": p },
    el("td", {}, p), el("td", { "data-field": "lag" }, fmt(j.lag[p]))));
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { colspan: 2 }, "no batch yet")));
  panel.querySelector("tbody").replaceChildren(...rows);
}

function render(d) {
  const list = document.getElementById("visit-types");
  list.replaceChildren(...d.visit_types.map((v) => visitType(v, d.orchestrator)));
  document.getElementById("no-visit-types").hidden = d.visit_types.length > 0;
  journal(d.journal);
  const body = document.querySelector("#listers tbody");
  body.replaceChildren(...d.listers.map((l) => el("tr", { "data-lister": l.lister, "data-visit-type": l.visit_type },
    el("td", {}, l.lister || l.lister_id), el("td", {}, l.visit_type),
    el("td", { "data-field": "origins_known" }, fmt(l.origins_known)),
    el("td", { "data-field": "origins_enabled" }, fmt(l.origins_enabled)),
    el("td", { "data-field": "origins_never_visited" }, fmt(l.origins_never_visited)),
    el("td", { "data-field": "origins_with_pending_changes" }, fmt(l.origins_with_pending_changes)),
    el("td", {}, new Date(l.last_update).toLocaleString()))));
  setStatus("updated " + new Date(d.generated_at).toLocaleTimeString());
}

async function poll() {
  try {
    render(await apiGet("/api/v1/dashboard"));
  } catch (e) {
    setStatus(e.message, true);
  }
}

onLogin(poll);
poll();
setInterval(poll, POLL_MS);
