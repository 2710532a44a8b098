// The timeline pane: the log's window grouped by invocation, grown a page at a time
// (scroll to the top for older events) and by streamed events; search and filters run on
// the server's timeline route; the inspector shows an event's JSON and the state diff the
// server computed; keys: j/k or ↑/↓ move, Enter opens, / searches, Esc clears.

import { h, icon, pretty } from "./dom.js";
import { SCOPES, eventKind, eventSummary, shortId, time } from "./model.js";

export const KINDS = ["message", "reply", "tool call", "tool result", "interrupt", "answer", "node output", "state", "rewind", "error", "compaction", "transfer", "end", "event"];
const SEARCH_PAGE = 50;

/**
 * timelineView({root, inspector, controls, log, api, context, act, toast, fail}):
 * `context()` gives {app, user, sessionId, graph, running}; `act` has rewind(invocationId),
 * fork(eventId), graph(invocationId) and showTimeline().
 */
export function timelineView({ root, inspector, controls, log, api, context, act, toast, fail }) {
  let selectedId = null;
  let search = null; // {events, changes, rewound, olderCursor, scanned, done} while filtering
  let searchGeneration = 0;
  const more = h("button", { class: "ghost small load-older", onclick: () => loadOlder() }, "load older events");
  const status = controls.status;

  log.on((kind, events) => {
    if (kind === "reset") {
      if (!log.where) clearSearch(false);
      return search ? null : renderWindow();
    }
    if (search) return;
    if (kind === "older") return older(events);
    if (kind === "newer") return newer(events);
    if (kind === "updated") return updated(events);
    if (kind === "inserted") return inserted(events);
  });
  root.addEventListener("scroll", () => {
    if (root.scrollTop < 40 && !search && log.olderCursor) loadOlder();
  });

  // ------------------------------------------------------------ the window

  function loadOlder() {
    if (search) return searchOlder();
    return log.older().catch(fail);
  }

  function changesOf(id) {
    return (search?.changes.get(id)) || log.changes.get(id) || [];
  }

  function isRewound(id) {
    return log.rewound.has(id) || Boolean(search?.rewound.has(id));
  }

  /** Replace the timeline's rows; the keyboard focus stays in the timeline if it was there. */
  function replaceRows(...children) {
    const focused = root.contains(document.activeElement);
    root.replaceChildren(...children);
    if (focused) root.focus({ preventScroll: true });
  }

  function renderWindow() {
    more.textContent = "load older events";
    more.hidden = !log.olderCursor;
    if (!log.events.length) {
      replaceRows(h("div", { class: "empty small" }, context().sessionId ? "No events yet." : "No session selected."));
    } else {
      replaceRows(more, ...groups(log.events).map(section));
    }
    if (!log.find(selectedId)) selectedId = null;
    renderInspector();
    const selected = root.querySelector(".event-row.selected");
    if (selected) selected.scrollIntoView({ block: "nearest" });
    else root.scrollTop = root.scrollHeight;
  }

  function older(events) {
    more.hidden = !log.olderCursor;
    if (!events.length) return;
    const from = root.scrollHeight - root.scrollTop;
    const first = root.querySelector("section.invocation");
    const batch = groups(events);
    const last = batch[batch.length - 1];
    if (first && first.dataset.invocationId === (last.id ?? "")) {
      first.querySelector("ol").prepend(...last.events.map(eventRow));
      refreshHeader(first);
      batch.pop();
    }
    more.after(...batch.map(section));
    root.scrollTop = root.scrollHeight - from; // the rows in view stay in view
  }

  function newer(events) {
    if (!root.querySelector("section.invocation")) return renderWindow();
    const follow = root.scrollHeight - root.scrollTop - root.clientHeight < 120;
    for (const event of events) {
      const sections = root.querySelectorAll("section.invocation");
      const last = sections[sections.length - 1];
      if (last && last.dataset.invocationId === (event.invocationId ?? "")) {
        last.querySelector("ol").append(eventRow(event));
        refreshHeader(last);
      } else root.append(section({ id: event.invocationId, events: [event] }));
    }
    if (follow) root.scrollTop = root.scrollHeight;
  }

  function inserted(entries) {
    for (const { event, before } of entries) {
      const next = root.querySelector(`.event-row[data-event-id="${CSS.escape(before)}"]`);
      const home = next?.closest("section.invocation");
      if (!next) newer([event]);
      else if (home.dataset.invocationId === (event.invocationId ?? "")) {
        next.before(eventRow(event));
        refreshHeader(home);
      } else if (next === home.querySelector(".event-row")) home.before(section({ id: event.invocationId, events: [event] }));
      else return renderWindow(); // inside another invocation's rows: draw the window again
    }
  }

  function updated(events) {
    for (const event of events) {
      const row = root.querySelector(`.event-row[data-event-id="${CSS.escape(event.id)}"]`);
      if (row) row.replaceWith(eventRow(event));
    }
    for (const element of root.querySelectorAll("section.invocation")) refreshHeader(element);
    if (events.some((e) => e.id === selectedId)) renderInspector();
  }

  // ------------------------------------------------------------ rows

  function groups(events) {
    const found = [];
    for (const event of events) {
      const last = found[found.length - 1];
      if (last && last.id === event.invocationId) last.events.push(event);
      else found.push({ id: event.invocationId, events: [event] });
    }
    return found;
  }

  function section(group) {
    const element = h("section", { class: "invocation", dataset: { invocationId: group.id ?? "" } },
      h("header", {}), h("ol", {}, group.events.map(eventRow)));
    refreshHeader(element);
    return element;
  }

  function refreshHeader(element) {
    const id = element.dataset.invocationId;
    const rows = [...element.querySelectorAll(".event-row")];
    const allRewound = rows.every((row) => row.classList.contains("rewound"));
    const isRewindOnly = rows.every((row) => row.dataset.kind === "rewind");
    const buttons = [];
    const { graph, running } = context();
    if (graph && !isRewindOnly) {
      buttons.push(h("button", { class: "ghost small", title: "Show this invocation on the graph", onclick: () => act.graph(id) }, "graph"));
    }
    if (!allRewound && !isRewindOnly && id && !search) {
      buttons.push(h("button", { class: "ghost small rewind", title: "Take the session back to just before this invocation (the log keeps every event)", "aria-label": `rewind ${id}`, onclick: () => act.rewind(id), disabled: running }, icon("rewind"), " rewind"));
    }
    element.classList.toggle("rewound", allRewound);
    const firstTime = rows[0]?.dataset.time;
    element.querySelector("header").replaceChildren(
      h("span", { class: "inv-id", title: id }, shortId(id) || "(no invocation)"),
      h("span", { class: "inv-meta" }, `${time(Number(firstTime))} · ${rows.length} event${rows.length > 1 ? "s" : ""}`),
      h("span", { class: "spacer" }),
      ...buttons);
  }

  function eventRow(event) {
    const kind = eventKind(event);
    const rewound = isRewound(event.id);
    const changes = changesOf(event.id);
    return h("li", {
      class: `event-row kind-${kind.replace(/\s/g, "-")}${rewound ? " rewound" : ""}${event.id === selectedId ? " selected" : ""}`,
      dataset: { eventId: event.id, kind, time: String(event.timestamp || "") },
      tabindex: -1,
      onclick: () => select(event.id),
    },
    h("span", { class: "ev-time" }, time(event.timestamp)),
    h("span", { class: "ev-author", title: event.nodeInfo?.path || event.author }, event.author),
    h("span", { class: `ev-kind k-${kind.replace(/\s/g, "-")}` }, kind),
    h("span", { class: "ev-summary" }, eventSummary(event)),
    changes.length ? h("span", { class: "ev-state", title: "changes state" }, `Δ${changes.length}`) : null,
    h("button", { class: "icon fork", tabindex: -1, title: "Fork: a new session with the history up to and including this event", "aria-label": `fork at ${event.id}`, onclick: (e) => { e.stopPropagation(); act.fork(event.id); } }, icon("fork")));
  }

  // ------------------------------------------------------------ selection and inspector

  function select(eventId, fromChat = false) {
    selectedId = selectedId === eventId && !fromChat ? null : eventId;
    if (fromChat) {
      if (search) clearSearch();
      act.showTimeline();
    }
    for (const row of root.querySelectorAll(".event-row")) {
      row.classList.toggle("selected", row.dataset.eventId === selectedId);
      row.classList.toggle("current", row.dataset.eventId === eventId);
    }
    root.querySelector(".event-row.selected")?.scrollIntoView({ block: "nearest" });
    renderInspector();
  }

  function findEvent(id) {
    return search?.events.find((e) => e.id === id) || log.find(id);
  }

  function renderInspector() {
    const event = selectedId ? findEvent(selectedId) : null;
    inspector.hidden = !event;
    if (!event) return inspector.replaceChildren();
    const changes = changesOf(event.id);
    const copy = h("button", { class: "ghost small", onclick: () => navigator.clipboard?.writeText(pretty(event)).then(() => toast("Event JSON copied.")) }, "copy JSON");
    inspector.replaceChildren(
      h("div", { class: "inspector-head" },
        h("strong", {}, eventKind(event)),
        h("span", {}, ` by ${event.author} at ${time(event.timestamp)}`),
        isRewound(event.id) ? h("span", { class: "badge rewound-badge" }, "rewound") : null,
        h("span", { class: "spacer" }),
        h("button", { class: "ghost small fork-here", onclick: () => act.fork(event.id) }, icon("fork"), " fork here"),
        copy,
        h("button", { class: "icon", "aria-label": "close", onclick: () => select(event.id) }, "✕")),
      h("h4", {}, "State changes"),
      changes.length ? stateDiffTable(changes) : h("p", { class: "muted" }, "This event changes no state."),
      h("h4", {}, "Event JSON ", h("small", { class: "muted" }, event.id)),
      h("pre", { class: "json-view" }, pretty(event)));
  }

  // ------------------------------------------------------------ search and filters

  function query() {
    return {
      text: controls.text.value.trim(),
      kind: controls.kind.value,
      author: controls.author.value.trim(),
      node: controls.node.value.trim(),
    };
  }

  async function runSearch() {
    const q = query();
    const mine = ++searchGeneration;
    const where = log.where;
    if (!where || !Object.values(q).some(Boolean)) return clearSearch(false);
    search = { q, where, events: [], changes: new Map(), rewound: new Set(), olderCursor: null, scanned: 0, done: false };
    status.textContent = "searching…";
    replaceRows(h("div", { class: "empty small" }, "Searching…"));
    await searchOlder(mine);
  }

  /** More matches, older than those shown: requests of a bounded scan each, until a page
   * of matches is found or the start of the log is reached. */
  async function searchOlder(mine = searchGeneration) {
    if (!search || search.done || search.loading) return;
    const current = search;
    current.loading = true;
    const found = [];
    try {
      do {
        const { app, user, sessionId } = current.where;
        const page = await api.timeline(app, user, sessionId, { ...current.q, limit: SEARCH_PAGE, cursor: current.olderCursor });
        if (mine !== searchGeneration || search !== current) return;
        found.unshift(...page.events);
        for (const [id, changes] of Object.entries(page.changes || {})) current.changes.set(id, changes);
        for (const id of page.rewoundEventIds || []) current.rewound.add(id);
        current.scanned += page.scanned;
        current.olderCursor = page.olderCursor || null;
        current.done = !current.olderCursor;
        status.textContent = `searching… ${current.scanned} events scanned`;
      } while (found.length < SEARCH_PAGE && !current.done);
    } catch (error) {
      if (mine === searchGeneration) fail(error);
      return;
    } finally {
      current.loading = false;
    }
    current.events = [...found, ...current.events];
    renderSearch(found);
  }

  function renderSearch(found) {
    const count = search.events.length;
    status.textContent = `${count} match${count === 1 ? "" : "es"} · ${search.scanned} events scanned${search.done ? "" : " (more older)"}`;
    more.textContent = "search older events";
    more.hidden = search.done;
    if (!count) {
      replaceRows(more, h("div", { class: "empty small" }, search.done ? "No event matches." : "No match yet."));
      return;
    }
    const from = root.scrollHeight - root.scrollTop;
    const firstRender = count === found.length;
    replaceRows(more, ...groups(search.events).map(section));
    root.classList.add("searching");
    if (firstRender) root.scrollTop = root.scrollHeight;
    else root.scrollTop = root.scrollHeight - from;
  }

  function clearSearch(clearFields = true) {
    searchGeneration += 1;
    const was = search;
    search = null;
    root.classList.remove("searching");
    status.textContent = "";
    if (clearFields) for (const field of [controls.text, controls.kind, controls.author, controls.node]) field.value = "";
    if (was) renderWindow();
  }

  let typing = null; // a search waiting for the user to stop typing
  const later = () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      typing = null;
      runSearch();
    }, 250);
  };
  /** Run the search now if one is waiting for the typing to stop. */
  const flush = async () => {
    if (typing === null) return;
    clearTimeout(typing);
    typing = null;
    await runSearch();
  };
  controls.text.addEventListener("input", later);
  controls.author.addEventListener("input", later);
  controls.node.addEventListener("input", later);
  controls.kind.addEventListener("change", runSearch);
  controls.form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(typing);
    typing = null;
    runSearch();
  });
  controls.kind.replaceChildren(h("option", { value: "" }, "any kind"), ...KINDS.map((k) => h("option", { value: k }, k)));

  // ------------------------------------------------------------ keys

  function move(step) {
    const rows = [...root.querySelectorAll(".event-row")];
    if (!rows.length) return;
    const at = rows.findIndex((row) => row.classList.contains("current"));
    const next = rows[at < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.max(0, Math.min(rows.length - 1, at + step))];
    for (const row of rows) row.classList.toggle("current", row === next);
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
    if (at === 0 && step < 0) loadOlder();
  }

  root.addEventListener("keydown", (event) => {
    if (event.target.closest("button") && event.key === "Enter") return;
    if (event.key === "j" || event.key === "ArrowDown") move(1);
    else if (event.key === "k" || event.key === "ArrowUp") move(-1);
    else if (event.key === "Enter") {
      const row = root.querySelector(".event-row.current");
      if (row && row.dataset.eventId !== selectedId) select(row.dataset.eventId);
    } else if (event.key === "Escape") {
      if (selectedId) select(selectedId);
      else if (search) clearSearch();
    } else return;
    event.preventDefault();
  });
  root.tabIndex = 0;
  controls.form.addEventListener("keydown", async (event) => {
    if (event.key === "Escape") {
      clearTimeout(typing);
      typing = null;
      clearSearch();
      root.focus();
    } else if (event.key === "ArrowDown" && event.target.tagName === "INPUT") {
      event.preventDefault();
      await flush();
      root.focus();
      move(1);
    }
  });
  document.addEventListener("keydown", (event) => {
    const typingHere = event.target.closest?.("input, textarea, select, [contenteditable]");
    if (event.key === "/" && !typingHere && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      act.showTimeline();
      controls.text.focus();
      controls.text.select();
    }
  });

  return {
    select,
    /** The selected event's id, or null. */
    get selectedId() {
      return selectedId;
    },
    /** Row controls that depend on the run (rewind is off while running). */
    refreshHeaders() {
      for (const element of root.querySelectorAll("section.invocation")) refreshHeader(element);
    },
    /** A new session: searches and the selection start over. */
    sessionChanged() {
      selectedId = null;
      clearSearch();
    },
  };
}

const show = (value) => (value === undefined ? "—" : JSON.stringify(value));

export function stateDiffTable(changes) {
  const rows = [];
  for (const scope of SCOPES) {
    const scoped = changes.filter((c) => c.scope === scope);
    if (!scoped.length) continue;
    rows.push(h("tr", { class: "scope-row" }, h("th", { colspan: 3 }, scope === "session" ? "session" : `${scope}:`)));
    for (const c of scoped) {
      const before = !c.known && !c.had ? h("span", { class: "muted", title: "shared state this session had not read before" }, "(unknown)") : show(c.before);
      rows.push(h("tr", { class: c.removed ? "removed" : c.had ? "changed" : "added", dataset: { scope, key: c.key } },
        h("td", { class: "key" }, c.key),
        h("td", { class: "before" }, before),
        h("td", { class: "after" }, c.removed ? h("span", { class: "muted" }, "(removed)") : show(c.after))));
    }
  }
  return h("table", { class: "diff" }, h("thead", {}, h("tr", {}, h("th", {}, "key"), h("th", {}, "before"), h("th", {}, "after"))), h("tbody", {}, rows));
}
