// The window of a session's log the UI holds: the newest page on open, older pages on
// demand, streamed events as they come, and after a run only what is new. State changes
// and rewound marks come from the server's timeline route (a fold at the page's cursor).

export const PAGE_SIZE = 50;

/**
 * sessionLog(api) -> a log whose listeners get ("reset"), ("older", events),
 * ("newer", events), ("inserted", [{event, before: id of the shown event it precedes}])
 * and ("updated", events: already shown, now with changes or marks).
 */
export function sessionLog(api) {
  const listeners = [];
  let generation = 0;
  let loadingOlder = null;
  let prefetched = null; // {key, request}: a newest page asked for ahead of open()
  const log = {
    where: null, // {app, user, sessionId}
    events: [],
    ids: new Set(),
    changes: new Map(),
    rewound: new Set(),
    olderCursor: null,
    newerCursor: null,
    on(listener) {
      listeners.push(listener);
    },
    find(id) {
      return this.events.find((e) => e.id === id);
    },
    /** Start fetching a session's newest page before the UI asks for it (e.g. from the URL). */
    prefetch(where) {
      const request = api.timeline(where.app, where.user, where.sessionId, { limit: PAGE_SIZE });
      request.catch(() => {}); // the open that uses it reports a failure
      prefetched = { key: JSON.stringify([where.app, where.user, where.sessionId]), request };
    },
    clear() {
      generation += 1;
      loadingOlder = null;
      Object.assign(this, { where: null, events: [], ids: new Set(), changes: new Map(), rewound: new Set(), olderCursor: null, newerCursor: null });
      emit("reset");
    },
    /** The session's newest page (the prefetched one if it is this session's). */
    async open(where) {
      const mine = ++generation;
      loadingOlder = null;
      const key = JSON.stringify([where.app, where.user, where.sessionId]);
      const request = prefetched?.key === key ? prefetched.request : api.timeline(where.app, where.user, where.sessionId, { limit: PAGE_SIZE });
      prefetched = null;
      const page = await request;
      if (mine !== generation) return;
      Object.assign(this, { where, events: page.events, ids: new Set(page.events.map((e) => e.id)), changes: new Map(), rewound: new Set() });
      absorb(page);
      this.olderCursor = page.olderCursor || null;
      this.newerCursor = page.newerCursor;
      emit("reset");
    },
    /** The page just older than the window (one request at a time). */
    older() {
      if (!this.olderCursor || !this.where) return Promise.resolve([]);
      if (loadingOlder) return loadingOlder;
      const mine = generation;
      const { app, user, sessionId } = this.where;
      loadingOlder = api.timeline(app, user, sessionId, { limit: PAGE_SIZE, cursor: this.olderCursor }).then((page) => {
        if (mine !== generation) return [];
        loadingOlder = null;
        const added = page.events.filter((e) => !this.ids.has(e.id));
        for (const e of added) this.ids.add(e.id);
        this.events = [...added, ...this.events];
        absorb(page);
        this.olderCursor = page.olderCursor || null;
        emit("older", added);
        return added;
      }, (error) => {
        loadingOlder = null;
        throw error;
      });
      return loadingOlder;
    },
    /** A committed event as the run streams it (its state changes come with newer()). */
    streamed(event) {
      if (!event.id || this.ids.has(event.id)) return;
      this.ids.add(event.id);
      this.events.push(event);
      emit("newer", [event]);
    },
    /** Only what is new since the window's newest page or last catch-up. */
    async newer() {
      if (!this.where || !this.newerCursor) return;
      const mine = generation;
      const { app, user, sessionId } = this.where;
      for (;;) {
        const page = await api.timeline(app, user, sessionId, { limit: PAGE_SIZE, cursor: this.newerCursor, direction: "forward" });
        if (mine !== generation) return;
        absorb(page);
        // Events the stream did not carry (the user's message) go before the first
        // streamed event that follows them in the log.
        const added = [];
        const inserted = [];
        const updated = [];
        let waiting = [];
        for (const event of page.events) {
          if (this.ids.has(event.id)) {
            const at = this.events.findIndex((e) => e.id === event.id);
            this.events.splice(at, 1, ...waiting, event); // the stored form (temp: keys gone)
            inserted.push(...waiting.map((e) => ({ event: e, before: event.id })));
            waiting = [];
            updated.push(event);
          } else {
            this.ids.add(event.id);
            waiting.push(event);
          }
        }
        this.events.push(...waiting);
        added.push(...waiting);
        this.newerCursor = page.newerCursor;
        if (inserted.length) emit("inserted", inserted);
        if (updated.length) emit("updated", updated);
        if (added.length) emit("newer", added);
        if (page.events.length < PAGE_SIZE) return;
      }
    },
  };

  function absorb(page) {
    for (const [id, changes] of Object.entries(page.changes || {})) log.changes.set(id, changes);
    for (const id of page.rewoundEventIds || []) log.rewound.add(id);
  }

  function emit(kind, events = []) {
    for (const listener of listeners) listener(kind, events);
  }

  return log;
}
