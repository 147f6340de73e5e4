// Line charts of per-minute series, drawn as inline SVG: one line per
// series, gaps where a minute has no value, the time along the bottom and
// the values, with their unit, on the left; pointed at, a minute's values
// under the chart.

import { clock } from "./format.js";
import { el, svg } from "./dom.js";

const W = 600, H = 150;
const LEFT = 44, RIGHT = 10, TOP = 10, BOTTOM = 20;

// niceCeiling rounds v up to 1, 2 or 5 times a power of ten.
function niceCeiling(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// runs splits values into runs of consecutive minutes with a value:
// [[index, value], ...] each.
function runs(values) {
  const out = [];
  let run = [];
  values.forEach((v, i) => {
    if (v === null || v === undefined) {
      if (run.length) out.push(run);
      run = [];
    } else {
      run.push([i, v]);
    }
  });
  if (run.length) out.push(run);
  return out;
}

// axisNumber writes a value of the vertical axis: whole above 10, else to
// the tenth (the axis's unit is in the chart's title).
function axisNumber(v) {
  return v >= 10 || Number.isInteger(v) ? Math.round(v).toLocaleString("en-US") : v.toFixed(1);
}

// lineChart returns a figure charting spec.series ([{label, values, cls}],
// values one a minute from spec.start, a Date) under spec.title, whose
// values are in spec.unit (spec.scale, if given, converts them to it). The
// figure's data-chart is spec.name, its SVG's data-points how many values
// it draws.
export function lineChart(spec) {
  const minutes = Math.max(spec.minutes, 2);
  let top = 0, points = 0;
  for (const s of spec.series) {
    for (const v of s.values) {
      if (v === null || v === undefined) continue;
      top = Math.max(top, v);
      points++;
    }
  }
  const scale = spec.scale || ((v) => v);
  const ymax = niceCeiling(scale(top)) / scale(1);
  const x = (i) => LEFT + (i / (minutes - 1)) * (W - LEFT - RIGHT);
  const y = (v) => TOP + (1 - v / ymax) * (H - TOP - BOTTOM);
  const root = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": spec.title, "data-points": points });

  for (const v of [0, ymax / 2, ymax]) {
    root.append(svg("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v) }));
    root.append(svg("text", { class: "axis", x: LEFT - 6, y: y(v) + 3, "text-anchor": "end" }, axisNumber(scale(v))));
  }
  const at = (i) => new Date(spec.start.getTime() + i * 60000);
  [[0, "start"], [Math.floor((minutes - 1) / 2), "middle"], [minutes - 1, "end"]].forEach(([i, anchor]) => {
    root.append(svg("text", { class: "axis", x: x(i), y: H - 5, "text-anchor": anchor }, clock(at(i))));
  });

  spec.series.forEach((s) => {
    for (const run of runs(s.values)) {
      if (run.length === 1) {
        const [i, v] = run[0];
        root.append(svg("circle", { class: "dot " + s.cls, cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5,
          "data-series": s.label }));
        continue;
      }
      root.append(svg("polyline", { class: "line " + s.cls, "data-series": s.label,
        points: run.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
    }
  });
  if (points === 0) {
    root.append(svg("text", { class: "empty", x: W / 2, y: H / 2, "text-anchor": "middle" }, "no data yet"));
  }

  const legend = el("ul", { class: "legend" },
    ...spec.series.map((s) => el("li", {}, el("span", { class: "swatch " + s.cls }), s.label)));
  const tip = el("p", { class: "tip", "data-field": "tip" }, "Point at the chart for a minute's values.");
  hover(root, tip, spec, minutes, (i) => x(i), (v) => axisNumber(scale(v)), at);
  return el("figure", { class: "chart", "data-chart": spec.name },
    el("figcaption", {}, spec.title, el("span", { class: "unit" }, " (" + spec.unit + ")")), root, tip, legend);
}

// hover writes, in tip, the values of the minute under the pointer over
// the chart root, and marks that minute with a vertical line: x places a
// minute, number writes a value, at dates a minute.
function hover(root, tip, spec, minutes, x, number, at) {
  const cursor = svg("line", { class: "cursor", y1: TOP, y2: H - BOTTOM, visibility: "hidden" });
  root.append(cursor);
  root.addEventListener("mousemove", (e) => {
    const box = root.getBoundingClientRect();
    const px = (e.clientX - box.left) * W / box.width;
    const i = Math.round(((px - LEFT) / (W - LEFT - RIGHT)) * (minutes - 1));
    if (i < 0 || i >= minutes) return;
    const values = spec.series.filter((s) => s.values[i] !== null && s.values[i] !== undefined)
      .map((s) => `${s.label} ${number(s.values[i])}`);
    tip.textContent = `${clock(at(i))}: ` + (values.length ? values.join(", ") + " " + spec.unit : "no data");
    cursor.setAttribute("x1", x(i));
    cursor.setAttribute("x2", x(i));
    cursor.setAttribute("visibility", "visible");
  });
  root.addEventListener("mouseleave", () => cursor.setAttribute("visibility", "hidden"));
}
