// revisit console, the origins page. With a URL to search (q), it searches
// listed origins by URL (GET /api/v1/origins/search); otherwise it browses
// a visit type's origins (GET /api/v1/origins/browse) in one of its views:
// those waiting longest, those scheduled last, the recent failures, the
// disabled ones, filtered by lister and by the last visit's outcome, a
// page at a time both ways. Every search and browse is the page's own URL,
// so that it is a link; the forms submit to that URL.

import { getJSON, onLogin, setStatus } from "./api.js";
import { el } from "./dom.js";
import { count, dateTime, outcomeName } from "./format.js";
import { originHref, params, withParams } from "./page.js";

const PAGE_SIZE = 50;
const SEARCH_FILTERS = ["q", "match", "lister", "visit_type", "enabled"];
const searching = params.has("q") || params.has("match");

const listerNames = new Map(); // lister id -> NAME or NAME/INSTANCE

// tab is the browse's view as the page's tabs name it.
function tab() {
  if (params.get("view") === "failures") return "failures";
  if (params.get("enabled") === "false") return "disabled";
  return params.get("order") === "desc" ? "recent" : "scheduled";
}

// TABS are the parameters of each view's tab.
const TABS = {
  scheduled: {},
  recent: { order: "desc" },
  failures: { view: "failures", order: "desc" },
  disabled: { enabled: "false" },
};

const NOTES = {
  scheduled: "Origins without a visit in flight, those scheduled longest ago first (never scheduled before all).",
  recent: "Origins without a visit in flight, those scheduled last first: mostly those just visited.",
  failures: "Origins whose last visit failed or found nothing, and that no visit retries now.",
  disabled: "Disabled origins: no policy chooses them until they are enabled or listed again.",
};

function listerLabel(l) {
  return l.instance_name ? `${l.name}/${l.instance_name}` : l.name;
}

// fillForms shows the search or browse of the page's URL in its form.
function fillForms(listers, visitTypes) {
  for (const l of listers) listerNames.set(l.id, listerLabel(l));
  for (const select of document.querySelectorAll("select[data-listers]")) {
    select.replaceChildren(el("option", { value: "" }, "any"),
      ...listers.map((l) => el("option", { value: listerLabel(l) }, listerLabel(l))));
  }
  document.getElementById("b-visit_type").replaceChildren(...visitTypes.map((vt) => el("option", { value: vt }, vt)));
  if (searching) {
    for (const name of SEARCH_FILTERS) {
      if (params.has(name)) document.getElementById(name).value = params.get(name);
    }
    return;
  }
  for (const name of ["visit_type", "lister", "outcome", "order", "view", "enabled"]) {
    if (params.has(name)) document.getElementById("b-" + name).value = params.get(name);
  }
  const failures = tab() === "failures";
  for (const o of document.querySelectorAll("#b-outcome option")) {
    o.disabled = failures && !["", "failed", "not_found"].includes(o.value);
  }
}

// lastVisit writes a row's last visit: its outcome in words and its time.
function lastVisit(o) {
  return o.last_visit ? `${outcomeName(o.last_visit_status)}, ${dateTime(o.last_visit)}` : "never";
}

function row(o) {
  const lister = listerNames.get(o.lister_id) || o.lister_id;
  return el("tr", { "data-url": o.url, "data-visit-type": o.visit_type },
    el("td", { "data-field": "url" }, el("a", { href: originHref(o.url, o.visit_type) }, o.url)),
    el("td", { "data-field": "visit_type" }, o.visit_type),
    el("td", { "data-field": "lister" }, el("a", { href: "/origins?" + new URLSearchParams({ lister, visit_type: o.visit_type }) }, lister)),
    el("td", { "data-field": "enabled" }, o.enabled ? "yes" : "no"),
    el("td", {}, dateTime(o.last_update, "unknown")),
    el("td", { "data-field": "last_visit" }, lastVisit(o)),
    el("td", { "data-field": "last_scheduled" }, o.last_scheduled === undefined ? "—" : dateTime(o.last_scheduled)));
}

// pageLink shows the link #id to another page when token is set.
function pageLink(id, token) {
  const a = document.getElementById(id);
  a.hidden = !token;
  if (token) a.href = withParams({ page_token: token });
}

// show tables a page of rows and says what it holds.
function show(page, empty) {
  const table = document.getElementById("results");
  table.querySelector("tbody").replaceChildren(...page.origins.map(row));
  table.hidden = page.origins.length === 0;
  const more = page.next_page_token !== undefined;
  document.getElementById("summary").textContent = page.origins.length === 0
    ? (more ? "None in this stretch: see the next page." : empty)
    : `${count(page.origins.length)} listed row${page.origins.length > 1 ? "s" : ""}${more ? ", more on the next page" : ""}.`;
  pageLink("next", page.next_page_token);
  pageLink("prev", page.prev_page_token);
}

// timed runs a read of the API and says how long it took.
async function timed(what, read) {
  setStatus(what + "…");
  const started = performance.now();
  const page = await read();
  if (page) setStatus(`${what === "searching" ? "searched" : "read"} in ${Math.round(performance.now() - started)} ms`);
  return page;
}

async function search() {
  document.getElementById("search-note").hidden = false;
  const query = new URLSearchParams({ limit: PAGE_SIZE });
  for (const name of [...SEARCH_FILTERS, "page_token"]) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  const page = await timed("searching", () => getJSON("/api/v1/origins/search?" + query));
  if (page) show(page, "No listed origin matches.");
}

// browse reads the page of the browse of the page's URL, of its visit
// type or else the first there is.
async function browse(visitTypes) {
  document.getElementById("browse").hidden = false;
  const current = tab();
  const keep = Object.entries({ lister: params.get("lister"), visit_type: params.get("visit_type") }).filter(([, v]) => v);
  for (const a of document.querySelectorAll("#views a")) {
    a.classList.toggle("current", a.dataset.view === current);
    a.href = "/origins?" + new URLSearchParams([...Object.entries(TABS[a.dataset.view]), ...keep]);
  }
  document.getElementById("browse-note").textContent = NOTES[current];
  const visitType = params.get("visit_type") || visitTypes[0];
  if (!visitType) {
    document.getElementById("summary").textContent = "No visit type yet: register a load-* task type (revisit task-type add load-git …).";
    setStatus("");
    return;
  }
  document.getElementById("b-visit_type").value = visitType;
  const query = new URLSearchParams({ visit_type: visitType, limit: PAGE_SIZE });
  for (const name of ["view", "order", "lister", "enabled", "outcome", "page_token"]) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  const page = await timed("reading", () => getJSON("/api/v1/origins/browse?" + query));
  if (page) show(page, `No ${visitType} origin here.`);
}

async function load() {
  const [listers, types] = await Promise.all([getJSON("/api/v1/listers"), getJSON("/api/v1/task-types")]);
  if (!listers || !types) return;
  const visitTypes = types.task_types.map((t) => t.type).filter((t) => t.startsWith("load-")).map((t) => t.slice(5));
  fillForms(listers.listers, visitTypes);
  if (searching) {
    await search();
  } else {
    await browse(visitTypes);
  }
}

onLogin(load);
load();
