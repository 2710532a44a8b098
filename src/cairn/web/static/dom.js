// A tiny element builder: h("div", {class: "x", onclick}, child, "text", [more]).
// Text is always set as text (never parsed as HTML).

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(element.style, value);
    else if (key in element && typeof value !== "string") element[key] = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

const SVG = "http://www.w3.org/2000/svg";

export function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined) element.setAttribute(key, value);
  for (const child of children) if (child) element.append(child instanceof Node ? child : String(child));
  return element;
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}

const ICONS = {
  // 16×16 strokes, drawn in currentColor.
  fork: "M5 3v6M5 9c0 2 2 3 4 3h2M11 3v3M5 3h0M11 12h0",
  pause: "M6 4v8M10 4v8",
  key: "M10 6a3 3 0 1 1-.1 0M8 8l-5 5M5 11l1.5 1.5M4 12l1.2 1.2",
  rewind: "M4 4v4h4M4.5 8A4.5 4.5 0 1 1 6 11.5",
};

export function icon(name) {
  return s("svg", { viewBox: "0 0 16 16", width: 14, height: 14, class: `icon-svg icon-${name}`, "aria-hidden": "true" },
    s("path", { d: ICONS[name], fill: "none", stroke: "currentColor", "stroke-width": 1.6, "stroke-linecap": "round", "stroke-linejoin": "round" }));
}
