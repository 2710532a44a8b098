// Stopping the run the chat is streaming: cancelled through the runs routes (what it
// committed stays); it then waits in the inbox as interrupted, to be continued.

import { api } from "./api.js";

/** Cancel run `runId` (its invocation's id) or, not known yet, the session's active runs. */
export async function stopRun({ app, user, sessionId, invocationId }) {
  const ids = invocationId ? [invocationId] : (await api.activeRuns(app, user, sessionId)).map((r) => r.runId);
  for (const id of ids) await api.cancelRun(app, user, sessionId, id);
  return ids;
}
