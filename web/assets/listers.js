// The listers page: each lister with its last listing, its first visits
// and its stored scheduler metrics by visit type (GET /api/v1/listers and
// GET /api/v1/scheduler-metrics: no count of origins per request); each
// lister links to its origins.

import { getJSON, setStatus } from "./api.js";
import { el } from "./dom.js";
import { clockSeconds, count, dateTime } from "./format.js";
import { cell, start, table } from "./page.js";

// label writes a lister as NAME or NAME/INSTANCE, as /origins?lister=
// takes it.
function label(l) {
  return l.instance_name ? `${l.name}/${l.instance_name}` : l.name;
}

// firstVisits says where the lister's first visits go and whether those
// of its last listing were all scheduled.
function firstVisits(l) {
  if (!l.first_visits_queue_prefix) return "with the other visits";
  const queues = `to the queues ${l.first_visits_queue_prefix}:…`;
  return l.first_visits_scheduled_at ? `${queues}, all scheduled at ${dateTime(l.first_visits_scheduled_at)}`
    : `${queues}, not all scheduled yet`;
}

// rows are the rows of one lister: one per visit type of its metrics
// (at least one), the lister's own cells spanning them.
function rows(l, metrics) {
  const span = String(Math.max(metrics.length, 1));
  const own = [
    el("td", { rowspan: span, "data-field": "lister" }, el("a", { href: "/origins?" + new URLSearchParams({ lister: label(l) }) }, label(l))),
    el("td", { rowspan: span, "data-field": "last_listing_finished_at" }, dateTime(l.last_listing_finished_at, "not yet")),
    el("td", { rowspan: span, "data-field": "first_visits" }, firstVisits(l)),
  ];
  if (metrics.length === 0) {
    return [el("tr", { "data-lister": label(l) }, ...own, el("td", { colspan: "6", class: "empty" }, "no metrics computed yet"))];
  }
  return metrics.map((m, i) => el("tr", { "data-lister": label(l), "data-visit-type": m.visit_type },
    ...(i === 0 ? own : []),
    cell("visit_type", el("a", { href: "/origins?" + new URLSearchParams({ lister: label(l), visit_type: m.visit_type }) }, m.visit_type)), cell("origins_known", count(m.origins_known)),
    cell("origins_enabled", count(m.origins_enabled)), cell("origins_never_visited", count(m.origins_never_visited)),
    cell("origins_with_pending_changes", count(m.origins_with_pending_changes)), cell("last_update", dateTime(m.last_update))));
}

async function load() {
  const [ls, ms] = [await getJSON("/api/v1/listers"), await getJSON("/api/v1/scheduler-metrics")];
  if (!ls || !ms) return;
  const byLister = new Map();
  for (const m of ms.metrics) {
    if (!byLister.has(m.lister_id)) byLister.set(m.lister_id, []);
    byLister.get(m.lister_id).push(m);
  }
  table("listers", ls.listers.flatMap((l) => rows(l, byLister.get(l.id) || [])), "No lister yet.");
  setStatus("updated " + clockSeconds(new Date()));
}

start(load);
