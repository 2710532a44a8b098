// Reading the log: event kinds, state split by scope, and a layered graph layout.
// Pure functions (no DOM), so every view reads the events the same way.

export const SCOPES = ["app", "user", "session"];

/** ["app", "name"] for "app:name"; temp: keys are never stored, so they are skipped. */
export function scopeOf(key) {
  if (key.startsWith("app:")) return ["app", key.slice(4)];
  if (key.startsWith("user:")) return ["user", key.slice(5)];
  if (key.startsWith("temp:")) return [null, key];
  return ["session", key];
}

export function splitState(state) {
  const result = { app: {}, user: {}, session: {} };
  for (const [key, value] of Object.entries(state || {})) {
    const [scope, name] = scopeOf(key);
    if (scope) result[scope][name] = value;
  }
  return result;
}

export function parts(event) {
  return (event.content && event.content.parts) || [];
}

export function textOf(event) {
  return parts(event)
    .filter((p) => typeof p.text === "string" && !p.thought)
    .map((p) => p.text)
    .join("");
}

const INTERRUPT_NAMES = {
  adk_request_input: "input request",
  adk_request_confirmation: "confirmation request",
  adk_request_credential: "credential request",
  cairn_resolve_in_doubt: "in-doubt call",
};

/** A short kind for the timeline: message, reply, tool call, interrupt, answer, ... */
export function eventKind(event) {
  const actions = event.actions || {};
  if (actions.rewindBeforeInvocationId) return "rewind";
  if (event.errorMessage || event.errorCode) return "error";
  if (event.longRunningToolIds && event.longRunningToolIds.length) return "interrupt";
  const ps = parts(event);
  if (ps.some((p) => p.functionCall)) return "tool call";
  if (ps.some((p) => p.functionResponse)) return event.author === "user" ? "answer" : "tool result";
  if (textOf(event)) return event.author === "user" ? "message" : "reply";
  if ((actions.endOfAgent || (event.nodeInfo?.outputFor || []).length) && event.output !== undefined) return "node output";
  if (actions.compaction) return "compaction";
  if (actions.transferToAgent) return "transfer";
  if (Object.keys(actions.stateDelta || {}).length || (actions.removedStateKeys || []).length) return "state";
  if (actions.endOfAgent) return "end";
  return "event";
}

export function short(value, max = 80) {
  let text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) text = "";
  text = text.replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function callText(call) {
  const args = Object.entries(call.args || {}).map(([k, v]) => `${k}=${short(v, 40)}`);
  return `${call.name}(${args.join(", ")})`;
}

/** One line describing an event. */
export function eventSummary(event) {
  const actions = event.actions || {};
  if (actions.rewindBeforeInvocationId) return `rewind before ${shortId(actions.rewindBeforeInvocationId)}`;
  if (event.errorMessage) return event.errorMessage;
  const lines = [];
  for (const p of parts(event)) {
    if (p.functionCall) {
      const name = p.functionCall.name;
      if (INTERRUPT_NAMES[name]) lines.push(`${INTERRUPT_NAMES[name]}: ${short(p.functionCall.args?.message ?? p.functionCall.args?.toolConfirmation?.hint ?? "", 60)}`);
      else lines.push(callText(p.functionCall));
    } else if (p.functionResponse) {
      lines.push(`${p.functionResponse.name} → ${short(p.functionResponse.response, 50)}`);
    }
  }
  const text = textOf(event);
  if (text) lines.push(short(text));
  if (!lines.length && event.output !== undefined) lines.push(`→ ${short(event.output)}`);
  if (!lines.length) {
    const keys = Object.keys(actions.stateDelta || {});
    if (keys.length) lines.push(`state: ${keys.join(", ")}`);
  }
  return lines.join(" · ");
}

export const shortId = (id) => (id && id.length > 14 ? `${id.slice(0, 12)}…` : id || "");

export function time(epochSeconds) {
  if (!epochSeconds) return "";
  const d = new Date(epochSeconds * 1000);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

export function dateTime(epochSeconds) {
  if (!epochSeconds) return "";
  const d = new Date(epochSeconds * 1000);
  const today = new Date();
  if (d.toDateString() === today.toDateString()) return time(epochSeconds);
  return d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
}

/** Invocations in log order: [{id, events}] */
export function invocations(events) {
  const groups = [];
  const byId = new Map();
  for (const event of events) {
    let group = byId.get(event.invocationId);
    if (!group) {
      group = { id: event.invocationId, events: [] };
      byId.set(event.invocationId, group);
      groups.push(group);
    }
    group.events.push(event);
  }
  return groups;
}

/**
 * Node statuses for the graph's top-level nodes from the nodes route's entries
 * ({path, name, status}): the latest run of each node, and how many runs it had.
 */
export function nodeStatuses(entries) {
  const result = new Map();
  for (const entry of entries || []) {
    const segments = entry.path.split("/");
    if (segments.length < 2) continue;
    const [name, run] = segments[1].split("@");
    const runNumber = Number(run) || 1;
    const previous = result.get(name);
    const nested = segments.length > 2;
    if (!previous || runNumber > previous.run || (runNumber === previous.run && !nested)) {
      const status = nested && previous && previous.run === runNumber ? previous.status : entry.status;
      result.set(name, { status: nested ? worst(status, entry.status) : entry.status, run: runNumber, runs: Math.max(runNumber, previous?.runs || 0) });
    }
  }
  return result;
}

const RANK = { failed: 4, waiting: 3, running: 2, completed: 1 };
const worst = (a, b) => ((RANK[a] || 0) >= (RANK[b] || 0) ? a : b);

/**
 * A layered (top to bottom) layout: layer = longest path from the start over forward
 * edges; edges that close a cycle (a routed loop back) are marked `back`.
 */
export function layoutGraph(graph, measure = (name) => 24 + name.length * 7.4) {
  const names = graph.nodes.map((n) => n.name);
  const out = new Map(names.map((n) => [n, []]));
  for (const edge of graph.edges) {
    if (!out.has(edge.from)) out.set(edge.from, []);
    if (!out.has(edge.to)) out.set(edge.to, []);
    out.get(edge.from).push(edge);
  }
  const all = [...out.keys()];
  const start = all.find((n) => n === "__START__" || n === "START") || all[0];
  // Depth-first search from the start marks edges into a node on the current path as back edges.
  const state = new Map();
  const back = new Set();
  const visit = (name) => {
    state.set(name, 1);
    for (const edge of out.get(name) || []) {
      const s = state.get(edge.to);
      if (s === 1) back.add(edge);
      else if (!s) visit(edge.to);
    }
    state.set(name, 2);
  };
  if (start !== undefined) visit(start);
  for (const name of all) if (!state.get(name)) visit(name);
  // Longest-path layering over forward edges (Kahn's order).
  const indegree = new Map(all.map((n) => [n, 0]));
  for (const edge of graph.edges) if (!back.has(edge)) indegree.set(edge.to, indegree.get(edge.to) + 1);
  const layer = new Map(all.map((n) => [n, 0]));
  const queue = all.filter((n) => indegree.get(n) === 0);
  while (queue.length) {
    const name = queue.shift();
    for (const edge of out.get(name) || []) {
      if (back.has(edge)) continue;
      layer.set(edge.to, Math.max(layer.get(edge.to), layer.get(name) + 1));
      indegree.set(edge.to, indegree.get(edge.to) - 1);
      if (indegree.get(edge.to) === 0) queue.push(edge.to);
    }
  }
  const layers = [];
  for (const name of all) {
    const l = layer.get(name);
    (layers[l] ||= []).push(name);
  }
  const gapX = 28;
  const gapY = 86;
  const height = 34;
  const width = Math.max(...layers.map((row) => row.reduce((w, n) => w + measure(label(n)) + gapX, -gapX)), 120);
  const nodes = new Map();
  layers.forEach((row, index) => {
    const rowWidth = row.reduce((w, n) => w + measure(label(n)) + gapX, -gapX);
    let x = (width - rowWidth) / 2;
    for (const name of row) {
      const w = measure(label(name));
      nodes.set(name, { name, label: label(name), x, y: index * gapY, w, h: height, start: name === start });
      x += w + gapX;
    }
  });
  const edges = graph.edges.map((edge) => ({ ...edge, back: back.has(edge) }));
  return { nodes, edges, width, height: layers.length * gapY - gapY + height };
}

function label(name) {
  return name === "__START__" ? "start" : name;
}
