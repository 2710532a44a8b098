"""Conversions between A2A's messages, tasks and parts and cairn's events and genai parts."""
