// revisit console: what its pages share: building elements, writing
// numbers and times, and reading the API with the tab's token.
"use strict";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c === null || c === undefined ? "" : c);
  return e;
}

function fmt(n) {
  return n === null || n === undefined ? "unknown" : Number(n).toLocaleString("en-US");
}

// fmtTime writes an RFC 3339 time of the API as "2026-03-01 12:00:00 UTC";
// null is `none`.
function fmtTime(t, none) {
  if (!t) return none === undefined ? "never" : none;
  return new Date(t).toISOString().replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
}

// fmtSpan writes a number of seconds roughly, in its largest unit: "40 s",
// "12 min", "3 h", "2 d".
function fmtSpan(seconds) {
  const a = Math.abs(seconds);
  return a < 90 ? `${Math.round(a)} s` : a < 5400 ? `${Math.round(a / 60)} min`
    : a < 129600 ? `${Math.round(a / 3600)} h` : `${fmt(Math.round(a / 86400))} d`;
}

// fmtSince writes how long before `now` (both RFC 3339 times) t is, or
// after: "3 h ago", "in 2 d".
function fmtSince(t, now) {
  const s = (Date.parse(now) - Date.parse(t)) / 1000;
  return s >= 0 ? `${fmtSpan(s)} ago` : `in ${fmtSpan(s)}`;
}

function setStatus(text, error) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.classList.toggle("error", !!error);
}

// apiGet returns the JSON document of an API path, read with the tab's
// token. It throws an Error whose message is the API's: on 401 it shows
// the page's token form first.
async function apiGet(path) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem("revisit-token");
  if (token) headers.Authorization = "Bearer " + token;
  let r;
  try {
    r = await fetch(path, { headers });
  } catch (e) {
    throw new Error("cannot reach the server: " + e.message);
  }
  if (r.status === 401) {
    document.getElementById("login").hidden = false;
    throw new Error("a token is needed");
  }
  const d = await r.json();
  if (!r.ok) throw new Error(d.error ? d.error.message : "error " + r.status);
  return d;
}

// onLogin keeps the token the page's form is given for the tab, then
// calls retry.
function onLogin(retry) {
  const form = document.getElementById("login");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("revisit-token", document.getElementById("token").value);
    form.hidden = true;
    retry();
  });
}

// originHref is the console's page of an origin.
function originHref(url, visitType) {
  return "/origin?" + new URLSearchParams({ url, visit_type: visitType });
}
