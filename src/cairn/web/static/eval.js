// The Eval tab: pick or create an eval set, add the open session to it as a case, run the
// set (or one case) with editable criteria, see each case's metrics, and compare a case's
// expected and actual invocations side by side, its first divergence marked.

import { api } from "./api.js";
import { h } from "./dom.js";
import {
  contentText, defaultEvalId, divergenceMarks, gatingMetrics, scoreText, statusName,
  thresholdOf, toolCalls, userTurn,
} from "./eval_model.js";

const SET_STORAGE = "cairn.evalSet.";

/**
 * The tab in `root`. `context()` gives {app, user, sessionId}; `sessionsChanged()` is
 * called after a run (its cases ran in new sessions); `openSession(id)` opens one.
 */
export function evalTab({ root, context, toast, fail, sessionsChanged, openSession }) {
  const state = {
    app: null,
    sets: [],
    set: null,
    cases: [],
    metrics: [], // {metricName, threshold, enabled, description}
    results: [],
    history: [], // saved result ids of this set, newest first
    selected: null,
    running: false,
  };

  const setSelect = h("select", { id: "eval-set-select", "aria-label": "eval set", onchange: (e) => chooseSet(e.target.value) });
  const newSetId = h("input", { id: "eval-new-set-id", placeholder: "new set id", "aria-label": "new eval set id", spellcheck: "false", autocomplete: "off" });
  const newSet = h("form", { class: "eval-row", id: "eval-new-set", onsubmit: (e) => { e.preventDefault(); createSet(); } },
    newSetId, h("button", { type: "submit", class: "small" }, "Create set"));
  const caseId = h("input", { id: "eval-case-id", "aria-label": "eval case id", spellcheck: "false", autocomplete: "off" });
  const addButton = h("button", { type: "submit", id: "eval-add-session", class: "primary small" }, "Add this session");
  const addForm = h("form", { class: "eval-row", onsubmit: (e) => { e.preventDefault(); addSession(); } }, caseId, addButton);
  const caseCount = h("span", { class: "count" });
  const caseList = h("ul", { id: "eval-cases", class: "eval-cases", "aria-label": "eval cases" });
  const criteria = h("tbody");
  const runButton = h("button", { id: "eval-run", class: "primary", onclick: () => run(null) }, "Run set");
  const reuse = h("input", { type: "checkbox", id: "eval-reuse-tools" });
  const reuseLabel = h("label", { class: "field small", title: "Answer tool calls from each case's recorded results while the agent makes the recorded calls; live tools run from the first call that differs." },
    reuse, " reuse recorded tool results");
  const runStatus = h("span", { id: "eval-run-status", class: "muted small", role: "status" });
  const history = h("select", { id: "eval-history", "aria-label": "saved runs", onchange: (e) => showSaved(e.target.value) });
  const results = h("div", { id: "eval-results", class: "eval-results" });
  const compare = h("div", { id: "eval-compare", class: "eval-compare", hidden: true });

  root.replaceChildren(
    h("div", { class: "eval-top" },
      h("div", { class: "eval-row" }, h("label", { class: "field" }, "eval set", setSelect)),
      newSet),
    h("h4", {}, "Cases ", caseCount),
    addForm,
    caseList,
    h("details", { class: "eval-criteria", id: "eval-criteria" },
      h("summary", {}, "Criteria"),
      h("table", { class: "kv" }, h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "metric"), h("th", {}, "threshold"))), criteria)),
    h("div", { class: "eval-row" }, runButton, reuseLabel, runStatus, h("span", { class: "spacer" }),
      h("label", { class: "field small" }, "saved runs", history)),
    results,
    compare);

  // ------------------------------------------------------------ loading

  async function appChanged() {
    const { app } = context();
    if (!app || app === state.app) return;
    state.app = app;
    state.results = [];
    state.selected = null;
    await Promise.all([loadSets(), loadMetrics()]);
    render();
  }

  async function loadSets(wanted = null) {
    try {
      state.sets = await api.evalSets(state.app);
    } catch (error) {
      state.sets = [];
      fail(error);
    }
    const saved = wanted || localStorage.getItem(SET_STORAGE + state.app);
    state.set = state.sets.includes(saved) ? saved : state.sets[0] || null;
    await loadCases();
  }

  async function loadCases() {
    state.cases = [];
    state.history = [];
    if (!state.set) return;
    try {
      const [cases, saved] = await Promise.all([api.evalCaseIds(state.app, state.set), api.evalResultIds(state.app)]);
      state.cases = cases;
      // Saved results are named <app>_<eval set>_<timestamp>.
      const prefix = `${state.app}_${state.set}_`;
      state.history = saved
        .filter((id) => id.startsWith(prefix) && /^[\d.]+$/.test(id.slice(prefix.length)))
        .sort((a, b) => Number(b.slice(prefix.length)) - Number(a.slice(prefix.length)));
    } catch (error) {
      fail(error);
    }
  }

  async function showSaved(id) {
    if (!id) return;
    try {
      const saved = await api.evalResult(state.app, id);
      state.results = saved.evalCaseResults || [];
      state.selected = (state.results.find((r) => r.finalEvalStatus !== 1) || state.results[0])?.evalId || null;
      const passed = state.results.filter((r) => r.finalEvalStatus === 1).length;
      runStatus.textContent = `saved run: ${passed} of ${state.results.length} passed`;
    } catch (error) {
      fail(error);
    }
    render();
  }

  async function loadMetrics() {
    try {
      const [defaults, infos] = await Promise.all([api.defaultEvalMetrics(state.app), api.metricsInfo(state.app)]);
      const chosen = new Map(defaults.map((m) => [m.metricName, thresholdOf(m)]));
      state.metrics = infos
        .filter((info) => info.requiresThreshold)
        .map((info) => ({
          metricName: info.metricName,
          description: info.description || "",
          threshold: chosen.has(info.metricName) ? chosen.get(info.metricName) : 0.5,
          enabled: chosen.has(info.metricName),
        }));
    } catch (error) {
      state.metrics = [];
      fail(error);
    }
  }

  // ------------------------------------------------------------ actions

  async function chooseSet(id) {
    state.set = id || null;
    if (state.set) localStorage.setItem(SET_STORAGE + state.app, state.set);
    state.results = [];
    state.selected = null;
    await loadCases();
    render();
  }

  async function createSet() {
    const id = newSetId.value.trim();
    if (!id) return newSetId.focus();
    await appChanged(); // the app shown may be newer than the one this tab has loaded
    if (!state.app) return toast("Choose an app first.", "error");
    try {
      await api.createEvalSet(state.app, id);
      newSetId.value = "";
      toast(`Created eval set ${id}.`);
      localStorage.setItem(SET_STORAGE + state.app, id);
      state.results = [];
      state.selected = null;
      await loadSets(id);
      render();
    } catch (error) {
      fail(error);
    }
  }

  async function addSession() {
    const { user, sessionId } = context();
    if (!sessionId || !state.set) return;
    const evalId = caseId.value.trim() || defaultEvalId(sessionId);
    try {
      await api.addSessionToEvalSet(state.app, state.set, { evalId, sessionId, userId: user });
      caseId.value = "";
      toast(`Added case ${evalId} to ${state.set}.`);
      await loadCases();
      render();
    } catch (error) {
      fail(error);
    }
  }

  async function deleteCase(id) {
    try {
      await api.deleteEvalCase(state.app, state.set, id);
      state.results = state.results.filter((r) => r.evalId !== id);
      if (state.selected === id) state.selected = null;
      await loadCases();
      render();
    } catch (error) {
      fail(error);
    }
  }

  async function run(onlyCase) {
    if (state.running || !state.set) return;
    const evalMetrics = state.metrics
      .filter((m) => m.enabled)
      .map((m) => ({ metricName: m.metricName, threshold: m.threshold, criterion: { threshold: m.threshold } }));
    state.running = true;
    runStatus.textContent = onlyCase ? `running ${onlyCase}…` : "running…";
    render();
    try {
      const body = { evalMetrics, evalCaseIds: onlyCase ? [onlyCase] : [], reuseToolResults: reuse.checked };
      const answered = await api.runEval(state.app, state.set, body);
      const passed = answered.filter((r) => r.finalEvalStatus === 1).length;
      state.results = onlyCase ? [...state.results.filter((r) => r.evalId !== onlyCase), ...answered] : answered;
      state.selected = onlyCase || (answered.find((r) => r.finalEvalStatus !== 1) || answered[0])?.evalId || null;
      runStatus.textContent = `${passed} of ${answered.length} passed`;
      await loadCases();
      await sessionsChanged();
    } catch (error) {
      runStatus.textContent = "";
      fail(error);
    } finally {
      state.running = false;
      render();
    }
  }

  // ------------------------------------------------------------ rendering

  function render() {
    const { sessionId } = context();
    setSelect.replaceChildren(
      ...(state.sets.length ? [] : [h("option", { value: "" }, "no eval sets yet")]),
      ...state.sets.map((id) => h("option", { value: id, selected: id === state.set }, id)));
    setSelect.value = state.set || "";
    caseId.placeholder = sessionId ? defaultEvalId(sessionId) : "open a session first";
    addButton.disabled = !sessionId || !state.set;
    addButton.title = !state.set ? "Create an eval set first" : !sessionId ? "Open a session first" : "Add the open session, as it ran, to this eval set";
    caseCount.textContent = state.set ? String(state.cases.length) : "";
    history.replaceChildren(
      h("option", { value: "" }, state.history.length ? `${state.history.length} saved` : "none yet"),
      ...state.history.map((id) => h("option", { value: id }, savedLabel(id))));
    history.disabled = !state.history.length;
    renderCases();
    renderCriteria();
    runButton.disabled = state.running || !state.cases.length;
    renderResults();
    renderCompare();
  }

  function renderCases() {
    if (!state.set) return caseList.replaceChildren(h("li", { class: "empty small" }, "Create an eval set to collect cases."));
    if (!state.cases.length) return caseList.replaceChildren(h("li", { class: "empty small" }, "No cases yet: open a session and add it."));
    caseList.replaceChildren(...state.cases.map((id) => {
      const result = state.results.find((r) => r.evalId === id);
      const status = result ? statusName(result.finalEvalStatus) : null;
      return h("li", { class: `eval-case${id === state.selected ? " selected" : ""}`, dataset: { evalId: id } },
        h("span", { class: "eval-case-id", title: id }, id),
        status ? h("span", { class: `eval-status s-${status.replace(" ", "-")}` }, status) : null,
        h("span", { class: "spacer" }),
        h("button", { class: "ghost small run-case", disabled: state.running, "aria-label": `run ${id}`, onclick: () => run(id) }, "run"),
        h("button", { class: "icon delete", title: "Delete case", "aria-label": `delete case ${id}`, onclick: () => deleteCase(id) }, "✕"));
    }));
  }

  function renderCriteria() {
    criteria.replaceChildren(...state.metrics.map((metric) =>
      h("tr", { dataset: { metric: metric.metricName }, title: metric.description },
        h("td", {}, h("input", { type: "checkbox", checked: metric.enabled, "aria-label": `use ${metric.metricName}`, onchange: (e) => { metric.enabled = e.target.checked; } })),
        h("td", { class: "key" }, metric.metricName),
        h("td", {}, h("input", {
          type: "number", min: "0", max: "1", step: "0.05", value: String(metric.threshold), class: "threshold",
          "aria-label": `threshold of ${metric.metricName}`,
          onchange: (e) => { const value = Number(e.target.value); if (!Number.isNaN(value)) metric.threshold = value; },
        })))));
  }

  function renderResults() {
    if (!state.results.length) return results.replaceChildren();
    const names = [];
    for (const result of state.results) for (const m of gatingMetrics(result)) if (!names.includes(m.metricName)) names.push(m.metricName);
    const rows = state.results.map((result) => {
      const status = statusName(result.finalEvalStatus);
      const scores = new Map(gatingMetrics(result).map((m) => [m.metricName, m]));
      return h("tr", {
        class: `eval-result${result.evalId === state.selected ? " selected" : ""}`,
        dataset: { evalId: result.evalId, status },
        tabindex: 0,
        onclick: () => select(result.evalId),
        onkeydown: (e) => e.key === "Enter" && select(result.evalId),
      },
      h("td", { class: "key" }, result.evalId),
      h("td", {}, h("span", { class: `eval-status s-${status.replace(" ", "-")}` }, status)),
      ...names.map((name) => {
        const metric = scores.get(name);
        return h("td", { class: metric ? `metric s-${statusName(metric.evalStatus).replace(" ", "-")}` : "metric", dataset: { metric: name } }, metric ? scoreText(metric) : "");
      }));
    });
    results.replaceChildren(h("table", { class: "eval-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "case"), h("th", {}, "status"), ...names.map((n) => h("th", { title: n }, n)))),
      h("tbody", {}, rows)));
  }

  function select(evalId) {
    state.selected = state.selected === evalId ? null : evalId;
    render();
  }

  function savedLabel(id) {
    const seconds = Number(id.slice(`${state.app}_${state.set}_`.length));
    return Number.isFinite(seconds) ? new Date(seconds * 1000).toLocaleString() : id;
  }

  function renderCompare() {
    const result = state.results.find((r) => r.evalId === state.selected);
    compare.hidden = !result;
    if (!result) return compare.replaceChildren();
    const divergence = result.divergence || null;
    const head = h("div", { class: "eval-compare-head" },
      h("strong", {}, result.evalId),
      h("span", { class: `eval-status s-${statusName(result.finalEvalStatus).replace(" ", "-")}` }, statusName(result.finalEvalStatus)),
      h("span", { class: "spacer" }),
      result.sessionId ? h("button", { class: "ghost small", title: "Open the session this case ran in", onclick: () => openSession(result.sessionId) }, "open its session") : null);
    const notes = [];
    if (result.errorMessage) notes.push(h("div", { class: "eval-error", role: "alert" }, `The run failed: ${result.errorMessage}`));
    if (divergence) {
      notes.push(h("div", { class: "eval-divergence", id: "eval-divergence", dataset: { kind: divergence.kind } },
        h("strong", {}, "First divergence: "), divergence.description));
    } else if (!("divergence" in result)) {
      notes.push(h("p", { class: "muted small", id: "eval-divergence" }, "A saved run keeps its scores, not its divergence: run the case again to see where it departs."));
    } else {
      notes.push(h("div", { class: "eval-agrees", id: "eval-divergence" }, result.errorMessage ? "No invocation to compare." : "The run followed the recorded conversation."));
    }
    const invocations = (result.evalMetricResultPerInvocation || []).map((per, index) =>
      invocationPair(per, index, divergence));
    compare.replaceChildren(head, ...notes, ...invocations);
  }

  function invocationPair(per, index, divergence) {
    const marks = divergenceMarks(divergence, per.expectedInvocation, per.actualInvocation, index);
    const metrics = (per.evalMetricResults || []).filter((m) => m.evalStatus !== 4);
    return h("section", { class: `eval-invocation${marks.whole ? " diverged" : ""}`, dataset: { index: String(index) } },
      h("header", {}, h("span", {}, `Invocation ${index + 1}`), h("span", { class: "spacer" }),
        ...metrics.map((m) => h("span", { class: `metric-chip s-${statusName(m.evalStatus).replace(" ", "-")}`, title: m.metricName }, `${m.metricName} ${scoreText(m)}`))),
      h("div", { class: "eval-sides" },
        side("expected", per.expectedInvocation, marks.call.expected, marks.finalResponse),
        side("actual", per.actualInvocation, marks.call.actual, marks.finalResponse)));
  }

  function side(name, invocation, markedCall, markedResponse) {
    if (!invocation) return h("div", { class: `eval-side ${name}` }, h("h5", {}, name), h("p", { class: "muted" }, "none recorded"));
    const calls = toolCalls(invocation);
    const callItems = calls.map((call, position) =>
      h("li", { class: `eval-call${position === markedCall ? " diverged" : ""}`, title: call.author ? `by ${call.author}` : null }, h("code", {}, call.text)));
    if (markedCall !== null && markedCall >= calls.length) callItems.push(h("li", { class: "eval-call missing diverged" }, "no more tool calls"));
    return h("div", { class: `eval-side ${name}`, dataset: { side: name } },
      h("h5", {}, name),
      h("div", { class: "eval-user" }, h("span", { class: "label" }, "user"), userTurn(invocation)),
      h("div", { class: "label" }, "tool calls"),
      callItems.length ? h("ol", { class: "eval-calls" }, callItems) : h("p", { class: "muted small" }, "none"),
      h("div", { class: "label" }, "final response"),
      h("div", { class: `eval-final${markedResponse ? " diverged" : ""}` }, contentText(invocation.finalResponse) || h("span", { class: "muted" }, "(none)")));
  }

  return {
    /** The app may have changed: reload its sets and metrics. */
    appChanged,
    /** The open session changed: the "Add this session" button follows it. */
    sessionChanged: () => render(),
  };
}
