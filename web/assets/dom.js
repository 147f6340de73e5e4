// Building the page's elements: HTML and SVG nodes with their attributes
// and children, without inline styles (the page's CSP forbids them).

const SVG_NS = "http://www.w3.org/2000/svg";

// el returns an HTML element with attributes and children (text or nodes;
// null and undefined are left out).
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// svg returns an SVG element with attributes and, when given, a text.
export function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// field returns the term and description of a figure in a <dl>; name is
// its data-field, for whoever reads the page (the tests).
export function field(label, name, value, ...more) {
  return [el("dt", {}, label), el("dd", {}, el("span", { "data-field": name }, value), ...more)];
}
