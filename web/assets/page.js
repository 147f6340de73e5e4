// What the console's pages other than the overview share: reading their
// own URL's parameters, links that change them, tables, and loading the
// page once its token is known.

import { el } from "./dom.js";
import { onLogin } from "./api.js";

// params are the parameters of the page's URL.
export const params = new URLSearchParams(location.search);

// withParams returns the page's path with its parameters changed by
// changes (a null value removes one).
export function withParams(changes) {
  const p = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === "") p.delete(k);
    else p.set(k, v);
  }
  const q = p.toString();
  return location.pathname + (q ? "?" + q : "");
}

// table fills the table #id with rows, or one row saying empty when there
// is none, and shows it.
export function table(id, rows, empty) {
  const t = document.getElementById(id);
  const cols = t.querySelectorAll("thead th").length;
  t.querySelector("tbody").replaceChildren(...(rows.length ? rows
    : [el("tr", {}, el("td", { colspan: cols, class: "empty" }, empty))]));
  t.hidden = false;
}

// cell returns a table cell whose data-field is name, for whoever reads
// the page (the tests).
export function cell(name, ...content) {
  return el("td", { "data-field": name }, ...content);
}

// nextLink shows the link #id to the next page when token is set.
export function nextLink(id, token) {
  const a = document.getElementById(id);
  a.hidden = !token;
  if (token) a.href = withParams({ page_token: token });
}

// start loads the page now, and again once a token is given.
export function start(load) {
  onLogin(load);
  load();
}

// originHref is the console's page of an origin.
export function originHref(url, visitType) {
  return "/origin?" + new URLSearchParams({ url, visit_type: visitType });
}
