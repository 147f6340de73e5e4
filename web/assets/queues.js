// The queues page: every queue as the broker sees it now (GET
// /api/v1/broker/queues) and, for the queue of the page's URL, one page of
// its messages waiting (in the order workers will lease them) or leased
// (GET /api/v1/queues/{queue}/messages), with the origin each visits and
// the worker holding it. An operator purges a queue, and drops or requeues
// one message (actions.js).

import { dropMessage, purgeQueue, requeueMessage } from "./actions.js";
import { getJSON, setStatus } from "./api.js";
import { el } from "./dom.js";
import { clockSeconds, count, dateTime, when } from "./format.js";
import { cell, nextLink, originHref, params, start, table, withParams } from "./page.js";

const REFRESH_MS = 5000;
const PAGE_SIZE = 100;
const selected = params.get("queue");
const state = params.get("state") === "leased" ? "leased" : "waiting";

// COLUMNS are the columns of the queues table by broker: what each
// broker tells of a queue.
const COLUMNS = {
  embedded: ["queue", "task types", "visit type", "waiting (messages)", "leased (messages)", ""],
  rabbitmq: ["queue", "task types", "visit type", "waiting (messages)", "consumers (workers)", ""],
  "": ["queue", "task types", "visit type", "waiting (messages)"],
};

const NOTES = {
  embedded: "The embedded broker: messages wait in the store until a worker leases them over HTTP. Pick a queue to see its messages.",
  rabbitmq: "RabbitMQ: messages waiting (ready, not delivered to a worker) and the consumers of each queue, from a passive declare. " +
    "The messages themselves are RabbitMQ's: revisit does not list them.",
  "": "No broker runs in this process: the queues' figures are unknown.",
};

// originLink links a message's origin to its page when its visit type is
// known.
function originLink(m) {
  if (!m.url) return "—";
  if (!m.visit_type) return m.url;
  return el("a", { href: originHref(m.url, m.visit_type) }, m.url);
}

function queueRow(q, broker) {
  const name = broker === "embedded" ? el("a", { href: "/queues?" + new URLSearchParams({ queue: q.queue }) }, q.queue) : q.queue;
  let waiting = count(q.waiting);
  if (q.missing) waiting = "0 (not declared by a worker yet)";
  else if (q.error) waiting = "unknown: " + q.error;
  const cells = [cell("queue", name), cell("task_types", q.task_types.join(", ") || "none"),
    cell("visit_type", q.visit_type || "—"), cell("waiting", waiting)];
  if (broker === "embedded") cells.push(cell("leased", count(q.leased)));
  if (broker === "rabbitmq") cells.push(cell("consumers", count(q.consumers)));
  if (broker) cells.push(cell("actions", q.missing ? "" : button("purge", "Purge…",
    "Delete the messages waiting in the queue (not those a worker holds).", () => purgeQueue(q.queue, broker))));
  return el("tr", { "data-queue": q.queue }, ...cells);
}

// button returns a button of the operator's actions that runs act.
function button(name, label, title, act) {
  const b = el("button", { type: "button", "data-action": name, title }, label);
  b.addEventListener("click", act);
  return b;
}

function showQueues(d) {
  document.getElementById("broker-note").textContent = NOTES[d.broker];
  document.querySelector("#queues thead tr").replaceChildren(...COLUMNS[d.broker].map((c) => el("th", {}, c)));
  table("queues", d.queues.map((q) => queueRow(q, d.broker)), "No queue: register a task type (its backend_name names its queue).");
}

function messageRow(m, now) {
  const actions = [button("drop", "Drop…", "Delete the message and declare its visit lost.", () => dropMessage(m.id, m.url))];
  if (state === "leased") {
    actions.push(button("requeue", "Requeue…", "Take the message back from its worker: it waits again in its place.",
      () => requeueMessage(m.id, m.worker)));
  }
  return el("tr", { "data-message": m.id },
    cell("id", m.id), cell("url", originLink(m)), cell("visit_type", m.visit_type || "—"),
    cell("priority", m.priority ? count(m.priority) : "—"),
    cell("attempt", m.attempt === 0 ? "not leased yet" : count(m.attempt)),
    cell("enqueued_at", dateTime(m.enqueued_at)), cell("worker", m.worker || "—"),
    cell("lease_expires_at", when(m.lease_expires_at, now, "—")), cell("actions", ...actions));
}

function showMessages(d, now) {
  document.getElementById("queue-name").textContent = d.queue;
  for (const s of ["waiting", "leased"]) {
    const a = document.getElementById("show-" + s);
    a.href = withParams({ state: s === "waiting" ? null : s, page_token: null });
    a.classList.toggle("current", s === state);
  }
  table("message-list", d.messages.map((m) => messageRow(m, now)),
    state === "waiting" ? "No message waiting." : "No message leased now.");
  nextLink("next", d.next_page_token);
  document.getElementById("messages").hidden = false;
}

async function load() {
  const d = await getJSON("/api/v1/broker/queues");
  if (!d) return;
  const now = new Date(d.generated_at);
  showQueues(d);
  if (selected && d.broker === "embedded") {
    const query = new URLSearchParams({ state, limit: PAGE_SIZE });
    if (params.get("page_token")) query.set("page_token", params.get("page_token"));
    const m = await getJSON(`/api/v1/queues/${encodeURIComponent(selected)}/messages?${query}`);
    if (!m) return;
    showMessages(m, now);
  }
  setStatus("updated " + clockSeconds(now));
}

start(load);
setInterval(load, REFRESH_MS);
document.addEventListener("revisit:changed", load);
