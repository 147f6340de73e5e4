// The state of a visit type's loop in words (the dashboard's "loop").

import { clock, dayTime, seconds } from "./format.js";

// pausedWords says who paused a visit type and when (the dashboard's
// "paused").
export function pausedWords(p) {
  return `paused by ${p.by} at ${dayTime(new Date(p.at))}`;
}

// loopWords says what the loop does, as of the server's time now (a
// Date); the loop is null when no loop runs in the server's process.
export function loopWords(loop, now) {
  if (!loop) return "not driven by this process";
  const next = loop.next_round ? new Date(loop.next_round) : null;
  const inSeconds = next ? (next - now) / 1000 : 0;
  switch (loop.state) {
    case "filling":
      return "filling";
    case "queue_full":
      return `waiting for room in the queue — next check in ${seconds(loop.check_every_seconds || inSeconds)}` +
        (next ? `, next round in ${seconds(inSeconds)} at the latest` : "");
    case "no_origins":
      return "no eligible origins — next check at " + (next ? clock(next) : "the next wake-up");
    case "paused":
      return loop.paused ? pausedWords(loop.paused) : "paused";
    case "standing_by":
      return "standing by: another replica drives it" + (loop.holder ? ` (${loop.holder})` : "");
    case "waiting":
      return `waiting: ${(loop.reason || "a dependency").replaceAll("_", " ")}` +
        (loop.error ? ` (${loop.error})` : "") + (next ? ` — next try in ${seconds(inSeconds)}` : "");
    case "unhealthy":
      return "unhealthy: " + (loop.error || "repeated failures");
    case "starting":
      return "starting";
    case "stopped":
      return "stopped";
  }
  return loop.state.replaceAll("_", " ");
}

// loopHint explains a state further, for the element's tooltip.
export function loopHint(loop) {
  if (!loop) return "The orchestrator runs in another process.";
  switch (loop.state) {
    case "queue_full":
      return "The queue is measured at every check; a round starts as soon as it has room for one " +
        "(min_free_ratio of it free, 5 % by default): a queue of 100 with 4 free slots waits.";
    case "no_origins":
      return "Sooner when origins are recorded, results written or the task type changed.";
    case "standing_by":
      return "One process drives a visit type; this one takes over if it stops.";
    case "paused":
      return "No round runs, in any process, until the visit type is resumed.";
  }
  return "";
}
