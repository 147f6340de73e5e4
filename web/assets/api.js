// Reading the API from a page of the console: with the tab's token, if
// any, and the page's status line and token form.

import { authHeaders, setToken } from "./token.js";

// setStatus shows a short text in the page's status line, as an error or
// not.
export function setStatus(text, error) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.classList.toggle("error", !!error);
}

// getJSON fetches a route of the API with the tab's token, if any; it
// returns null after showing why it could not (the token form on 401).
export async function getJSON(path) {
  const headers = { Accept: "application/json", ...authHeaders() };
  try {
    const r = await fetch(path, { headers });
    if (r.status === 401) {
      document.getElementById("login").hidden = false;
      setStatus("a token is needed", true);
      return null;
    }
    const body = await r.json();
    if (!r.ok) {
      setStatus(body.error ? body.error.message : "error " + r.status, true);
      return null;
    }
    return body;
  } catch (e) {
    setStatus("cannot reach the server: " + e.message, true);
    return null;
  }
}

// onLogin keeps the token given to the page's form for the tab, then
// calls retry.
export function onLogin(retry) {
  const form = document.getElementById("login");
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    setToken(document.getElementById("token").value);
    form.hidden = true;
    retry();
  });
}
