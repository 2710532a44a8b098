"""Run by google-adk's own Python (bench/.peers/adk): how ADK's API server answers
``/health`` and ``/version``, as JSON on stdout, for test_health_and_version.py.

Usage: adk/bin/python adk_probes.py AGENTS_DIR
"""

from __future__ import annotations

import json
import sys

from fastapi.testclient import TestClient
from google.adk.cli.fast_api import get_fast_api_app

PATHS = ("/health", "/version")
METHODS = ("GET", "POST", "HEAD")


def main() -> None:
    app = get_fast_api_app(agents_dir=sys.argv[1], web=False)
    client = TestClient(app)
    answers = {}
    for path in PATHS:
        for method in METHODS:
            response = client.request(method, path)
            body = response.json() if method == "GET" else None
            answers[f"{method} {path}"] = {
                "status": response.status_code,
                "content_type": response.headers.get("content-type"),
                "body": body,
            }
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
