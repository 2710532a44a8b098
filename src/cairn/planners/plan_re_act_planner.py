"""Plan, then act and reason, then answer: a planner for any model (no built-in thinking).

The model is asked to tag each section of its reply; the tags are a protocol (ADK's):
a plan under ``/*PLANNING*/`` (a revised one under ``/*REPLANNING*/``), tool calls under
``/*ACTION*/``, reasoning between them under ``/*REASONING*/`` and the answer under
``/*FINAL_ANSWER*/``. The plan and the reasoning are kept as thought parts; only the
final answer (and any function calls) is the reply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.genai import types

from cairn.planners.base_planner import BasePlanner

if TYPE_CHECKING:
    from cairn.agents.context import Context
    from cairn.agents.readonly_context import ReadonlyContext
    from cairn.models.llm_request import LlmRequest

PLANNING_TAG = "/*PLANNING*/"
REPLANNING_TAG = "/*REPLANNING*/"
REASONING_TAG = "/*REASONING*/"
ACTION_TAG = "/*ACTION*/"
FINAL_ANSWER_TAG = "/*FINAL_ANSWER*/"

_SECTION_TAGS = (PLANNING_TAG, REASONING_TAG, ACTION_TAG, REPLANNING_TAG)


def _instruction() -> str:
    overview = (
        "Answer the question with the tools you have: prefer what the tools tell you over "
        "what you remember.\n\n"
        "Work in three stages: (1) write a plan in plain language; (2) carry the plan out "
        "with the tools, and between tool uses reason about where you stand and what to do "
        "next, so that tool use and reasoning alternate; (3) give one final answer.\n\n"
        f"Tag each section of your reply: the plan goes under {PLANNING_TAG}; tool use goes "
        f"under {ACTION_TAG} and reasoning under {REASONING_TAG}; the final answer goes "
        f"under {FINAL_ANSWER_TAG}."
    )
    planning = (
        "The plan: following it must answer the question. It covers everything the "
        "question asks, uses only the tools you have, and is a numbered list of steps, each "
        "using one or more tools, so that a reader sees which tool each step needs. If the "
        "plan cannot be carried out, learn from what the tools returned and write a revised "
        f"plan under {REPLANNING_TAG}, then follow that one."
    )
    reasoning = (
        "The reasoning: sum up the progress so far from the question and the tool results, "
        "and say what the next step is, so that each step brings the answer closer."
    )
    final_answer = (
        "The final answer: exact, and in the form the question asks for. If the tools and "
        "the information you have cannot answer the question, say why and ask for what "
        "you need."
    )
    tool_code = (
        "Tool use: the tools described to you can be called directly.\n"
        "- Use only the tools and the parameters they declare; nothing else.\n"
        "- Keep each tool use short, clear and about the question and your reasoning.\n"
        "- Where no libraries are described to you, write nothing but calls of the tools."
    )
    clarify = (
        "Above all: ask the user when you need more information to answer, and use what "
        "you already know from the conversation rather than calling the same tool again."
    )
    return "\n\n".join([overview, planning, reasoning, final_answer, tool_code, clarify])


class PlanReActPlanner(BasePlanner):
    """Asks the model to plan, act with tools while reasoning, then answer (tagged
    sections), and keeps the plan and the reasoning as thought parts. Works with any model:
    it needs no built-in thinking."""

    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str:
        return _instruction()

    def process_planning_response(
        self, callback_context: Context, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        """Text before the first function call split into thought (plan, reasoning) and
        answer; then that call and the calls right after it; anything later is dropped.
        Calls without a name are left out."""
        if not response_parts:
            return None
        kept: list[types.Part] = []
        for index, part in enumerate(response_parts):
            call = part.function_call
            if call is None:
                kept.extend(_split(part))
                continue
            if not call.name:
                continue
            kept.append(part)
            for following in response_parts[index + 1 :]:
                if following.function_call is None:
                    break
                kept.append(following)
            break
        return kept


def _strip_tags(text: str) -> str:
    for tag in _SECTION_TAGS:
        text = text.replace(tag, "")
    return text


def _split(part: types.Part) -> list[types.Part]:
    """A part without a call: text with a final answer becomes the reasoning (a thought)
    and the answer after the last answer tag; text that opens with a section tag is a
    thought; anything else stays as it is."""
    text = part.text
    if text and FINAL_ANSWER_TAG in text:
        at = text.rfind(FINAL_ANSWER_TAG)
        reasoning = _strip_tags(text[:at])
        answer = text[at + len(FINAL_ANSWER_TAG) :]
        split = []
        if reasoning:
            split.append(types.Part(text=reasoning, thought=True))
        if answer:
            split.append(types.Part(text=answer))
        return split
    if text and text.startswith(_SECTION_TAGS):
        return [part.model_copy(update={"text": _strip_tags(text), "thought": True})]
    return [part]


__all__ = [
    "ACTION_TAG",
    "FINAL_ANSWER_TAG",
    "PLANNING_TAG",
    "REASONING_TAG",
    "REPLANNING_TAG",
    "PlanReActPlanner",
]
