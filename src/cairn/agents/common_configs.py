"""References in agent configs: to code (``CodeConfig``) and to an agent (``AgentRefConfig``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator


class CodeConfig(BaseModel):
    """A reference to a Python object by its fully qualified name, e.g.
    ``name: my_agent.callbacks.check_input`` (a callback, a schema class, a model object).
    A name starting with ``.`` is relative to the config's folder (``.callbacks.check``).
    YAML passes no constructor arguments: build a configured object in Python and name it."""

    model_config = ConfigDict(extra="forbid")

    name: str


class AgentRefConfig(BaseModel):
    """A sub-agent: ``config_path`` (a YAML file, relative to the referring config's folder,
    inside it) or ``code`` (the fully qualified name of an agent object); exactly one."""

    model_config = ConfigDict(extra="forbid")

    config_path: str | None = None
    code: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> AgentRefConfig:
        if (self.config_path is None) == (self.code is None):
            raise ValueError(
                "give exactly one of `config_path` (a YAML file beside this one) or `code` "
                "(the fully qualified name of an agent object)"
            )
        return self
