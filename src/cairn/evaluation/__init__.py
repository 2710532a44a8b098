"""Evaluation: ADK's eval sets, metrics and results (``google.adk.evaluation``)."""
