"""Simulated users for conversation scenarios (ADK's ``google.adk.evaluation.simulation``)."""
