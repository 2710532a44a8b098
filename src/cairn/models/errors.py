"""Errors the model adapters raise: a provider refused or failed a call, or has no credentials."""

from __future__ import annotations

from cairn.errors import CairnError

PROVIDER_MESSAGE_LIMIT = 600
"""The most characters of a provider's own message an error keeps (servers may send pages)."""


def capped(message: str, limit: int = PROVIDER_MESSAGE_LIMIT) -> str:
    """``message`` cut to ``limit`` characters, saying how much was left out."""
    message = message.strip()
    if len(message) <= limit:
        return message
    return f"{message[:limit].rstrip()} … [{len(message) - limit} more characters]"


class ModelCallError(CairnError, RuntimeError):
    """A call to a model provider failed (HTTP error, timeout, unreachable server).

    ``status_code`` is the HTTP status (``None`` for a timeout or connection
    failure), ``provider`` names the adapter's provider (``"openai"``,
    ``"anthropic"``) and ``retryable`` says whether the same call may succeed
    later (rate limits, server errors, timeouts). The message names the
    provider, the model, the status and the provider's own message (its first
    ``PROVIDER_MESSAGE_LIMIT`` characters), and never holds an API key.
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
        provider_message = capped(provider_message)
        self.provider_message = provider_message
        self.retryable = retryable
        self.attempts = attempts
        status = f" (HTTP {status_code})" if status_code is not None else ""
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        said = provider_message.strip().rstrip(".") or "no message"
        message = f"{provider} model {model!r} call failed{tries}{status}: {said}"
        super().__init__(f"{message}. {hint}" if hint else message)


class ContextWindowExceededError(ModelCallError):
    """The prompt does not fit the model's context window: refused before it was sent (the
    window is known and the prompt's estimate passes it) or by the server.

    ``context_window`` is the window in tokens and ``prompt_tokens`` the prompt's size
    (the server's count, or cairn's estimate), each ``None`` when unknown. The message
    says that the oversized content stays in the session's history, so every later
    turn overflows too, and how to get out: rewind, compaction, a larger window.
    """

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        provider_message: str,
        context_window: int | None = None,
        prompt_tokens: int | None = None,
        status_code: int | None = None,
        before_sending: bool = False,
    ) -> None:
        self.context_window = context_window
        self.prompt_tokens = prompt_tokens
        self.before_sending = before_sending
        where = "It was not sent. " if before_sending else ""
        super().__init__(
            provider=provider,
            model=model,
            status_code=status_code,
            provider_message=provider_message,
            retryable=False,
            hint=f"{where}The content that made the prompt too long stays in the session's "
            "history, so every later turn of this session overflows too. Rewind the session "
            "to before the invocation that added it (Runner.rewind_async, `cairn web`'s "
            "rewind, or POST .../rewind), let compaction summarise old events "
            "(App(events_compaction_config=EventsCompactionConfig(...))), shorten what tools "
            "return, or use a model with a larger context window",
        )


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
