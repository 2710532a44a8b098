// The Trace tab: an invocation's spans as a waterfall (name, start, duration, status), what
// a model call sent and got (system instruction, messages, tools, config; the reply, finish
// reason and tokens), and the invocation's and the session's totals. Spans are read from
// GET .../sessions/{sid}/traces (docs/design/http-api-contract.md).

import { api } from "./api.js";
import { h, pretty } from "./dom.js";

const RETRIES = 6; // spans are written a moment after a run ends: look again a few times
const RETRY_MS = 500;

/**
 * The tab in `root`. `context()` gives {app, user, sessionId, selectedEventId, events};
 * `refresh()` reads the session's spans again (call it when the tab shows or a run ends).
 */
export function traceTab({ root, context, fail }) {
  const state = { sessionId: null, traces: null, invocation: null, trace: null, spanId: null, chosen: false, selectedEventId: null };
  let retryTimer = null;
  let generation = 0;

  const select = h("select", { id: "trace-invocation", "aria-label": "invocation", onchange: (e) => choose(e.target.value, true) });
  const reload = h("button", { class: "ghost small", onclick: () => refresh(), title: "Read the spans again" }, "Refresh");
  const totals = h("div", { id: "trace-totals", class: "trace-totals" });
  const waterfall = h("div", { id: "trace-waterfall", class: "trace-waterfall", role: "list", "aria-label": "spans" });
  const detail = h("div", { id: "trace-detail", class: "trace-detail", hidden: true });
  root.replaceChildren(
    h("div", { class: "trace-head" }, h("span", {}, "invocation"), select, reload),
    totals,
    waterfall,
    detail,
  );

  async function refresh(attempt = 0) {
    clearTimeout(retryTimer);
    const ctx = context();
    const mine = ++generation;
    if (ctx.sessionId !== state.sessionId) {
      Object.assign(state, { sessionId: ctx.sessionId, traces: null, invocation: null, trace: null, spanId: null, chosen: false });
    }
    if (!ctx.sessionId) return render();
    try {
      state.traces = await api.traces(ctx.app, ctx.user, ctx.sessionId);
    } catch (error) {
      if (error.status !== 404) fail(error);
      state.traces = null;
    }
    if (mine !== generation) return;
    const ids = (state.traces?.invocations || []).map((t) => t.invocationId);
    const wanted = wantedInvocation(ctx, ids);
    await choose(wanted, false, mine);
    // A run that just ended may not have its spans written yet: look again shortly.
    const newest = ctx.events.length ? ctx.events[ctx.events.length - 1].invocationId : null;
    const complete = state.trace?.spans.some((s) => s.name === "invocation");
    if (complete && state.traces?.recording) {
      // The invocation's own span ends, and is written, after all of its others: the totals
      // read before its trace may have missed some of them, so read them again.
      const again = await api.traces(ctx.app, ctx.user, ctx.sessionId).catch(() => null);
      if (mine !== generation) return;
      if (again) {
        state.traces = again;
        render();
      }
    }
    if (state.traces?.recording && attempt < RETRIES && ((newest && !ids.includes(newest)) || (state.trace && !complete))) {
      retryTimer = setTimeout(() => refresh(attempt + 1), RETRY_MS);
    }
  }

  function wantedInvocation(ctx, ids) {
    // An event selected since the last look wins over an earlier choice from the list.
    if (ctx.selectedEventId && ctx.selectedEventId !== state.selectedEventId) state.chosen = false;
    state.selectedEventId = ctx.selectedEventId;
    if (state.chosen && ids.includes(state.invocation)) return state.invocation;
    const selected = ctx.events.find((e) => e.id === ctx.selectedEventId);
    if (selected && ids.includes(selected.invocationId)) return selected.invocationId;
    return ids[0] || null;
  }

  async function choose(invocationId, byUser, mine = generation) {
    if (byUser) state.chosen = true;
    if (invocationId !== state.invocation) state.spanId = null;
    state.invocation = invocationId;
    state.trace = null;
    const ctx = context();
    if (invocationId && ctx.sessionId) {
      try {
        const trace = await api.invocationTrace(ctx.app, ctx.user, ctx.sessionId, invocationId);
        if (mine !== generation && !byUser) return;
        state.trace = trace;
      } catch (error) {
        if (error.status !== 404) fail(error);
      }
    }
    render();
  }

  function render() {
    const list = state.traces?.invocations || [];
    const count = list.length;
    select.replaceChildren(...list.map((t, i) => h("option", { value: t.invocationId, selected: t.invocationId === state.invocation },
      `#${count - i} ${shortId(t.invocationId)} · ${clock(t.startTime)} · ${ms(t.durationMs)}`)));
    select.disabled = !count;
    if (!state.sessionId) {
      totals.replaceChildren();
      waterfall.replaceChildren(h("div", { class: "empty small" }, "No session selected."));
      detail.hidden = true;
      return;
    }
    if (!count) {
      totals.replaceChildren();
      waterfall.replaceChildren(h("div", { class: "empty small" }, state.traces?.recording
        ? "No spans recorded in this session yet: send a message."
        : "This server does not record spans. Start it with `cairn web`, or `cairn api-server --record-spans`."));
      detail.hidden = true;
      return;
    }
    totals.replaceChildren(
      totalsRow("invocation", state.trace?.totals, "trace-invocation-totals"),
      totalsRow("session", state.traces.session, "trace-session-totals"),
    );
    renderWaterfall();
    renderDetail();
  }

  function renderWaterfall() {
    const spans = state.trace?.spans || [];
    if (!spans.length) return waterfall.replaceChildren(h("div", { class: "empty small" }, "Reading spans…"));
    const total = Math.max(state.trace.totals.durationMs, 0.001);
    const ticks = h("div", { class: "trace-row trace-scale", "aria-hidden": "true" },
      h("span", { class: "trace-name" }, ""),
      h("span", { class: "trace-track" }, [0, 0.5, 1].map((f) =>
        h("span", { class: "trace-tick", style: { left: `${f * 100}%` } }, ms(total * f)))),
      h("span", { class: "trace-duration" }, ""));
    waterfall.replaceChildren(ticks, ...ordered(spans).map(({ span, depth }) => spanRow(span, depth, total)));
  }

  function spanRow(span, depth, total) {
    const failed = span.status === "ERROR";
    const left = (span.offsetMs / total) * 100;
    const width = Math.max((span.durationMs / total) * 100, 0.4);
    return h("div", {
      class: `trace-row op-${opClass(span.operation)}${failed ? " error" : ""}${span.spanId === state.spanId ? " selected" : ""}`,
      role: "listitem",
      tabindex: 0,
      dataset: { spanId: span.spanId, name: span.name },
      title: failed ? span.statusMessage || "error" : span.name,
      onclick: () => { state.spanId = state.spanId === span.spanId ? null : span.spanId; renderWaterfall(); renderDetail(); },
      onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.currentTarget.click(); } },
    },
      h("span", { class: "trace-name", style: { paddingLeft: `${depth * 14}px` } },
        failed ? h("span", { class: "trace-status", "aria-label": "error" }, "✕ ") : null, span.name),
      h("span", { class: "trace-track" },
        h("span", { class: "trace-bar", style: { left: `${left}%`, width: `${Math.min(width, 100 - left)}%` } })),
      h("span", { class: "trace-duration" }, `+${ms(span.offsetMs)} · ${ms(span.durationMs)}`));
  }

  function renderDetail() {
    const span = state.trace?.spans.find((s) => s.spanId === state.spanId);
    detail.hidden = !span;
    if (!span) return detail.replaceChildren();
    const a = span.attributes || {};
    const parts = [
      h("h4", {}, span.name, " ", h("span", { class: `badge ${span.status === "ERROR" ? "failed" : ""}` }, span.status)),
      facts([
        ["start", `+${ms(span.offsetMs)}`],
        ["duration", ms(span.durationMs)],
        ["tokens in / out", span.inputTokens != null ? `${span.inputTokens} / ${span.outputTokens ?? 0}` : null],
        ["finish reason", (a["gen_ai.response.finish_reasons"] || []).join(", ") || null],
        ["model", a["gen_ai.response.model"] || a["gen_ai.request.model"] || null],
        ["event", span.eventId || null],
      ]),
    ];
    if (span.status === "ERROR") {
      const exception = (span.events || []).find((e) => e.name === "exception");
      parts.push(section("Error", span.statusMessage || a["error.type"] || "error", "trace-error"));
      const stack = exception?.attributes?.["exception.stacktrace"];
      if (stack) parts.push(h("details", {}, h("summary", {}, "Traceback"), h("pre", {}, stack)));
    }
    if (span.operation === "chat") {
      const captured = "gen_ai.input.messages" in a;
      if (!captured) parts.push(h("p", { class: "muted small" }, "Content capture is off: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true to record what was sent and got."));
      parts.push(
        messageSection("System instruction", a["gen_ai.system_instructions"], "trace-system", true),
        messageSection("Messages sent", a["gen_ai.input.messages"], "trace-input"),
        toolsSection(a["gen_ai.tool.definitions"]),
        jsonSection("Config", a["cairn.request.config"], "trace-config"),
        messageSection("Response", a["gen_ai.output.messages"], "trace-output"),
      );
    } else if (span.operation === "execute_tool") {
      parts.push(
        jsonSection("Arguments", a["gen_ai.tool.call.arguments"], "trace-arguments"),
        jsonSection("Result", a["gen_ai.tool.call.result"], "trace-result"),
      );
    }
    parts.push(h("details", { class: "trace-attributes" }, h("summary", {}, "All attributes"), h("pre", {}, pretty(a))));
    detail.replaceChildren(...parts.filter(Boolean));
  }

  return { refresh };
}

/** Spans in tree order (children after their parent, by start), with their depth. */
function ordered(spans) {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map();
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const out = [];
  const walk = (parent, depth) => {
    for (const span of (children.get(parent) || []).sort((x, y) => x.offsetMs - y.offsetMs)) {
      out.push({ span, depth });
      walk(span.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

function totalsRow(label, t, id) {
  if (!t) return h("div", { class: "trace-total", id }, h("b", {}, label), h("span", { class: "muted" }, "…"));
  const item = (name, value) => h("span", { class: "trace-stat", dataset: { stat: name } }, h("small", {}, name), value);
  return h("div", { class: "trace-total", id },
    h("b", {}, label),
    item("tokens in", String(t.inputTokens)),
    item("tokens out", String(t.outputTokens)),
    item("model", `${ms(t.modelMs)} · ${t.modelCalls} call${t.modelCalls === 1 ? "" : "s"}`),
    item("tools", `${ms(t.toolMs)} · ${t.toolCalls} call${t.toolCalls === 1 ? "" : "s"}`),
    item("errors", String(t.errors)),
    item("duration", ms(t.durationMs)));
}

function facts(pairs) {
  return h("table", { class: "kv trace-facts" }, pairs.filter(([, v]) => v != null).map(([k, v]) =>
    h("tr", {}, h("td", { class: "key" }, k), h("td", {}, String(v)))));
}

function section(title, text, id) {
  return h("section", { class: "trace-section", id }, h("h5", {}, title), h("pre", {}, text));
}

/** A JSON attribute, pretty-printed; cut (not JSON any more) it is shown as it is. */
function jsonSection(title, raw, id) {
  if (raw === undefined) return null;
  let shown = raw;
  try {
    const value = JSON.parse(raw);
    if (Array.isArray(value) && !value.length) return null;
    shown = pretty(value);
  } catch {
    /* truncated: its marker says so */
  }
  return section(title, shown, id);
}

/** Messages (or a system instruction's parts) as role-labelled blocks; cut JSON as it is. */
function messageSection(title, raw, id, bare = false) {
  if (raw === undefined) return null;
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    return section(title, raw, id);
  }
  if (!Array.isArray(value) || !value.length) return null;
  const messages = bare ? [{ role: "system", parts: value }] : value;
  return h("section", { class: "trace-section", id }, h("h5", {}, title),
    messages.map((m) => h("div", { class: `trace-message role-${m.role}` },
      h("span", { class: "trace-role" }, m.role, m.finish_reason ? ` · ${m.finish_reason}` : ""),
      (m.parts || []).map(partView))));
}

function partView(part) {
  switch (part.type) {
    case "text":
    case "reasoning":
      return h("pre", { class: `trace-part ${part.type}` }, part.content);
    case "tool_call":
      return h("pre", { class: "trace-part call" }, `${part.name}(${JSON.stringify(part.arguments ?? {})})`);
    case "tool_call_response":
      return h("pre", { class: "trace-part result" }, `→ ${JSON.stringify(part.response)}`);
    case "blob":
      return h("pre", { class: "trace-part" }, `[${part.mime_type || "data"}, ${part.size} bytes]`);
    case "uri":
      return h("pre", { class: "trace-part" }, `[${part.mime_type || "file"}] ${part.uri}`);
    default:
      return h("pre", { class: "trace-part" }, pretty(part));
  }
}

function toolsSection(raw) {
  if (raw === undefined) return null;
  let tools;
  try {
    tools = JSON.parse(raw);
  } catch {
    return section("Tools", raw, "trace-tools");
  }
  return h("section", { class: "trace-section", id: "trace-tools" }, h("h5", {}, `Tools (${tools.length})`),
    tools.map((t) => h("details", { class: "trace-tool" },
      h("summary", {}, h("code", {}, t.name || t.type), t.description ? ` — ${t.description}` : ""),
      h("pre", {}, pretty(t.parameters ?? t)))));
}

function opClass(operation) {
  return { chat: "chat", execute_tool: "tool", invoke_agent: "agent" }[operation] || "other";
}

function ms(value) {
  if (value == null) return "";
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 10) return `${Math.round(value)} ms`;
  return `${value.toFixed(1)} ms`;
}

function clock(epochMs) {
  return new Date(epochMs).toLocaleTimeString();
}

function shortId(id) {
  return id.length > 12 ? `${id.slice(0, 10)}…` : id;
}
