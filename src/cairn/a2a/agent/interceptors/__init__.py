"""Interceptors a ``RemoteA2aAgent`` can add to its requests."""
