// The words and numbers of the page: figures with their units, times, and
// readable names of policies and outcomes.

// count writes a number with thousands separators; "unknown" for none.
export function count(n) {
  return n === null || n === undefined ? "unknown" : Math.round(n).toLocaleString("en-US");
}

// rate writes a per-minute figure, one decimal below 10, whole above,
// followed by its unit if given; "no data yet" for none.
export function rate(n, unit) {
  if (n === null || n === undefined) return "no data yet";
  const v = n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US");
  return unit ? v + " " + unit : v;
}

// percent writes a share (0 to 1) as a percentage.
export function percent(share) {
  return share === null || share === undefined ? "—" : (100 * share).toFixed(1) + " %";
}

// seconds writes a duration in seconds as "42 s", "3 min", "2 h" or "5
// days".
export function seconds(s) {
  const n = Math.max(0, Math.round(s));
  if (n < 120) return n + " s";
  if (n < 7200) return Math.round(n / 60) + " min";
  if (n < 172800) return Math.round(n / 3600) + " h";
  return Math.round(n / 86400) + " days";
}

// The console writes every time in UTC, as the API and the logs do: a
// date and time as "2026-03-01 12:00:00 UTC" (dateTime), a time of day as
// "12:00 UTC" (clock) or "12:00:05 UTC" (clockSeconds).

// clock writes the time of day of a date, in UTC, to the minute.
export function clock(d) {
  return d.toISOString().slice(11, 16) + " UTC";
}

// dayTime writes the day and time of a date, in UTC, to the second.
export function dayTime(d) {
  return dateTime(d.toISOString());
}

// clockSeconds writes the time of day of a date, in UTC, to the second.
export function clockSeconds(d) {
  return d.toISOString().slice(11, 19) + " UTC";
}

const POLICY_NAMES = {
  oldest_scheduled_first: "oldest scheduled first",
  never_visited_oldest_update_first: "never visited, oldest update first",
  already_visited_order_by_lag: "already visited, by lag",
  origins_without_last_update: "without last update",
  stop_after_success: "until a success",
  first_visits_after_listing: "first visits after listing",
  operator: "asked by an operator",
};

// policyName is the readable name of a policy.
export function policyName(p) {
  return POLICY_NAMES[p] || p.replaceAll("_", " ");
}

// OUTCOMES are the outcomes of results, in the order the page shows them.
export const OUTCOMES = ["successful", "failed", "not_found", "unreadable"];

// outcomeName is the readable name of a result's outcome.
export function outcomeName(o) {
  return o.replaceAll("_", " ");
}

// dateTime writes an RFC 3339 time of the API as "2026-03-01 12:00:00
// UTC"; none (default "never") when there is no time.
export function dateTime(t, none) {
  if (!t) return none === undefined ? "never" : none;
  return new Date(t).toISOString().replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
}

// fromNow writes how far an RFC 3339 time is from now (a Date): "in 4
// min", "3 h ago".
export function fromNow(t, now) {
  const s = (new Date(t) - now) / 1000;
  return s >= 0 ? "in " + seconds(s) : seconds(-s) + " ago";
}

// when writes a time and how far it is from now: "2026-03-01 12:00:00 UTC
// (3 min ago)"; none (default "never") when there is no time.
export function when(t, now, none) {
  return t ? `${dateTime(t)} (${fromNow(t, now)})` : none === undefined ? "never" : none;
}

// words writes an identifier of the API with spaces: "next_run_scheduled"
// as "next run scheduled".
export function words(id) {
  return id.replaceAll("_", " ");
}
