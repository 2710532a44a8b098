// The inbox under the chat: what the session waits for. One pause shows its answer form;
// several show as a compact list (kind, what it asks, which node or tool) with one form
// open at a time, bounded in height so the chat stays in view. Answering one opens the next.

import { h } from "./dom.js";
import { interruptCard } from "./forms.js";
import { callText, short } from "./model.js";

const KIND_LABELS = {
  input: "input",
  confirmation: "confirm",
  credential: "credential",
  long_running: "long-running",
  in_doubt: "in doubt",
  interrupted: "interrupted",
};

/** What an interrupt asks, in a line. */
export function interruptSummary(interrupt) {
  const call = interrupt.functionCall ? callText(interrupt.functionCall) : interrupt.name;
  return {
    kind: KIND_LABELS[interrupt.kind] || interrupt.kind,
    what: short(interrupt.message || call || "", 140),
    where: interrupt.nodePath || interrupt.functionCall?.name || interrupt.author || "",
  };
}

/**
 * `root` (#inbox), `count` and `items` elements; `answer(interrupt, response)` and
 * `resume(invocationId)` send an answer or continue an interrupted invocation (promises).
 */
export function inboxView({ root, count, items, answer, resume }) {
  const cards = new Map(); // interrupt id -> its card, so a half-typed answer survives a refresh
  let open = null; // the interrupt id whose form is shown
  let openIndex = 0;
  let shown = [];

  function cardFor(interrupt) {
    if (!cards.has(interrupt.id)) {
      cards.set(interrupt.id, interruptCard(interrupt, {
        answer: (response) => answer(interrupt, response),
        resume: (invocationId) => resume(invocationId),
      }));
    }
    return cards.get(interrupt.id);
  }

  function expand(id, focus = false) {
    open = id;
    openIndex = Math.max(0, shown.findIndex((i) => i.id === id));
    draw();
    if (focus) focusOpen();
  }

  function item(interrupt) {
    const { kind, what, where } = interruptSummary(interrupt);
    const expanded = interrupt.id === open;
    const bodyId = `inbox-body-${interrupt.id}`;
    const summary = h("button", {
      type: "button",
      class: "inbox-summary",
      "aria-expanded": expanded ? "true" : "false",
      "aria-controls": bodyId,
      onclick: () => expand(interrupt.id, true),
    },
    h("span", { class: `kind ${interrupt.kind}` }, kind),
    h("span", { class: "what", title: what }, what),
    h("span", { class: "where" }, where));
    return h("li", { class: `inbox-item${expanded ? " expanded" : ""}`, dataset: { interruptId: interrupt.id, kind: interrupt.kind } },
      summary,
      expanded ? h("div", { id: bodyId, class: "inbox-body" }, cardFor(interrupt)) : null);
  }

  function draw() {
    const many = shown.length > 1;
    root.classList.toggle("compact", many);
    if (!many) {
      items.replaceChildren(...shown.map(cardFor));
      return;
    }
    items.replaceChildren(h("ol", { class: "inbox-list", "aria-label": "pending interrupts" }, shown.map(item)));
    items.querySelector(".inbox-item.expanded")?.scrollIntoView({ block: "nearest" });
  }

  function focusOpen() {
    const card = items.querySelector(".interrupt-card");
    card?.querySelector("input, textarea, select, button:not([hidden])")?.focus();
  }

  return {
    render(interrupts) {
      const hadFocus = root.contains(document.activeElement) || document.activeElement === document.body;
      shown = interrupts;
      root.hidden = !shown.length;
      count.textContent = String(shown.length);
      for (const id of cards.keys()) if (!shown.some((i) => i.id === id)) cards.delete(id);
      const moved = open !== null && !shown.some((i) => i.id === open);
      if (open === null || moved) {
        // The open one was answered (or none was open): open the one now in its place.
        open = shown.length ? shown[Math.min(openIndex, shown.length - 1)].id : null;
      }
      openIndex = Math.max(0, shown.findIndex((i) => i.id === open));
      draw();
      if (moved && hadFocus) focusOpen();
    },
    /** Scroll the inbox into view and put the cursor in the open answer form. */
    focus() {
      if (root.hidden) return false;
      root.scrollIntoView({ block: "nearest" });
      focusOpen();
      return true;
    },
  };
}
