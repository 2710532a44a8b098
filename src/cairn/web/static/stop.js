// Stopping the run the chat is streaming: the server cancels the invocation (what it
// committed stays) and it then waits in the inbox as interrupted, to be continued.

import { api } from "./api.js";

/** Stop `invocationId` (or, not known yet, every invocation of the session this server runs). */
export async function stopRun({ app, user, sessionId, invocationId }) {
  const ids = invocationId ? [invocationId] : await api.runningInvocations(app, user, sessionId);
  for (const id of ids) await api.stop(app, user, sessionId, id);
  return ids;
}
