// Eval data as the Eval tab shows it (no DOM): statuses, scores, and an invocation's
// user turn, tool calls and final response, from ADK's eval JSON (camelCase).

import { callText } from "./model.js";

/** ADK's EvalStatus values. */
export const STATUS = { 1: "passed", 2: "failed", 3: "not evaluated", 4: "informational" };

export const statusName = (value) => STATUS[value] || "unknown";

/** The metrics that pass or fail a case (the efficiency metrics only inform). */
export function gatingMetrics(result) {
  return (result.overallEvalMetricResults || []).filter((m) => m.evalStatus !== 4);
}

export function thresholdOf(metric) {
  return metric.criterion?.threshold ?? metric.threshold ?? null;
}

/** "0.8 / 0.8", "n/a / 1": a metric's score and the threshold it had to reach. */
export function scoreText(metric) {
  const score = metric.score === undefined || metric.score === null ? "n/a" : formatNumber(metric.score);
  const threshold = thresholdOf(metric);
  return threshold === null ? score : `${score} / ${formatNumber(threshold)}`;
}

function formatNumber(value) {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
}

/** The text of a Content (thoughts left out). */
export function contentText(content) {
  return (content?.parts || [])
    .filter((p) => typeof p.text === "string" && !p.thought)
    .map((p) => p.text)
    .join("\n");
}

/** What the user did in a turn: their text, or the answers they gave to a pause. */
export function userTurn(invocation) {
  const text = contentText(invocation.userContent);
  if (text) return text;
  const answers = (invocation.userContent?.parts || []).filter((p) => p.functionResponse);
  return answers.length ? `(answers ${answers.map((p) => p.functionResponse.name).join(", ")})` : "";
}

/**
 * The tool calls of an invocation, in order: {text, eventIndex, author}. eventIndex is the
 * position among the invocation's intermediate events (or in toolUses), as a divergence
 * counts it.
 */
export function toolCalls(invocation) {
  const data = invocation.intermediateData || {};
  if (Array.isArray(data.toolUses)) {
    return data.toolUses.map((call, index) => ({ text: callText(call), eventIndex: index, author: null }));
  }
  const calls = [];
  (data.invocationEvents || []).forEach((event, index) => {
    for (const part of event.content?.parts || []) {
      if (part.functionCall) calls.push({ text: callText(part.functionCall), eventIndex: index, author: event.author || null });
    }
  });
  return calls;
}

/**
 * Where a divergence shows on each side of an invocation: the position of the differing
 * tool call ({expected, actual}: indexes into toolCalls, or null), or the final response.
 */
export function divergenceMarks(divergence, expected, actual, index) {
  const none = { call: { expected: null, actual: null }, finalResponse: false, whole: false };
  if (!divergence || divergence.invocationIndex !== index) return none;
  const kind = divergence.kind;
  if (kind === "final_response") return { ...none, finalResponse: true };
  if (kind === "missing_invocation" || kind === "extra_invocation") return { ...none, whole: true };
  const want = expected ? toolCalls(expected) : [];
  const got = actual ? toolCalls(actual) : [];
  if (kind === "missing_tool_call") {
    const position = want.findIndex((c) => c.eventIndex === divergence.eventIndex);
    return { ...none, call: { expected: position, actual: got.length } };
  }
  const position = got.findIndex((c) => c.eventIndex === divergence.eventIndex);
  if (kind === "extra_tool_call") return { ...none, call: { expected: want.length, actual: position } };
  return { ...none, call: { expected: position, actual: position } };
}

/** The eval id the server would give a case made from this session. */
export function defaultEvalId(sessionId) {
  return `session_${sessionId}`.replace(/[^A-Za-z0-9_-]/g, "_");
}
