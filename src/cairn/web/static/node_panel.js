// The Graph tab's node panel: what each run of the clicked node did in the invocation
// shown (input, output, status, attempts, errors, timing, its events), from the server's
// GET .../invocations/{inv}/nodes/{path}.

import { h, pretty } from "./dom.js";
import { eventKind, eventSummary, time } from "./model.js";

const STATUS_TEXT = { completed: "completed", waiting: "waiting", failed: "failed", running: "running" };

function duration(seconds) {
  if (seconds === undefined || seconds === null) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

const depth = (path) => path.split("/").length;
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

function valueView(value, known, className) {
  if (value === undefined || value === null) {
    return h("p", { class: `muted small ${className}` }, known === false ? "not in the log" : "none");
  }
  return h("pre", { class: `run-value ${className}` }, typeof value === "string" ? value : pretty(value));
}

/**
 * `box`: the panel element. `load(invocationId, nodePath)` fetches the runs; `eventById(id)`
 * finds a loaded event (for its kind and summary); `selectEvent(id)` shows it in the
 * timeline; `fail(error)` reports an error.
 */
export function nodePanel({ box, load, eventById, selectEvent, fail }) {
  let shown = null; // {invocationId, path, name}
  let request = 0;

  function close() {
    shown = null;
    box.hidden = true;
    box.replaceChildren();
    for (const node of document.querySelectorAll("#graph .node.selected")) node.classList.remove("selected");
  }

  function eventItem(id) {
    const event = eventById(id);
    const label = event ? [h("span", { class: "ev-kind" }, eventKind(event)), " ", h("span", { class: "ev-summary" }, eventSummary(event))] : id;
    return h("li", {},
      h("button", { type: "button", class: "ghost small run-event", dataset: { eventId: id }, title: "Show this event in the timeline", onclick: () => selectEvent(id) },
        event ? h("span", { class: "ev-time" }, time(event.timestamp)) : null, " ", label));
  }

  function runView(run, top) {
    const indent = depth(run.path) - depth(top);
    const attempts = plural(run.attempts, "attempt");
    return h("section", { class: `node-run ${run.status}`, dataset: { path: run.path, status: run.status }, style: { marginLeft: `${indent * 14}px` } },
      h("header", {},
        h("code", { class: "run-path" }, run.path),
        h("span", { class: `run-state ${run.status}` }, STATUS_TEXT[run.status] || run.status),
        h("span", { class: "run-attempts" }, attempts)),
      h("dl", { class: "run-timing" },
        h("dt", {}, "started"), h("dd", { class: "run-started" }, time(run.startedAt)),
        h("dt", {}, "duration"), h("dd", { class: "run-duration" }, duration(run.durationSeconds))),
      h("h5", {}, "Input"), valueView(run.input, run.inputKnown, "run-input"),
      h("h5", {}, "Output"), valueView(run.output, true, "run-output"),
      run.errors.length
        ? [h("h5", {}, "Errors"),
          h("ol", { class: "run-errors" }, run.errors.map((e) =>
            h("li", {}, h("strong", {}, e.code), e.message ? `: ${e.message}` : "", h("span", { class: "muted" }, ` at ${time(e.timestamp)}`))))]
        : null,
      h("h5", {}, `Events (${run.eventIds.length})`),
      h("ol", { class: "run-events" }, run.eventIds.map(eventItem)));
  }

  async function render() {
    if (!shown) return;
    const mine = ++request;
    const { invocationId, path, name } = shown;
    let runs = [];
    try {
      if (shown.ran) runs = await load(invocationId, path);
    } catch (error) {
      if (mine !== request) return;
      if (error.status !== 404) fail(error);
    }
    if (mine !== request || !shown) return;
    box.hidden = false;
    box.replaceChildren(
      h("div", { class: "node-panel-head" },
        h("strong", {}, name),
        h("span", { class: "muted node-run-count" }, runs.length ? ` · ${plural(runs.filter((r) => depth(r.path) === depth(path)).length, "run")} in this invocation` : ""),
        h("span", { class: "spacer" }),
        h("button", { type: "button", class: "icon", "aria-label": "close node details", onclick: close }, "✕")),
      ...(runs.length
        ? runs.map((run) => runView(run, path))
        : [h("p", { class: "muted" }, `${name} did not run in this invocation.`)]));
  }

  return {
    /**
     * Show the runs of node `name` of the workflow run `root` (e.g. `wf@1`) in `invocationId`;
     * `ran` false when the invocation's statuses show none (nothing to ask the server).
     */
    show(invocationId, root, name, ran = true) {
      shown = { invocationId, path: root ? `${root}/${name}` : name, name, ran };
      for (const node of document.querySelectorAll("#graph .node")) node.classList.toggle("selected", node.dataset.node === name);
      box.setAttribute("aria-label", `runs of ${name}`);
      return render();
    },
    /** The graph was drawn again with `statuses` (by node name): reload, or close for another invocation. */
    refresh(invocationId, statuses) {
      if (!shown) return null;
      if (shown.invocationId !== invocationId) return close();
      shown.ran = statuses.has(shown.name);
      for (const node of document.querySelectorAll("#graph .node")) node.classList.toggle("selected", node.dataset.node === shown.name);
      return render();
    },
    close,
  };
}
