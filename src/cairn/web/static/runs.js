// The Runs tab: the session's runs newest first (status badge, strategy, times, queue
// wait, error), a Cancel button on the ones not started or still running, and a click
// that selects a run's invocation in the timeline. While any run is active the list is
// read again every POLL_MS (one request at a time; it stops once all have ended).

import { api } from "./api.js";
import { h } from "./dom.js";
import { dateTime, shortId } from "./model.js";

const POLL_MS = 1000;
const ACTIVE = new Set(["pending", "running"]);

function seconds(from, to) {
  if (!from || !to) return "";
  const s = Math.max(0, to - from);
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/**
 * runsTab({root, count, context, select, fail, toast, changed}): `count` shows how many
 * runs are pending or running (beside the tab's name); `context()` names the session
 * ({app, user, sessionId}); `select(runId)` shows its invocation in the timeline;
 * `changed()` is called when a run has ended since the last read (the session moved on).
 */
export function runsTab({ root, count, context, select, fail, toast, changed }) {
  let runs = [];
  let timer = null;
  let reading = null; // the list being read, of session readingFor
  let readingFor = null;
  let shown = false;

  async function refresh() {
    const { app, user, sessionId } = context();
    clearTimeout(timer);
    timer = null;
    if (!sessionId) {
      runs = [];
      return render();
    }
    if (reading) return readingFor === sessionId ? reading : reading.then(refresh);
    readingFor = sessionId;
    reading = (async () => {
      try {
        const page = await api.runs(app, user, sessionId);
        if (sessionId !== context().sessionId) return; // another session's turn: refresh reads it
        const wereActive = new Set(runs.filter((r) => ACTIVE.has(r.status)).map((r) => r.runId));
        runs = page.runs;
        if (runs.some((r) => wereActive.has(r.runId) && !ACTIVE.has(r.status))) changed();
        render();
      } catch (error) {
        fail(error);
      } finally {
        reading = null;
      }
      if (runs.some((r) => ACTIVE.has(r.status))) timer = setTimeout(refresh, POLL_MS);
    })();
    return reading;
  }

  async function cancel(run, button) {
    const { app, user, sessionId } = context();
    button.disabled = true;
    try {
      const after = await api.cancelRun(app, user, sessionId, run.runId);
      toast(`Cancelling run ${shortId(run.runId)} (${after.status}).`);
    } catch (error) {
      fail(error);
    }
    await refresh();
  }

  function row(run) {
    const wait = seconds(run.createdAt, run.startedAt);
    const cancel_ = ACTIVE.has(run.status)
      ? h("button", { class: "danger small run-cancel", onclick: (event) => { event.stopPropagation(); cancel(run, event.currentTarget); } }, "Cancel")
      : null;
    const message = run.request?.newMessage?.parts?.map((p) => p.text || "").join("").trim();
    return h("li", {
      class: `run-item ${run.status}`,
      dataset: { runId: run.runId, status: run.status },
      tabindex: 0,
      title: "Show its invocation in the timeline",
      onclick: () => select(run.runId),
      onkeydown: (e) => e.key === "Enter" && select(run.runId),
    },
    h("div", { class: "run-line" },
      h("span", { class: `badge run-badge ${run.status}` }, run.status),
      h("code", { class: "run-id" }, shortId(run.runId)),
      h("span", { class: "muted small" }, run.strategy),
      cancel_),
    message ? h("div", { class: "run-message small" }, message) : null,
    h("div", { class: "run-times muted small" },
      `created ${dateTime(run.createdAt)}`,
      run.startedAt ? ` · started ${dateTime(run.startedAt)}` : "",
      run.endedAt ? ` · ended ${dateTime(run.endedAt)}` : "",
      wait ? ` · waited ${wait}` : ""),
    run.error ? h("div", { class: "run-error small" }, `${run.error.type || "error"}: ${run.error.message || ""}`) : null);
  }

  function render() {
    const active = runs.filter((r) => ACTIVE.has(r.status)).length;
    count.textContent = active ? String(active) : "";
    if (!shown) return;
    if (!context().sessionId) return root.replaceChildren(h("div", { class: "empty small" }, "Pick a session to see its runs."));
    if (!runs.length) return root.replaceChildren(h("div", { class: "empty small" }, "No runs yet."));
    root.replaceChildren(h("ul", { class: "run-list", "aria-label": "runs" }, runs.map(row)));
  }

  return {
    /** The tab is shown (true) or hidden: it reads the list when shown. */
    show(visible) {
      shown = visible;
      if (visible) refresh();
    },
    /** Another session is open: its list is read if the tab is shown (or a run is started). */
    sessionChanged() {
      runs = [];
      count.textContent = "";
      clearTimeout(timer);
      timer = null;
      if (shown) refresh();
    },
    /** Read the list again (a run was started); polls while one is active. */
    refresh,
  };
}
