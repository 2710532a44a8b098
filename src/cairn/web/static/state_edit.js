// The State tab: each scope's keys, editable. A change is sent through ADK's PATCH (a user
// event carrying stateDelta / removedStateKeys), so it shows in the timeline like any event.

import { api } from "./api.js";
import { h, pretty } from "./dom.js";
import { SCOPES, splitState } from "./model.js";

const PREFIX = { app: "app:", user: "user:", session: "" };

/** Why a save failed, in the words a user can act on. */
export function saveError(error) {
  if (error?.status === 409) {
    return "The session is busy: a run holds it. Wait until the run ends (or stop it), then save again.";
  }
  return error?.message || String(error);
}

/** The JSON value typed into a field, or an Error saying what is wrong with it. */
export function parseValue(text) {
  if (!text.trim()) return new Error("Enter a JSON value (e.g. 42, true, \"text\", [1, 2] or {\"a\": 1}).");
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return new Error(`Not valid JSON (${error.message}). Strings need double quotes: "text".`);
  }
}

export function stateEditor({ root, context, toast, changed }) {
  let editing = null; // {scope, key, draft} of the row being edited
  let adding = null; // {scope, key, draft} of the key being added
  let detail = null;
  let focusForm = false; // a form just opened: its first field takes the focus

  async function send(form, delta, removed, done) {
    const { app, user, sessionId } = context();
    const error = form.querySelector(".form-error");
    error.textContent = "";
    for (const button of form.querySelectorAll("button")) button.disabled = true;
    try {
      await api.updateState(app, user, sessionId, delta, removed);
    } catch (failure) {
      error.textContent = saveError(failure);
      for (const button of form.querySelectorAll("button")) button.disabled = false;
      return;
    }
    editing = null;
    adding = null;
    toast(done);
    await changed();
  }

  function valueForm(scope, key, draft, { isNew }) {
    const keyInput = isNew
      ? h("input", { class: "state-key-input", "aria-label": `new ${scope} key`, placeholder: "key", value: key, spellcheck: "false" })
      : null;
    const text = h("textarea", { class: "state-value-input", rows: 3, spellcheck: "false", "aria-label": `value of ${PREFIX[scope]}${key || "new key"}` });
    text.value = draft;
    const remember = () => {
      const open = isNew ? adding : editing;
      if (!open) return;
      open.draft = text.value;
      if (keyInput) open.key = keyInput.value;
    };
    text.addEventListener("input", remember);
    keyInput?.addEventListener("input", remember);
    const form = h("form", { class: "state-form", dataset: { scope } },
      keyInput,
      text,
      h("div", { class: "form-error", role: "alert" }),
      h("div", { class: "state-form-buttons" },
        h("button", { type: "submit", class: "primary small" }, "Save"),
        h("button", { type: "button", class: "ghost small", onclick: () => { editing = null; adding = null; render(detail); } }, "Cancel")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = (keyInput ? keyInput.value : key).trim();
      const error = form.querySelector(".form-error");
      if (!name) return void (error.textContent = "Enter a key.");
      if (isNew && /^(app|user|temp):/.test(name)) {
        return void (error.textContent = `Leave out the prefix: the key goes into the ${scope} scope (add it under that scope).`);
      }
      const parsed = parseValue(text.value);
      if (parsed instanceof Error) return void (error.textContent = parsed.message);
      const full = PREFIX[scope] + name;
      send(form, { [full]: parsed.value }, [], `Saved ${full}: appended as an event.`);
    });
    return form;
  }

  function row(scope, key, value) {
    const full = PREFIX[scope] + key;
    if (editing && editing.scope === scope && editing.key === key) {
      return h("tr", { dataset: { key }, class: "editing" }, h("td", { class: "key" }, key),
        h("td", { colspan: 2 }, valueForm(scope, key, editing.draft, { isNew: false })));
    }
    const remove = h("button", { class: "icon remove-key", title: `Remove ${full}`, "aria-label": `remove ${full}` }, "✕");
    remove.addEventListener("click", () => {
      if (!remove.classList.contains("confirm")) {
        remove.classList.add("confirm");
        remove.textContent = "Remove?";
        return;
      }
      const form = h("form", {}, h("div", { class: "form-error", role: "alert" }));
      remove.replaceWith(form);
      send(form, {}, [full], `Removed ${full}: appended as an event.`).then(() => {
        const message = form.querySelector(".form-error").textContent;
        if (message) toast(message, "error");
      });
    });
    return h("tr", { dataset: { key } },
      h("td", { class: "key" }, key),
      h("td", {}, h("pre", {}, typeof value === "string" ? value : pretty(value))),
      h("td", { class: "row-actions" },
        h("button", { class: "icon edit-key", title: `Edit ${full}`, "aria-label": `edit ${full}`, onclick: () => { editing = { scope, key, draft: pretty(value) }; adding = null; focusForm = true; render(detail); } }, "✎"),
        remove));
  }

  function section(scope, values) {
    const entries = Object.entries(values);
    const add = h("button", { class: "ghost small add-key", "aria-label": `add a ${scope} key`, onclick: () => { adding = { scope, key: "", draft: "" }; editing = null; focusForm = true; render(detail); } }, "+ add");
    const table = entries.length
      ? h("table", { class: "kv" }, entries.map(([k, v]) => row(scope, k, v)))
      : h("p", { class: "muted" }, "empty");
    return h("section", { class: "scope", dataset: { scope } },
      h("h4", {}, scope, h("span", { class: "count" }, String(entries.length)), h("span", { class: "spacer" }), add),
      table,
      adding && adding.scope === scope ? valueForm(scope, adding.key, adding.draft, { isNew: true }) : null);
  }

  function render(next) {
    if (next !== detail) {
      // Another session: drop what was being typed for the previous one.
      if (!next || !detail || next.session.id !== detail.session.id) {
        editing = null;
        adding = null;
      }
      detail = next;
    }
    if (!detail) return root.replaceChildren(h("div", { class: "empty small" }, "No session selected."));
    const scoped = splitState(detail.session.state);
    root.replaceChildren(...SCOPES.map((scope) => section(scope, scoped[scope])),
      h("p", { class: "muted small" }, `${detail.eventCount ?? 0} events · revision ${detail.session.revision ?? "?"} · each change is saved as an event`));
    if (focusForm) root.querySelector(".state-form input, .state-form textarea")?.focus();
    focusForm = false;
  }

  return { render };
}
