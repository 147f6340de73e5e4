// The operator's actions of the console. Each asks for confirmation in the
// page's dialog first, then posts to the API with the tab's token, says
// what came of it in the page's action line, and tells the page through
// the event "revisit:changed" on document, so that it shows the new
// state at once. Pages call the functions exported here; nothing is sent
// unless the operator confirms.

import { el } from "./dom.js";
import { authHeaders } from "./token.js";

// waiting resolves the promise of the question the dialog shows now.
let waiting = null;

// answered gives the operator's answer to the question shown, once.
function answered(yes) {
  const resolve = waiting;
  waiting = null;
  if (resolve) resolve(yes);
}

// dialog returns the page's confirmation dialog, made on first use. The
// answer is taken when given (a button submits the form, Escape cancels),
// not from the dialog's close event, which comes later: a question asked
// again before it came would take the earlier answer.
function dialog() {
  let d = document.getElementById("confirm-action");
  if (d) return d;
  const form = el("form", { method: "dialog" },
    el("p", { "data-field": "question" }),
    el("div", { class: "dialog-buttons" },
      el("button", { value: "cancel", "data-action": "cancel" }, "Cancel"),
      el("button", { value: "confirm", "data-action": "confirm", class: "confirm" }, "Confirm")));
  form.addEventListener("submit", (e) => answered(!!e.submitter && e.submitter.value === "confirm"));
  d = el("dialog", { id: "confirm-action" }, form);
  d.addEventListener("cancel", () => answered(false));
  document.body.append(d);
  return d;
}

// confirmAction asks question in the dialog, whose confirming button says
// verb, and resolves to whether the operator confirmed.
export function confirmAction(question, verb) {
  const d = dialog();
  answered(false);
  d.querySelector('[data-field="question"]').textContent = question;
  d.querySelector('[data-action="confirm"]').textContent = verb;
  d.showModal();
  return new Promise((resolve) => { waiting = resolve; });
}

// say shows what came of an action in the page's action line, made on
// first use at the top of the page's main element.
function say(text, error) {
  let p = document.getElementById("action-message");
  if (!p) {
    p = el("p", { id: "action-message", role: "status" });
    (document.querySelector("main") || document.body).prepend(p);
  }
  p.textContent = text;
  p.classList.toggle("error", !!error);
}

// post sends body (null: none) to a write route of the API and returns
// the status and the answer; status 0 when the server cannot be reached.
async function post(path, body) {
  const headers = { Accept: "application/json", ...authHeaders() };
  const init = { method: "POST", headers };
  if (body !== null) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    const r = await fetch(path, init);
    return { status: r.status, answer: await r.json() };
  } catch (e) {
    return { status: 0, answer: { error: { message: "cannot reach the server: " + e.message } } };
  }
}

// finish says what came of a request of the action named what, done(answer)
// on success, and returns the answer; null after an error.
function finish(what, { status, answer }, done) {
  if (status !== 200) {
    say(`${what} failed: ${answer.error ? answer.error.message : "error " + status}`, true);
    return null;
  }
  say(done(answer));
  document.dispatchEvent(new CustomEvent("revisit:changed", { detail: answer }));
  return answer;
}

// act asks question; once the operator confirms with verb, it posts body
// to path and says done(answer). It returns the answer, null when the
// operator cancelled or the action failed.
async function act(question, verb, path, body, done) {
  if (!(await confirmAction(question, verb))) return null;
  return finish(verb, await post(path, body), done);
}

const pathPart = encodeURIComponent;

// visitNow sends a visit of the origin (url, visitType) to its queue at
// once, carrying listerId's row when given. When a visit of it is in
// flight, the operator is asked whether to send another.
export async function visitNow(url, visitType, listerId) {
  const body = { url, visit_type: visitType };
  if (listerId) body.lister_id = listerId;
  if (!(await confirmAction(`Visit ${url} (${visitType}) now? Its visit is sent to the visit type's queue ` +
    "at once, with a high priority, whatever the queue holds.", "Visit now"))) return null;
  let res = await post("/api/v1/visits", body);
  if (res.status === 409 && res.answer.error &&
    await confirmAction(res.answer.error.message.replace(/; force: true sends another$/, "") +
      ". Send another visit all the same?", "Send another")) {
    res = await post("/api/v1/visits", { ...body, force: true });
  }
  return finish("Visit now", res, (v) => `Visit of ${v.url} sent to ${v.queue}.`);
}

// setOriginEnabled enables or disables the origin (url, visitType): the
// row of listerId when given, every lister's otherwise.
export function setOriginEnabled(url, visitType, enabled, listerId) {
  const body = { url, visit_type: visitType };
  if (listerId) body.lister_id = listerId;
  const rows = listerId ? "this lister's row" : "every lister's row";
  const question = enabled ? `Enable ${url} (${visitType}), ${rows}? The policies may choose it again.`
    : `Disable ${url} (${visitType}), ${rows}? No policy chooses it until it is enabled, or listed again.`;
  const verb = enabled ? "Enable" : "Disable";
  return act(question, verb, "/api/v1/listed-origins/" + (enabled ? "enable" : "disable"), body,
    (o) => `${o.url} ${enabled ? "enabled" : "disabled"} (${o.changed} row${o.changed === 1 ? "" : "s"} changed).`);
}

// pauseVisitType pauses the orchestrator's loop of a visit type, in every
// process.
export function pauseVisitType(visitType) {
  return act(`Pause ${visitType}? Its orchestrator loop runs no round, in any process, until resumed: ` +
    "no visit is sent and none is declared lost meanwhile.", "Pause",
    `/api/v1/visit-types/${pathPart(visitType)}/pause`, null, () => `${visitType} paused.`);
}

// resumeVisitType resumes a paused visit type.
export function resumeVisitType(visitType) {
  return act(`Resume ${visitType}? Its loop runs a round at once.`, "Resume",
    `/api/v1/visit-types/${pathPart(visitType)}/resume`, null, () => `${visitType} resumed.`);
}

// requeueLost declares lost the visits of a visit type sent and still
// without a result, so that their origins are offered again at once.
export function requeueLost(visitType) {
  return act(`Declare lost every visit of ${visitType} sent and still without a result, and offer their ` +
    "origins again at once? For messages the workers lost (a purged queue, workers gone); a result that " +
    "comes later still counts.", "Requeue",
    `/api/v1/visit-types/${pathPart(visitType)}/requeue-lost`, null,
    (r) => `${r.lost} visit${r.lost === 1 ? "" : "s"} of ${visitType} declared lost; their origins are offered again.`);
}

// disableTask disables a generic task.
export function disableTask(id) {
  return act(`Disable task ${id}? It is not dispatched again unless respawned.`, "Disable",
    `/api/v1/tasks/${pathPart(id)}/disable`, null, (t) => `Task ${t.id} disabled.`);
}

// respawnTask makes a disabled or completed generic task due now.
export function respawnTask(id) {
  return act(`Respawn task ${id}? It is due now, with its retries back.`, "Respawn",
    `/api/v1/tasks/${pathPart(id)}/respawn`, null, (t) => `Task ${t.id} respawned: ${t.status.replaceAll("_", " ")}.`);
}

// runTaskNow makes a generic task waiting for its next run due now.
export function runTaskNow(id) {
  return act(`Run task ${id} now? It is due at once, with its retries back; its runner dispatches it at its next round.`,
    "Run now", `/api/v1/tasks/${pathPart(id)}/run-now`, null, (t) => `Task ${t.id} due now.`);
}

// purgeQueue deletes the messages waiting in a queue (not those a worker
// holds); with the embedded broker their visits are declared lost and
// their origins offered again.
export function purgeQueue(queue, broker) {
  const visits = broker === "embedded" ? "Their visits are declared lost and their origins offered again at once."
    : "revisit does not know which visits they carried: they stay in flight until their timeout (or a requeue of lost visits).";
  return act(`Purge ${queue}? Every message waiting in it is deleted; those a worker holds now stay. ${visits}`, "Purge",
    `/api/v1/queues/${pathPart(queue)}/purge`, null,
    (p) => `${p.purged} message${p.purged === 1 ? "" : "s"} purged from ${p.queue}` +
      (p.visits_lost === null ? "; their visits are lost at their timeout."
        : `; ${p.visits_lost} visit${p.visits_lost === 1 ? "" : "s"} declared lost, their origins offered again.`));
}

// dropMessage deletes one message of the embedded broker, waiting or held
// by a worker, and declares its visit lost.
export function dropMessage(id, url) {
  return act(`Drop message ${id}${url ? " (" + url + ")" : ""}? It is deleted from its queue; a worker holding it ` +
    "abandons it at its next heartbeat. Its visit is declared lost and its origin offered again.", "Drop",
    `/api/v1/messages/${pathPart(id)}/drop`, null,
    (r) => `Message ${r.message.id} dropped from ${r.message.queue}` +
      (r.visit_lost ? "; its visit declared lost, its origin offered again." : "."));
}

// requeueMessage takes a leased message of the embedded broker back from
// its worker: it waits again in its place.
export function requeueMessage(id, worker) {
  return act(`Requeue message ${id}, leased to ${worker}? It waits again in its place and the next lease takes it; ` +
    `${worker} can no longer extend its lease (its result still counts until then).`, "Requeue",
    `/api/v1/messages/${pathPart(id)}/requeue`, null,
    (r) => `Message ${r.message.id} waits again in ${r.message.queue}.`);
}

// refreshMetrics recomputes the scheduler metrics of every lister.
export function refreshMetrics() {
  return act("Recompute the scheduler metrics of every lister now? It reads every listed origin.", "Refresh",
    "/api/v1/scheduler-metrics/refresh", {},
    (m) => `Scheduler metrics recomputed (${m.metrics.length} lister and visit type pair${m.metrics.length === 1 ? "" : "s"}).`);
}
