"""The real local model server's fixture (tests/support/model_server.py), for the model tests."""

from tests.support.model_server import model_server

__all__ = ["model_server"]
