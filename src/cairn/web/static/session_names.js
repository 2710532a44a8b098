// Session names and fork lineage: what the session list and the chat head call a session
// (its name, else its first message, else its id) and, for a fork, a link to its parent.

import { api } from "./api.js";
import { h, icon } from "./dom.js";
import { shortId } from "./model.js";

/** What to call a session: its title, else its short id. */
export function sessionTitle(sessionId, info) {
  return info?.title || shortId(sessionId);
}

/** "forked from <parent> at event <id>", the parent a link when it still exists. */
export function lineage(info, openSession) {
  const from = info?.forkedFrom;
  if (!from) return null;
  const name = from.title || shortId(from.sessionId);
  const parent = from.exists
    ? h("a", {
      href: "#", class: "parent-link", title: from.sessionId, dataset: { parentId: from.sessionId },
      onclick: (event) => { event.preventDefault(); event.stopPropagation(); openSession(from.sessionId); },
    }, name)
    : h("span", { class: "parent-gone", title: `${from.sessionId} (deleted)` }, `${name} (deleted)`);
  return h("div", { class: "lineage" }, icon("fork"), " forked from ", parent,
    from.eventId ? h("span", { class: "muted", title: from.eventId }, ` at event ${shortId(from.eventId)}`) : null);
}

/**
 * The chat head's title: the session's title with a rename button; renaming edits it in
 * place (Enter saves, Escape cancels; an empty name goes back to the first message).
 */
export function renderSessionHead(root, { app, user, sessionId, info, openSession, renamed, fail }) {
  if (!sessionId) {
    root.replaceChildren(h("h2", { id: "session-title" }, "No session selected"));
    return;
  }
  const title = h("h2", { id: "session-title", title: sessionId }, sessionTitle(sessionId, info));
  const edit = h("button", { class: "icon rename", title: "Rename this session", "aria-label": "rename session" }, "✎");
  edit.addEventListener("click", () => {
    const input = h("input", { class: "rename-input", "aria-label": "session name", value: info?.name || "", placeholder: info?.firstMessage || "name this session", maxlength: 200 });
    const error = h("span", { class: "form-error", role: "alert" });
    const form = h("form", { class: "rename-form" }, input, h("button", { type: "submit", class: "primary small" }, "Save"), error);
    const cancel = () => renderSessionHead(root, { app, user, sessionId, info, openSession, renamed, fail });
    input.addEventListener("keydown", (event) => event.key === "Escape" && cancel());
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const next = await api.rename(app, user, sessionId, input.value.trim() || null);
        await renamed(next);
      } catch (failure) {
        error.textContent = failure?.message || String(failure);
      }
    });
    root.replaceChildren(form);
    input.focus();
    input.select();
  });
  root.replaceChildren(h("div", { class: "session-head-title" }, title, edit), lineage(info, openSession) || "");
}
