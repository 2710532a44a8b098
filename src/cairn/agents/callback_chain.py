"""One step's hooks: the Runner's plugins first, then the agent's own callbacks, as in ADK.

Each hook point of an LLM agent (before, after and on error of a model call or a tool call)
goes through ``plugins_then_callbacks``: the plugins in registration order, then the agent's
callbacks in list order; the first non-None result short-circuits the rest and is the step's
answer. Plugins take ADK's plugin keywords (``tool_args``, ``result``), agent callbacks its
callback keywords (``args``, ``tool_response``); everything else is passed alike.
"""

from __future__ import annotations

import logging
from typing import Any

from cairn.agents.callback_hook import CallbackHook, CallbackInfo
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.user_code import call_callback

logger = logging.getLogger(__name__)

_PLUGIN_NAMES = {"args": "tool_args", "tool_response": "result"}
"""Agent-callback keywords and the names plugins receive them by."""


async def first_answer(callbacks: Any, *, hook: CallbackHook | None = None, **kwargs: Any) -> Any:
    """Call each callback in order; the first non-None result short-circuits. With ``hook``,
    the context passed (``tool_context`` or ``callback_context``) has ``callback_info`` set
    while the callbacks run."""
    if callbacks is None:
        return None
    with _announcing(hook, kwargs):
        for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
            result = await call_callback(callback, **kwargs)
            if result is not None:
                return result
    return None


async def plugins_then_callbacks(
    ctx: InvocationContext, hook: CallbackHook, callbacks: Any, **kwargs: Any
) -> Any:
    """The answer of the invocation's plugins for ``hook`` (``run_<hook>_callback``), else
    of the agent's ``callbacks``; None when none answered."""
    plugins = ctx.plugin_manager
    if plugins is not None and plugins.plugins:  # no plugin: none to ask
        run = getattr(plugins, f"run_{hook.value}_callback")
        plugin_kwargs = {_PLUGIN_NAMES.get(name, name): value for name, value in kwargs.items()}
        with _announcing(hook, kwargs):
            answer = await run(**plugin_kwargs)
        if answer is not None:
            return answer
    return await first_answer(callbacks, hook=hook, **kwargs)


async def notify_tool_cancelled(ctx: InvocationContext, callbacks: Any, **kwargs: Any) -> None:
    """A tool call was cancelled: the plugins' and then every one of the agent's
    ``on_tool_error`` hooks are given the ``CancelledError`` (``error=``), for cleanup, as in
    ADK. Their answers are ignored and their failures logged: the cancellation goes on."""
    plugins = ctx.plugin_manager
    with _announcing(CallbackHook.ON_TOOL_ERROR, kwargs):
        if plugins is not None:
            plugin_kwargs = {_PLUGIN_NAMES.get(name, name): value for name, value in kwargs.items()}
            try:
                await plugins.run_on_tool_cancelled_callback(**plugin_kwargs)
            except Exception:
                logger.exception("a plugin failed on hearing of a cancelled tool call")
        listed = callbacks if isinstance(callbacks, list) else [callbacks] if callbacks else []
        for callback in listed:
            try:
                await call_callback(callback, **kwargs)
            except Exception:
                logger.exception("an on_tool_error_callback failed on a cancelled tool call")


class _announcing:
    """Sets ``callback_info`` on the context among ``kwargs`` while a hook runs."""

    def __init__(self, hook: CallbackHook | None, kwargs: dict[str, Any]) -> None:
        context = kwargs.get("tool_context", kwargs.get("callback_context"))
        self._context = context if hook is not None and isinstance(context, Context) else None
        self._hook = hook
        self._outer: CallbackInfo | None = None

    def __enter__(self) -> None:
        if self._context is not None and self._hook is not None:
            self._outer = self._context.callback_info
            self._context.callback_info = CallbackInfo(self._hook)

    def __exit__(self, *exc_info: object) -> None:
        if self._context is not None:
            self._context.callback_info = self._outer
