// The API token of the tab: asked for when the API has tokens, kept in
// the browser's session storage, sent with every request of the page.

const KEY = "revisit-token";

// authHeaders returns the Authorization header of the tab's token, if any.
export function authHeaders() {
  const token = sessionStorage.getItem(KEY);
  return token ? { Authorization: "Bearer " + token } : {};
}

// setToken keeps the token for the tab.
export function setToken(token) {
  sessionStorage.setItem(KEY, token);
}
