// The HTTP API (docs/design/http-api-contract.md): JSON fetches and event streams.

const KEY_STORAGE = "cairn.apiKey";
const KIND_STORAGE = "cairn.credentialKind";

export class ApiError extends Error {
  constructor(status, detail, challenge = "") {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.challenge = challenge; // a 401's WWW-Authenticate: "X-API-Key" or "Bearer ..."
  }
}

/** The saved credential: an API key (sent as X-API-Key) or a bearer token (Authorization). */
export const apiKey = {
  get: () => localStorage.getItem(KEY_STORAGE) || "",
  kind: () => (localStorage.getItem(KIND_STORAGE) === "bearer" ? "bearer" : "key"),
  set: (value, kind = "key") => {
    if (!value) {
      localStorage.removeItem(KEY_STORAGE);
      localStorage.removeItem(KIND_STORAGE);
      return;
    }
    localStorage.setItem(KEY_STORAGE, value);
    localStorage.setItem(KIND_STORAGE, kind);
  },
};

/** Called with the error when the server answers 401 (the UI then asks for a key or token). */
let onUnauthorized = () => {};
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

const enc = encodeURIComponent;

function headers(extra = {}) {
  const result = { ...extra };
  const key = apiKey.get();
  if (key && apiKey.kind() === "bearer") result.Authorization = `Bearer ${key}`;
  else if (key) result["X-API-Key"] = key;
  return result;
}

async function failure(response) {
  let detail = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (typeof body.detail === "string") detail = body.detail;
    else if (Array.isArray(body.detail)) {
      detail = body.detail.map((d) => `${(d.loc || []).join(".")}: ${d.msg}`).join("; ");
    }
  } catch {
    /* not JSON */
  }
  const error = new ApiError(response.status, detail, response.headers.get("WWW-Authenticate") || "");
  if (response.status === 401) onUnauthorized(error);
  return error;
}

async function request(method, path, body) {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/**
 * POST a body (GET without one) and call onEvent(event, name) for each `data:` item of
 * the text/event-stream answer, as it arrives (`name`: its `event:` line, "message" if
 * none). Resolves when the stream ends; rejects on an HTTP error or on a `{"error": ...}` item.
 */
async function stream(path, body, onEvent, signal) {
  const init = { method: "GET", headers: headers({ Accept: "text/event-stream" }), signal };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let streamError = null;
  const flush = (block) => {
    const lines = block.split(/\r?\n/);
    const name = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() || "message";
    const data = lines
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) return;
    const item = JSON.parse(data);
    if (item && typeof item.error === "string" && !item.id) streamError = new ApiError(500, item.error);
    else onEvent(item, name);
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      flush(block);
    }
  }
  if (buffer.trim()) flush(buffer);
  if (streamError) throw streamError;
}

const dev = (app) => `/dev/apps/${enc(app)}`;
const evalSet = (app, set) => `${dev(app)}/eval-sets/${enc(set)}`;

const session = (app, user, sid) => `/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}`;
const cairnSession = (app, user, sid) => `/cairn${session(app, user, sid)}`;

export const api = {
  listApps: () => request("GET", "/list-apps"),
  appInfo: (app) => request("GET", `/cairn/apps/${enc(app)}`),
  sessionsPage: (app, user, cursor, limit = 30) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set("cursor", cursor);
    return request("GET", `/cairn/apps/${enc(app)}/users/${enc(user)}/sessions?${query}`);
  },
  createSession: (app, user, body = {}) =>
    request("POST", `/apps/${enc(app)}/users/${enc(user)}/sessions`, body),
  deleteSession: (app, user, sid) => request("DELETE", session(app, user, sid)),
  sessionDetail: (app, user, sid) => request("GET", cairnSession(app, user, sid)),
  /** A page of the timeline: the newest without a cursor; filters {author, kind, text, node}. */
  timeline: (app, user, sid, { limit = 100, cursor = null, direction = null, ...filters } = {}) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set("cursor", cursor);
    if (direction) query.set("direction", direction);
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    return request("GET", `${cairnSession(app, user, sid)}/timeline?${query}`);
  },
  interrupts: (app, user, sid) => request("GET", `${cairnSession(app, user, sid)}/interrupts`),
  nodes: (app, user, sid, inv) =>
    request("GET", `${cairnSession(app, user, sid)}/invocations/${enc(inv)}/nodes`),
  traces: (app, user, sid) => request("GET", `${cairnSession(app, user, sid)}/traces`),
  invocationTrace: (app, user, sid, inv) =>
    request("GET", `${cairnSession(app, user, sid)}/traces/${enc(inv)}`),
  nodeRuns: (app, user, sid, inv, path) =>
    request("GET", `${cairnSession(app, user, sid)}/invocations/${enc(inv)}/nodes/${path.split("/").map(enc).join("/")}`),
  rewind: (app, user, sid, invocationId) =>
    request("POST", `${cairnSession(app, user, sid)}/rewind`, { invocationId }),
  fork: (app, user, sid, upToEventId) =>
    request("POST", `${cairnSession(app, user, sid)}/fork`, { upToEventId }),
  // Acting on a session: state edits, names, artifacts, stopping a run.
  updateState: (app, user, sid, stateDelta, removedStateKeys = []) =>
    request("PATCH", session(app, user, sid), { stateDelta, removedStateKeys }),
  rename: (app, user, sid, name) => request("PUT", `${cairnSession(app, user, sid)}/name`, { name }),
  artifacts: (app, user, sid) => request("GET", `${cairnSession(app, user, sid)}/artifacts`),
  artifactVersion: (app, user, sid, name, version) =>
    request("GET", `${session(app, user, sid)}/artifacts/${enc(name)}/versions/${version}`),
  uploadArtifact: (app, user, sid, filename, artifact) =>
    request("POST", `${cairnSession(app, user, sid)}/artifacts`, { filename, artifact }),
  runningInvocations: async (app, user, sid) =>
    (await request("GET", `${cairnSession(app, user, sid)}/invocations/running`)).invocationIds,
  // Runs (docs/runs.md): started in the background, listed, cancelled, rejoined.
  runs: (app, user, sid, limit = 50) =>
    request("GET", `${cairnSession(app, user, sid)}/runs?limit=${limit}`),
  activeRuns: async (app, user, sid) =>
    (await request("GET", `${cairnSession(app, user, sid)}/runs?status=pending&status=running`)).runs,
  createRun: (app, user, sid, body) => request("POST", `${cairnSession(app, user, sid)}/runs`, body),
  cancelRun: (app, user, sid, runId) =>
    request("POST", `${cairnSession(app, user, sid)}/runs/${enc(runId)}/cancel`),
  /** A run's events as they are committed; onEvent(event, "end") gets the run when it ends. */
  runStream: (app, user, sid, runId, onEvent, signal) =>
    stream(`${cairnSession(app, user, sid)}/runs/${enc(runId)}/stream`, undefined, onEvent, signal),
  // Evaluation (ADK's dev-server routes; the server has them when it serves this UI).
  evalSets: async (app) => (await request("GET", `${dev(app)}/eval-sets`)).evalSetIds,
  createEvalSet: (app, id) =>
    request("POST", `${dev(app)}/eval-sets`, { evalSet: { eval_set_id: id, eval_cases: [] } }),
  evalCaseIds: (app, set) => request("GET", `${dev(app)}/eval_sets/${enc(set)}/evals`),
  evalCase: (app, set, id) => request("GET", `${evalSet(app, set)}/eval-cases/${enc(id)}`),
  deleteEvalCase: (app, set, id) => request("DELETE", `${evalSet(app, set)}/eval-cases/${enc(id)}`),
  addSessionToEvalSet: (app, set, body) => request("POST", `${evalSet(app, set)}/add-session`, body),
  runEval: async (app, set, body) => (await request("POST", `${evalSet(app, set)}/run`, body)).runEvalResults,
  evalResultIds: async (app) => (await request("GET", `${dev(app)}/eval-results`)).evalResultIds,
  evalResult: (app, id) => request("GET", `${dev(app)}/eval-results/${enc(id)}`),
  metricsInfo: async (app) => (await request("GET", `${dev(app)}/metrics-info`)).metricsInfo,
  defaultEvalMetrics: async (app) => (await request("GET", `/cairn/apps/${enc(app)}/eval-metrics`)).evalMetrics,
  run: (body, onEvent, signal) => stream("/run_sse", body, onEvent, signal),
  answer: (app, user, sid, interruptId, response, streaming, onEvent, signal) =>
    stream(
      `${cairnSession(app, user, sid)}/interrupts/${enc(interruptId)}`,
      { response, streaming },
      onEvent,
      signal,
    ),
};
