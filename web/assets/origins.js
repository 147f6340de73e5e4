// revisit console, the origins page: searches listed origins by URL
// (GET /api/v1/origins/search) with the filters of the page's own URL, so
// that a search is a link; the form submits to that URL.

import { getJSON, onLogin, setStatus } from "./api.js";
import { el } from "./dom.js";
import { count, dateTime } from "./format.js";
import { originHref, params } from "./page.js";

const PAGE_SIZE = 50;
const FILTERS = ["q", "match", "lister", "visit_type", "enabled"];

const listerNames = new Map(); // lister id -> NAME or NAME/INSTANCE

// fillForm shows the search of the page's URL in the form.
function fillForm(listers) {
  const options = [el("option", { value: "" }, "any")];
  for (const l of listers) {
    const label = l.instance_name ? `${l.name}/${l.instance_name}` : l.name;
    listerNames.set(l.id, label);
    options.push(el("option", { value: label }, label));
  }
  document.getElementById("lister").replaceChildren(...options);
  for (const name of FILTERS) {
    if (params.has(name)) document.getElementById(name).value = params.get(name);
  }
}

function row(o) {
  const visit = o.last_visit ? `${o.last_visit_status} ${dateTime(o.last_visit)}` : "never";
  return el("tr", { "data-url": o.url, "data-visit-type": o.visit_type },
    el("td", { "data-field": "url" }, el("a", { href: originHref(o.url, o.visit_type) }, o.url)),
    el("td", { "data-field": "visit_type" }, o.visit_type),
    el("td", { "data-field": "lister" }, listerNames.get(o.lister_id) || o.lister_id),
    el("td", { "data-field": "enabled" }, o.enabled ? "yes" : "no"),
    el("td", {}, dateTime(o.last_update, "unknown")),
    el("td", { "data-field": "last_visit" }, visit),
    el("td", {}, dateTime(o.last_seen)));
}

// search runs the page's search and shows its rows, and a link to the next
// page when there is one.
async function search() {
  const query = new URLSearchParams({ limit: PAGE_SIZE });
  for (const name of [...FILTERS, "page_token"]) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  setStatus("searching…");
  const started = performance.now();
  const page = await getJSON("/api/v1/origins/search?" + query);
  if (!page) return;
  const ms = Math.round(performance.now() - started);
  const table = document.getElementById("results");
  table.querySelector("tbody").replaceChildren(...page.origins.map(row));
  table.hidden = page.origins.length === 0;
  const more = page.next_page_token !== undefined;
  document.getElementById("summary").textContent = page.origins.length === 0
    ? (more ? "No match in this stretch of URLs: see the next page." : "No listed origin matches.")
    : `${count(page.origins.length)} listed row${page.origins.length > 1 ? "s" : ""}${more ? ", more on the next page" : ""}.`;
  const next = document.getElementById("next");
  next.hidden = !more;
  if (more) {
    const p = new URLSearchParams(params);
    p.set("page_token", page.next_page_token);
    next.href = "/origins?" + p;
  }
  setStatus(`searched in ${ms} ms`);
}

async function load() {
  const listers = await getJSON("/api/v1/listers");
  if (!listers) return;
  fillForm(listers.listers);
  document.getElementById("q").focus();
  if (FILTERS.some((name) => params.get(name))) await search();
  else setStatus("");
}

onLogin(load);
load();
