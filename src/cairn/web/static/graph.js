// The workflow graph as SVG: layered top to bottom, each node coloured by its status.

import { s } from "./dom.js";
import { layoutGraph } from "./model.js";

const PAD = 24;

/** `onSelect(name)`, when given, makes each node (not the start) a button that calls it. */
export function renderGraph(graph, statuses, onSelect = null) {
  const layout = layoutGraph(graph);
  const width = layout.width + PAD * 2 + 60;
  const height = layout.height + PAD * 2;
  const svg = s("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    class: "graph-svg",
    role: "img",
    "aria-label": "workflow graph",
  });
  svg.append(
    s("defs", {},
      s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" })),
    ),
  );
  const at = (name) => {
    const n = layout.nodes.get(name);
    return { ...n, x: n.x + PAD, y: n.y + PAD };
  };
  const edgeLayer = s("g", { class: "edges" });
  const labelLayer = s("g", { class: "edge-labels" });
  let loop = 0;
  for (const edge of layout.edges) {
    if (!layout.nodes.has(edge.from) || !layout.nodes.has(edge.to)) continue;
    const a = at(edge.from);
    const b = at(edge.to);
    let d;
    let mid;
    if (edge.back) {
      loop += 1;
      const x1 = a.x + a.w;
      const y1 = a.y + a.h / 2;
      const x2 = b.x + b.w;
      const y2 = b.y + b.h / 2;
      const out = Math.max(x1, x2) + 30 + loop * 14;
      d = `M${x1},${y1} C${out},${y1} ${out},${y2} ${x2 + 2},${y2}`;
      mid = { x: out - 8, y: (y1 + y2) / 2 };
    } else {
      const x1 = a.x + a.w / 2;
      const y1 = a.y + a.h;
      const x2 = b.x + b.w / 2;
      const y2 = b.y - 2;
      const bend = (y2 - y1) / 2;
      d = `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`;
      mid = { x: x1 + (x2 - x1) * 0.8, y: y1 + (y2 - y1) * 0.62 };
    }
    edgeLayer.append(s("path", { d, class: `edge${edge.back ? " back" : ""}`, "marker-end": "url(#arrow)" }));
    if (edge.route !== undefined && edge.route !== null) {
      const text = Array.isArray(edge.route) ? edge.route.join(" | ") : String(edge.route);
      const w = text.length * 6.4 + 10;
      labelLayer.append(
        s("g", { class: "route" },
          s("rect", { x: mid.x - w / 2, y: mid.y - 9, width: w, height: 18, rx: 9 }),
          s("text", { x: mid.x, y: mid.y + 4, "text-anchor": "middle" }, text)),
      );
    }
  }
  svg.append(edgeLayer, labelLayer);
  const nodeLayer = s("g", { class: "nodes" });
  for (const name of layout.nodes.keys()) {
    const n = at(name);
    const info = statuses.get(name);
    const status = n.start ? "start" : info ? info.status : "idle";
    const group = s("g", { class: `node ${status}`, "data-node": name, "data-status": status });
    if (onSelect && !n.start) {
      group.setAttribute("tabindex", "0");
      group.setAttribute("role", "button");
      group.setAttribute("aria-label", `${name}: ${status}; show its runs`);
      group.addEventListener("click", () => onSelect(name));
      group.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          onSelect(name);
        }
      });
    }
    group.append(s("title", {}, info ? `${name}: ${status}${info.runs > 1 ? ` (run ${info.run} of ${info.runs})` : ""}` : name));
    if (n.start) {
      group.append(s("rect", { x: n.x, y: n.y, width: n.w, height: n.h, rx: n.h / 2 }));
    } else {
      group.append(s("rect", { x: n.x, y: n.y, width: n.w, height: n.h, rx: 8 }));
    }
    group.append(s("text", { x: n.x + n.w / 2, y: n.y + n.h / 2 + 4, "text-anchor": "middle" }, n.label));
    if (info && info.runs > 1) {
      group.append(s("text", { x: n.x + n.w - 4, y: n.y - 4, "text-anchor": "end", class: "runs" }, `×${info.runs}`));
    }
    nodeLayer.append(group);
  }
  svg.append(nodeLayer);
  return svg;
}
