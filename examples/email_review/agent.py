"""The review workflow as an app, for `cairn web examples/` or `cairn api-server examples/`.

`cairn` loads this file with its directory on `sys.path` (as `python main.py` runs), so
it reuses `workflow.py`; the app is named after the directory: `email_review`.
"""

from workflow import root_agent

__all__ = ["root_agent"]
