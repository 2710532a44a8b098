// Keyboard navigation outside the timeline: sessions, tabs, the message box, the inbox, and
// a help overlay (?) that lists every shortcut. Shortcuts never fire while typing in a field.
// The timeline's own keys (j/k, Enter, /, Esc) belong to the timeline; they are listed here.

import { h } from "./dom.js";

const TIMELINE_KEYS = [
  [["j", "k"], "next / previous event (in the timeline)"],
  [["Enter"], "open the event (in the timeline)"],
  [["/"], "search the timeline"],
  [["Esc"], "leave the timeline search"],
];

function typing(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  if (target.matches("textarea, select")) return true;
  if (target.matches("input")) return !["checkbox", "radio", "button", "submit", "reset"].includes(target.type);
  return false;
}

const visibleTabs = () => [...document.querySelectorAll(".tabs [data-tab]")].filter((t) => !t.hidden);

/** Move to the session `step` places from the selected one (or the first / last). */
function moveSession(step) {
  const items = [...document.querySelectorAll("#session-list .session-item")];
  if (!items.length) return;
  const at = items.findIndex((i) => i.classList.contains("active"));
  const next = at < 0 ? (step > 0 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, at + step));
  if (next !== at) items[next].click();
  items[next].focus();
}

function showTabNumber(n) {
  const tab = visibleTabs()[n - 1];
  if (!tab) return;
  tab.click();
  tab.focus();
}

/** Roles and states for assistive technology, kept in step with the list and the tabs. */
function syncAria() {
  const list = document.getElementById("session-list");
  list?.setAttribute("role", "listbox");
  for (const item of document.querySelectorAll("#session-list .session-item")) {
    item.setAttribute("role", "option");
    item.setAttribute("aria-selected", item.classList.contains("active") ? "true" : "false");
    if (!item.hasAttribute("tabindex")) item.tabIndex = 0;
  }
  for (const tab of document.querySelectorAll(".tabs [data-tab]")) {
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", tab.classList.contains("active") ? "true" : "false");
    const body = document.querySelector(`[data-body="${tab.dataset.tab}"]`);
    if (body) {
      body.id ||= `tab-body-${tab.dataset.tab}`;
      body.setAttribute("role", "tabpanel");
      tab.setAttribute("aria-controls", body.id);
    }
  }
}

/**
 * Install the shortcuts. `focusInbox()` puts the cursor in the open answer form (false
 * when nothing waits); `toast(message)` says why a key did nothing.
 */
export function installKeys({ focusInbox, toast }) {
  const shortcuts = [
    [["[", "Alt+↑"], "previous session", () => moveSession(-1)],
    [["]", "Alt+↓"], "next session", () => moveSession(1)],
    [["1…9"], "show the first … ninth tab", null],
    [["c"], "write a message", () => document.getElementById("message-input")?.focus()],
    [["Esc"], "back to the message box (from outside a field or the timeline)", null],
    [["i"], "answer what waits (the inbox)", () => focusInbox() || toast("Nothing is waiting for an answer.")],
    [["?"], "show or hide this help", () => toggleHelp()],
  ];
  const byKey = { "[": 0, "]": 1, c: 3, i: 5, "?": 6 };

  const help = h("div", { id: "keys-help", class: "keys-help", hidden: true, onclick: (e) => e.target === help && toggleHelp(false) });
  document.body.append(help);
  let returnFocus = null;

  function helpTable(rows) {
    return h("table", {}, h("tbody", {}, rows.map(([keys, what]) =>
      h("tr", {}, h("td", {}, keys.map((k, i) => [i ? " or " : "", h("kbd", {}, k)])), h("td", {}, what)))));
  }

  function toggleHelp(show = help.hidden) {
    if (!show) {
      help.hidden = true;
      returnFocus?.focus?.();
      return;
    }
    returnFocus = document.activeElement;
    const tabs = visibleTabs().map((t, i) => [[String(i + 1)], `${t.textContent.trim()} tab`]);
    const close = h("button", { type: "button", class: "ghost small", onclick: () => toggleHelp(false) }, "Close");
    help.replaceChildren(h("div", { class: "keys-help-box", role: "dialog", "aria-modal": "true", "aria-labelledby": "keys-help-title" },
      h("h2", { id: "keys-help-title" }, "Keyboard shortcuts"),
      h("p", { class: "muted small" }, "They do nothing while you type in a field. Tab and Enter reach and open every session and tab."),
      h("h3", {}, "Anywhere"),
      helpTable(shortcuts.filter(([keys]) => keys[0] !== "1…9")),
      h("h3", {}, "Tabs"),
      helpTable(tabs),
      h("h3", {}, "Timeline"),
      helpTable(TIMELINE_KEYS),
      h("p", {}, close)));
    help.hidden = false;
    close.focus();
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.metaKey) return;
    if (!help.hidden) {
      if (event.key === "Escape" || event.key === "?") {
        event.preventDefault();
        toggleHelp(false);
      }
      return;
    }
    if (typing(event.target)) return;
    if (event.altKey) {
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        event.preventDefault();
        moveSession(event.key === "ArrowUp" ? -1 : 1);
      }
      return;
    }
    if (event.key === "Escape") {
      if (event.target instanceof Element && event.target.closest("#timeline, .timeline-tools, #inspector, [role=dialog]")) return;
      event.preventDefault();
      document.getElementById("message-input")?.focus();
      return;
    }
    if (/^[1-9]$/.test(event.key)) {
      event.preventDefault();
      showTabNumber(Number(event.key));
      return;
    }
    const index = byKey[event.key];
    if (index === undefined) return;
    event.preventDefault();
    shortcuts[index][2]();
  });

  document.getElementById("keys-button")?.addEventListener("click", () => toggleHelp(true));
  syncAria();
  const observer = new MutationObserver(syncAria);
  for (const id of ["session-list"]) {
    const element = document.getElementById(id);
    if (element) observer.observe(element, { childList: true, subtree: true, attributes: true, attributeFilter: ["class"] });
  }
  const tabs = document.querySelector(".tabs");
  if (tabs) observer.observe(tabs, { childList: true, subtree: true, attributes: true, attributeFilter: ["class", "hidden"] });
  return { toggleHelp };
}
