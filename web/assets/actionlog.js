// The actions page: one page of the operators' actions the server
// recorded (GET /api/v1/actions), newest first, filtered by action and by
// who did them; each target links to its page when it has one.

import { getJSON, setStatus } from "./api.js";
import { el } from "./dom.js";
import { clockSeconds, dateTime, words } from "./format.js";
import { cell, nextLink, originHref, params, start, table } from "./page.js";

const PAGE_SIZE = 100;

// ACTIONS are the actions an operator does, in words, and the kind of
// their targets. An action not listed (a newer server's) shows its name
// in words and its target as text.
const ACTIONS = {
  visit_now: { text: "visit now", target: "origin" },
  disable_origin: { text: "disable origin", target: "origin" },
  enable_origin: { text: "enable origin", target: "origin" },
  pause: { text: "pause visit type", target: "visit_type" },
  resume: { text: "resume visit type", target: "visit_type" },
  requeue_lost: { text: "requeue lost visits", target: "visit_type" },
  disable_task: { text: "disable task", target: "task" },
  respawn_task: { text: "respawn task", target: "task" },
  run_task_now: { text: "run task now", target: "task" },
  refresh_metrics: { text: "refresh scheduler metrics", target: "lister" },
  purge_queue: { text: "purge queue", target: "queue" },
  drop_message: { text: "drop message", target: "message" },
  requeue_message: { text: "requeue message", target: "message" },
};

// actionText is an action in words.
function actionText(action) {
  return ACTIONS[action] ? ACTIONS[action].text : words(action);
}

// targetHref is the console's page of an action's target, or null: an
// origin's target is "URL (VISIT_TYPE)", a task's "task ID"; a visit
// type's actions are on the overview, the scheduler metrics on the
// listers' page, a queue's and its messages' on the queues page.
function targetHref(action, target) {
  switch (ACTIONS[action] && ACTIONS[action].target) {
    case "origin": {
      const m = /^(.*) \(([a-z0-9][a-z0-9._-]*)\)$/s.exec(target);
      return m ? originHref(m[1], m[2]) : null;
    }
    case "task": {
      const m = /^task (\d+)$/.exec(target);
      return m ? "/task?" + new URLSearchParams({ id: m[1] }) : null;
    }
    case "visit_type":
      return "/";
    case "lister":
      return "/listers";
    case "queue":
      return "/queues?" + new URLSearchParams({ queue: target });
    case "message":
      return "/queues";
  }
  return null;
}

// RFC3339 matches the times of answers, which the page writes as every
// other time.
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

// answerValue writes one value of an answer.
function answerValue(v) {
  if (typeof v !== "string") return JSON.stringify(v);
  return RFC3339.test(v) ? dateTime(v) : v;
}

// answerText writes what came of an action: "changed: 2, lister: every
// lister"; "—" for nothing.
function answerText(answer) {
  const parts = Object.entries(answer || {}).map(([k, v]) => `${words(k)}: ${answerValue(v)}`);
  return parts.join(", ") || "—";
}

function actionRow(a) {
  const href = targetHref(a.action, a.target);
  return el("tr", { "data-action": String(a.id) },
    cell("at", dateTime(a.at)), cell("by", a.by), cell("action", actionText(a.action)),
    cell("target", href ? el("a", { href }, a.target) : a.target), cell("answer", answerText(a.answer)));
}

// fillForm lists the actions in the filter and shows the page's filters.
function fillForm() {
  const chosen = params.get("action") || "";
  const names = Object.keys(ACTIONS);
  if (chosen && !names.includes(chosen)) names.push(chosen);
  document.getElementById("action").replaceChildren(el("option", { value: "" }, "any"),
    ...names.map((name) => el("option", { value: name }, actionText(name))));
  document.getElementById("action").value = chosen;
  document.getElementById("by").value = params.get("by") || "";
}

async function load() {
  fillForm();
  const query = new URLSearchParams({ limit: PAGE_SIZE });
  for (const name of ["action", "by", "page_token"]) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  const page = await getJSON("/api/v1/actions?" + query);
  if (!page) return;
  table("actions", page.actions.map(actionRow), "No action matches.");
  nextLink("next", page.next_page_token);
  setStatus("updated " + clockSeconds(new Date()));
}

start(load);
