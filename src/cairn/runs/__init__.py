"""Runs: invocations with a lifecycle, queued per session, executed in this process or on
Temporal workers (``cairn.runs.executor``), kept beside the sessions
(``cairn.sessions.run_store``)."""
