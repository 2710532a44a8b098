"""ADK's ``google.adk.workflow.utils``: a package of the engine's internal helpers (graph
parsing, replay, retry delays), none of them public. cairn's are in ``cairn.workflow``
(``parse_edges``, ``build_graph``, ``RetryConfig``); this module keeps the import path."""
