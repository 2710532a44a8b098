// The chat pane: the messages, tool chips and node outputs of the log's window. Rows are
// added as the window grows (older pages at the top, streamed events at the bottom);
// nothing is re-rendered per event.

import { h, icon, pretty } from "./dom.js";
import { callText, parts, short, shortId, textOf } from "./model.js";

/**
 * chatView({box, log, select}) follows `log` (session_log.js); `select(eventId)` is called
 * when a chat item is clicked.
 */
export function chatView({ box, log, select, hasSession }) {
  const live = new Map(); // author -> {element, body, text} of the reply being streamed
  let pending = null; // the user's message until the log has it
  const more = h("button", { class: "ghost small load-older", onclick: () => log.older() }, "load older messages");

  log.on((kind, events) => {
    if (kind === "reset") return reset();
    if (kind === "older") return older(events);
    if (kind === "newer") return newer(events);
    if (kind === "updated") return marks();
    if (kind === "inserted") return inserted(events);
  });
  box.addEventListener("scroll", () => {
    if (box.scrollTop < 40 && log.olderCursor) log.older().catch(() => {});
  });

  function placeholder() {
    return h("div", { class: "empty" }, hasSession() ? "No messages yet. Say something." : "Pick a session or send a message to start one.");
  }

  function reset() {
    const items = log.events.flatMap(chatItems);
    more.hidden = !log.olderCursor;
    box.replaceChildren(more, ...(items.length ? items : [placeholder()]), ...(pending ? [pending] : []), ...[...live.values()].map((l) => l.element));
    box.scrollTop = box.scrollHeight;
  }

  function older(events) {
    more.hidden = !log.olderCursor;
    const items = events.flatMap(chatItems);
    if (!items.length) return;
    box.querySelector(":scope > .empty")?.remove();
    const from = box.scrollHeight - box.scrollTop;
    more.after(...items);
    box.scrollTop = box.scrollHeight - from; // the rows in view stay in view
  }

  function newer(events) {
    const items = events.flatMap(chatItems);
    if (!items.length) return;
    box.querySelector(":scope > .empty")?.remove();
    for (const event of events) {
      const streaming = live.get(event.author);
      if (streaming && textOf(event)) {
        streaming.element.remove();
        live.delete(event.author);
      }
      if (pending && event.author === "user") {
        pending.remove();
        pending = null;
      }
    }
    const anchor = pending || [...live.values()][0]?.element || null;
    for (const item of items) box.insertBefore(item, anchor);
    box.scrollTop = box.scrollHeight;
  }

  function inserted(entries) {
    for (const { event, before } of entries) {
      if (pending && event.author === "user") {
        pending.remove();
        pending = null;
      }
      const next = box.querySelector(`[data-event-id="${CSS.escape(before)}"]`);
      for (const item of chatItems(event)) box.insertBefore(item, next || pending || [...live.values()][0]?.element || null);
    }
  }

  function marks() {
    for (const item of box.querySelectorAll("[data-event-id]")) markRewound(item, log.rewound.has(item.dataset.eventId));
  }

  function chatItems(event) {
    const rewound = log.rewound.has(event.id);
    const mark = (element) => {
      element.dataset.eventId = event.id;
      markRewound(element, rewound);
      element.addEventListener("click", () => select(event.id));
      return element;
    };
    const actions = event.actions || {};
    const out = [];
    if (actions.rewindBeforeInvocationId) {
      out.push(mark(h("div", { class: "divider rewind" }, `rewound to before invocation ${shortId(actions.rewindBeforeInvocationId)}`)));
      return out;
    }
    const isUser = event.author === "user";
    const text = textOf(event);
    if (text) {
      out.push(mark(h("div", { class: `msg ${isUser ? "user" : "agent"}`, dataset: { author: event.author } },
        isUser ? null : h("div", { class: "msg-author" }, event.author, event.nodeInfo?.path ? h("span", { class: "path" }, event.nodeInfo.path) : null),
        h("div", { class: "bubble" }, text))));
    }
    const waiting = new Set(event.longRunningToolIds || []);
    for (const p of parts(event)) {
      if (p.functionCall) {
        const call = p.functionCall;
        if (waiting.has(call.id)) {
          const ask = call.args?.message || call.args?.toolConfirmation?.hint || `${call.name}`;
          const about = call.args?.originalFunctionCall ? callText(call.args.originalFunctionCall) : null;
          out.push(mark(h("div", { class: "chip interrupt" }, h("span", { class: "chip-icon" }, icon("pause")), h("span", {}, ask), about && !ask.includes(call.args.originalFunctionCall.name) ? h("code", {}, about) : null)));
        } else {
          out.push(mark(h("div", { class: "chip call" }, h("span", { class: "chip-icon" }, "ƒ"), h("code", {}, callText(call)))));
        }
      } else if (p.functionResponse) {
        const r = p.functionResponse;
        const label = isUser ? "answered" : r.name;
        out.push(mark(h("div", { class: `chip result${isUser ? " answer" : ""}` }, h("span", { class: "chip-icon" }, isUser ? "✓" : "↳"), h("span", {}, label), h("code", {}, short(r.response, 90)))));
      }
    }
    if (event.errorMessage || event.errorCode) {
      out.push(mark(h("div", { class: "chip error" }, h("span", { class: "chip-icon" }, "!"), h("span", {}, event.errorCode || "error"), h("span", {}, event.errorMessage || ""))));
    } else if (!text && (actions.endOfAgent || (event.nodeInfo?.outputFor || []).length) && event.output !== undefined && event.output !== null) {
      const output = typeof event.output === "string" ? event.output : pretty(event.output);
      const node = event.nodeInfo?.path ? event.nodeInfo.path.split("/").pop() : event.author;
      out.push(mark(h("div", { class: "node-output" },
        h("div", { class: "node-output-head" }, h("span", { class: "node-name" }, node), actions.route !== undefined ? h("span", { class: "route-tag" }, `route: ${[].concat(actions.route).join(", ")}`) : null),
        h("pre", {}, output))));
    }
    return out;
  }

  return {
    /** The user's message, shown until the log has it. */
    pending(text) {
      pending?.remove();
      box.querySelector(":scope > .empty")?.remove();
      pending = h("div", { class: "msg user pending" }, h("div", { class: "bubble" }, text));
      box.insertBefore(pending, [...live.values()][0]?.element || null);
      box.scrollTop = box.scrollHeight;
    },
    /** A partial event: its text grows the author's live bubble. */
    partial(event) {
      const text = textOf(event);
      if (!text) return;
      let streaming = live.get(event.author);
      if (!streaming) {
        const body = h("div", { class: "bubble-text" });
        const element = h("div", { class: "msg agent streaming", dataset: { author: event.author } },
          h("div", { class: "msg-author" }, event.author, h("span", { class: "typing" })),
          h("div", { class: "bubble" }, body));
        streaming = { element, body, text: "" };
        live.set(event.author, streaming);
        box.append(element);
      }
      streaming.text += text;
      streaming.body.textContent = streaming.text;
      box.scrollTop = box.scrollHeight;
    },
    /** The run ended: no live bubble or pending message stays. */
    settle() {
      for (const streaming of live.values()) streaming.element.remove();
      live.clear();
      pending?.remove();
      pending = null;
    },
  };
}

function markRewound(element, rewound) {
  element.classList.toggle("rewound", rewound);
  if (rewound) element.title = "rewound: taken back by a later rewind (still in the log)";
  else element.removeAttribute("title");
}
