// revisit's overview: polls the server's summary (GET /api/v1/dashboard)
// every few seconds and its history of the last hour, 6 or 24 hours (GET
// /api/v1/history, the range of the page's URL) less often, and draws them. Every rate and chart comes
// from the server's history, so a new tab shows the past hour at once.

import { refreshMetrics } from "./actions.js";
import { getJSON, onLogin, setStatus } from "./api.js";
import { el, field } from "./dom.js";
import { clockSeconds, count, dateTime } from "./format.js";
import { visitTypeCard } from "./visittype.js";

const DASHBOARD_MS = 3000;
const HISTORY_MS = 15000;

// RANGES are the ranges of the charts and totals the page offers, by the
// name its URL gives (?range=6h): their minutes and their words.
const RANGES = { "1h": [60, "hour"], "6h": [360, "6 hours"], "24h": [1440, "24 hours"] };
const range = RANGES[new URLSearchParams(location.search).get("range")] ? new URLSearchParams(location.search).get("range") : "1h";
const [HISTORY_MINUTES, RANGE_WORDS] = RANGES[range];
for (const a of document.querySelectorAll("[data-range]")) {
  if (a.dataset.range === range) a.setAttribute("aria-current", "true");
}

// The last answers of the server.
let dashboard = null;
let history = null;

// journal shows the journal client's topic and lag by partition; the
// panel stays hidden when no journal client runs in the server's process.
function journal(j) {
  const panel = document.getElementById("journal");
  panel.hidden = !j;
  if (!j) return;
  const partitions = Object.keys(j.lag).sort((a, b) => Number(a) - Number(b));
  const total = partitions.reduce((sum, p) => sum + j.lag[p], 0);
  panel.querySelector("dl").replaceChildren(...field("topic", "topic", j.topic),
    ...field("messages behind, all partitions", "total_lag", count(total)));
  const rows = partitions.map((p) => el("tr", { "data-partition": p },
    el("td", {}, p), el("td", { "data-field": "lag" }, count(j.lag[p]))));
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { colspan: 2 }, "no batch yet")));
  panel.querySelector("tbody").replaceChildren(...rows);
}

// listers tables the stored scheduler metrics, one row per lister and
// visit type.
function listers(ls) {
  document.querySelector("#listers tbody").replaceChildren(...ls.map((l) =>
    el("tr", { "data-lister": l.lister, "data-visit-type": l.visit_type },
      el("td", {}, l.lister || l.lister_id), el("td", {}, l.visit_type),
      el("td", { "data-field": "origins_known" }, count(l.origins_known)),
      el("td", { "data-field": "origins_enabled" }, count(l.origins_enabled)),
      el("td", { "data-field": "origins_never_visited" }, count(l.origins_never_visited)),
      el("td", { "data-field": "origins_with_pending_changes" }, count(l.origins_with_pending_changes)),
      el("td", {}, dateTime(l.last_update)))));
}

function render() {
  if (!dashboard) return;
  const d = dashboard;
  const now = new Date(d.generated_at);
  const win = history ? { start: new Date(history.start), minutes: history.minutes, words: RANGE_WORDS }
    : { start: new Date(now.getTime() - HISTORY_MINUTES * 60000), minutes: HISTORY_MINUTES, words: RANGE_WORDS };
  const byType = new Map((history ? history.visit_types : []).map((h) => [h.visit_type, h]));
  document.getElementById("visit-types").replaceChildren(
    ...d.visit_types.map((v) => visitTypeCard(v, byType.get(v.visit_type), win, d.orchestrator, now)));
  document.getElementById("no-visit-types").hidden = d.visit_types.length > 0;
  journal(d.journal);
  listers(d.listers);
  setStatus("updated " + clockSeconds(now));
}

async function pollDashboard() {
  const d = await getJSON("/api/v1/dashboard");
  if (d) {
    dashboard = d;
    render();
  }
}

async function pollHistory() {
  const h = await getJSON("/api/v1/history?minutes=" + HISTORY_MINUTES);
  if (h) {
    history = h;
    render();
  }
}

onLogin(() => {
  pollHistory();
  pollDashboard();
});

// An action of the operator changed something: show it at once.
document.addEventListener("revisit:changed", pollDashboard);
document.getElementById("refresh-metrics").addEventListener("click", refreshMetrics);

pollHistory();
pollDashboard();
setInterval(pollDashboard, DASHBOARD_MS);
setInterval(pollHistory, HISTORY_MS);
