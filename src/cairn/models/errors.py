"""Errors the model adapters raise: a provider refused or failed a call, or has no credentials."""

from __future__ import annotations

from cairn.errors import CairnError


class ModelCallError(CairnError, RuntimeError):
    """A call to a model provider failed (HTTP error, timeout, unreachable server).

    ``status_code`` is the HTTP status (``None`` for a timeout or connection
    failure), ``provider`` names the adapter's provider (``"openai"``,
    ``"anthropic"``) and ``retryable`` says whether the same call may succeed
    later (rate limits, server errors, timeouts). The message names the
    provider, the model, the status and the provider's own message, and never
    holds an API key.
    """

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        status_code: int | None,
        provider_message: str,
        retryable: bool,
        attempts: int = 1,
        hint: str = "",
    ) -> None:
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.provider_message = provider_message
        self.retryable = retryable
        self.attempts = attempts
        status = f" (HTTP {status_code})" if status_code is not None else ""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        said = provider_message.strip().rstrip(".") or "no message"
        message = f"{provider} model {model!r} call failed{tries}{status}: {said}"
        super().__init__(f"{message}. {hint}" if hint else message)


class MissingApiKeyError(CairnError, ValueError):
    """A model adapter has no API key: none was passed and its environment variable is unset."""

    def __init__(
        self, *, provider: str, model: str, env_var: str, model_class: str = "", hint: str = ""
    ) -> None:
        self.provider = provider
        self.model = model
        self.env_var = env_var
        example = f" as in {model_class}(model={model!r}, api_key=...)" if model_class else ""
        message = (
            f"{provider} model {model!r} has no API key: set the {env_var} environment "
            f"variable, or pass api_key=...{example}"
        )
        super().__init__(f"{message}. {hint}" if hint else f"{message}.")


class ModelPackageMissingError(CairnError, ImportError):
    """A model class needs an optional package that is not installed; the message names the
    extra that installs it."""

    def __init__(self, *, package: str, model_class: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{model_class} needs the {package!r} package, which is not installed. Install it "
            f"with: pip install 'cairn[{extra}]'",
            name=package,
        )
