"""The conversation as one agent should see it, built from the session's events."""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Sequence

from google.genai import types

from cairn.agents.branches import sees
from cairn.events.event import Event
from cairn.events.event_actions import EventCompaction
from cairn.events.interrupts import PROTOCOL_FUNCTIONS, RECORD_FUNCTIONS, awaiting_confirmation

_UNSEEN = PROTOCOL_FUNCTIONS | RECORD_FUNCTIONS


def _is_protocol(part: types.Part) -> bool:
    call, response = part.function_call, part.function_response
    return (call is not None and call.name in _UNSEEN) or (
        response is not None and response.name in _UNSEEN
    )


def _invisible(part: types.Part) -> bool:
    """A part the model is not shown (ADK's rule): a thought (unless it carries a call, a
    response or a signature the model wants back), or a part with nothing in it."""
    if part.function_call or part.function_response or part.thought_signature:
        return False
    if part.tool_call or part.tool_response:
        return False
    return bool(part.thought) or not (
        part.text
        or part.inline_data
        or part.file_data
        or part.executable_code
        or part.code_execution_result
    )


def merge_responses(contents: list[types.Content]) -> list[types.Content]:
    """Adjacent contents that hold only function responses, as one content.

    The results of one model turn may be committed in several events (a call
    answered on resume, the rest earlier); models expect them in one turn.
    """
    merged: list[types.Content] = []
    for content in contents:
        _append(merged, content)
    return merged


def _append(contents: list[types.Content], content: types.Content) -> None:
    """Append ``content``, merged into the last one if both hold only function responses."""
    previous = contents[-1] if contents else None
    if previous is not None and _only_responses(previous) and _only_responses(content):
        contents[-1] = previous.model_copy(
            update={"parts": [*(previous.parts or []), *(content.parts or [])]}
        )
    else:
        contents.append(content)


def answer_next_to_its_call(contents: list[types.Content]) -> list[types.Content]:
    """ADK's rule for a late answer: when the newest content answers calls made before the
    contents just ahead of it (a long-running call answered after the model went on), what
    came between the call and that answer is left out, and the answer follows its call,
    merged with earlier (intermediate) responses to those calls (the newest per id wins).
    """
    if len(contents) < 2 or not _only_responses(contents[-1]):
        return contents
    ids = {p.function_response.id for p in contents[-1].parts or [] if p.function_response}
    if _call_ids(contents[-2]) & ids:
        return contents
    at = next((i for i in range(len(contents) - 2, -1, -1) if _call_ids(contents[i]) & ids), -1)
    if at < 0 or not ids <= _call_ids(contents[at]):
        return contents
    ids = _call_ids(contents[at])
    answers = [
        content
        for content in contents[at + 1 : -1]
        if any(p.function_response and p.function_response.id in ids for p in content.parts or [])
    ]
    parts: list[types.Part] = []
    for content in [*answers, contents[-1]]:
        for part in content.parts or []:
            same = next(
                (
                    i
                    for i, kept in enumerate(parts)
                    if part.function_response
                    and kept.function_response
                    and kept.function_response.id == part.function_response.id
                ),
                None,
            )
            if same is None:
                parts.append(part)
            else:
                parts[same] = part
    return [*contents[: at + 1], contents[-1].model_copy(update={"parts": parts})]


def _answers_to_others_retold(contents: list[types.Content]) -> list[types.Content]:
    """A function response whose call the prompt does not hold (the user answered another
    agent's question: a remote agent's input request, say) retold as text: models refuse a
    response to a call they never made."""
    made: set[str | None] = set()
    shown: list[types.Content] = []
    for content in contents:
        made |= _call_ids(content)
        parts = content.parts or []
        if all(p.function_response is None or p.function_response.id in made for p in parts):
            shown.append(content)
            continue
        kept: list[types.Part] = []
        for part in parts:
            response = part.function_response
            if response is None or response.id in made:
                kept.append(part)
                continue
            result = json.dumps(response.response or {}, ensure_ascii=False, default=str)
            kept.append(
                types.Part(text=f"For context:\n[user] answered `{response.name}`: {result}")
            )
        shown.append(content.model_copy(update={"parts": kept}))
    return shown


def _call_ids(content: types.Content) -> set[str | None]:
    return {p.function_call.id for p in content.parts or [] if p.function_call}


def _only_responses(content: types.Content) -> bool:
    return bool(content.parts) and all(p.function_response is not None for p in content.parts or [])


def _below(event_branch: str | None, branch: str | None) -> bool:
    """The event is on ``branch`` or a branch under it."""
    if event_branch is None or branch is None:
        return event_branch == branch
    return event_branch == branch or event_branch.startswith(branch + ".")


def retold(event: Event) -> list[str]:
    """An event's text, calls and results as lines naming its author (thoughts left out)."""
    lines = []
    for part in event.content.parts if event.content and event.content.parts else []:
        if part.text and not part.thought:
            lines.append(f"[{event.author}] said: {part.text}")
        elif part.function_call:
            args = json.dumps(part.function_call.args or {}, ensure_ascii=False)
            lines.append(f"[{event.author}] called tool `{part.function_call.name}` with {args}")
        elif part.function_response:
            result = json.dumps(part.function_response.response or {}, ensure_ascii=False)
            name = part.function_response.name
            lines.append(f"[{event.author}] tool `{name}` returned: {result}")
    return lines


def _as_context(event: Event) -> types.Content:
    """Another agent's turn, retold to this agent as user-side context."""
    lines = ["For context:", *retold(event)]
    return types.Content(role="user", parts=[types.Part(text="\n".join(lines))])


def _summary(compaction: EventCompaction) -> types.Content | None:
    parts = compaction.compacted_content.parts if compaction.compacted_content else None
    if not parts:
        return None
    text = "".join(p.text or "" for p in parts)
    return types.Content(
        role="user", parts=[types.Part(text=f"Summary of the earlier conversation:\n{text}")]
    )


def _pick(
    event: Event,
    own: tuple[str, str],
    branch: str | None,
    invocation_id: str | None,
    covered: list[tuple[float, float]],
    isolated: bool = False,
) -> types.Content | None:
    """What one (non-compaction) event contributes to the prompt, if anything."""
    content = event.content
    if content is None or not content.parts or event.partial:
        return None
    if all(_invisible(part) for part in content.parts):
        return None  # only thoughts (or nothing): as in ADK, no turn of the conversation
    held = awaiting_confirmation(event)
    if held or any(_is_protocol(part) for part in content.parts):
        # Interrupt calls (confirmation, credential, in doubt) and their answers are between
        # the runtime and the user; the model sees the original call and its final result.
        # A call waiting for a confirmation has a placeholder response: left out too.
        kept = [
            part
            for part in content.parts
            if not _is_protocol(part)
            and not (part.function_response and part.function_response.id in held)
        ]
        if not kept:
            return None
        content = content.model_copy(update={"parts": kept})
    if invocation_id is not None and event.invocation_id != invocation_id:
        return None
    if not sees(branch, event.branch):
        return None
    if isolated and not _below(event.branch, branch):
        return None
    if covered and any(start <= event.timestamp <= end for start, end in covered):
        return None
    if event.author in own:
        return content
    if event.branch == branch and branch is not None and content.role == "user":
        return content  # the request another agent handed to this one, on its branch
    return _as_context(event)


def current_turn_start(events: Sequence[Event], agent_name: str, branch: str | None) -> int:
    """Where the current turn of ``agent_name`` begins, as ADK's ``include_contents='none'``
    reads it: at the newest message of the user or reply of another agent that the agent
    can see (0 when there is none). A user event holding only answers to calls does not
    start a turn: the calls it answers stay with it."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        content = event.content
        if content is None or not content.parts or event.partial:
            continue
        if not sees(branch, event.branch):
            continue
        if event.author == "user":
            if not _only_responses(content):
                return index
        elif event.author != agent_name:
            return index
    return 0


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str | None,
    invocation_id: str | None = None,
    isolated: bool = False,
) -> list[types.Content]:
    """Contents for a model call: the user's and this agent's turns as they were, other
    agents' turns as context, other branches left out. With ``invocation_id`` only that
    invocation's events count (``include_contents='none'``). A compaction's summary stands
    in for the events it covers (the log keeps them).
    """
    built = _build(events, agent_name, branch, invocation_id, isolated)[0]
    return answer_next_to_its_call(_answers_to_others_retold(built))


def _build(
    events: Sequence[Event],
    agent_name: str,
    branch: str | None,
    invocation_id: str | None,
    isolated: bool = False,
) -> tuple[list[types.Content], list[tuple[float, float]]]:
    """One pass from the newest event back: a compaction always comes after the events it
    covers, so its range is known before they are reached."""
    covered: list[tuple[float, float]] = []
    picked: list[types.Content] = []
    own = ("user", agent_name)
    everything_before: float | None = None
    """The end of a summary that covers the history from its start: older events are done."""
    waiting: list[tuple[float, types.Content]] = []
    """Summaries not placed yet: each goes where the events it covers were (before the
    events that came after them, even those logged before the summary itself)."""
    for event in reversed(events):
        compaction = event.actions.compaction
        if compaction is not None:
            if any(start <= event.timestamp <= end for start, end in covered):
                continue  # a newer summary folded this one in
            covered.append((compaction.start_timestamp, compaction.end_timestamp))
            summary = _summary(compaction)
            if summary is not None:
                waiting.append((compaction.end_timestamp, summary))
            if events and compaction.start_timestamp <= events[0].timestamp:
                everything_before = compaction.end_timestamp
            continue
        while waiting and event.timestamp <= max(end for end, _ in waiting):
            latest = max(range(len(waiting)), key=lambda i: waiting[i][0])
            picked.append(waiting.pop(latest)[1])
        if everything_before is not None and event.timestamp <= everything_before:
            break
        content = _pick(event, own, branch, invocation_id, covered, isolated)
        if content is not None:
            picked.append(content)
    picked.extend(summary for _, summary in sorted(waiting, reverse=True))
    picked.reverse()
    return merge_responses(picked), covered


@dataclasses.dataclass
class _Built:
    count: int
    last_id: str
    picked: list[types.Content]
    covered: list[tuple[float, float]]


class ContentsCache:
    """Prompt contents of recently seen sessions, extended by only the events added since.

    Stored events never change, so contents built for the first N events stay
    right as long as the history still starts with them (checked by the id of
    the N-th event) and no new compaction re-covers them (then it rebuilds).
    """

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, ...], _Built] = OrderedDict()

    def contents(
        self,
        key: tuple[str, ...],
        events: Sequence[Event],
        *,
        agent_name: str,
        branch: str | None,
        invocation_id: str | None = None,
        isolated: bool = False,
    ) -> list[types.Content]:
        """The same as ``build_contents(events, ...)``, reusing the previous call's work."""
        key = (*key, agent_name, branch or "", invocation_id or "", "isolated" if isolated else "")
        built = self._entries.get(key)
        fresh = events[built.count :] if built and self._continues(built, events) else None
        if (
            built is not None
            and fresh is not None
            and not any(event.actions.compaction is not None for event in fresh)
        ):
            own = ("user", agent_name)
            for event in fresh:
                content = _pick(event, own, branch, invocation_id, built.covered, isolated)
                if content is not None:
                    _append(built.picked, content)
        else:
            picked, covered = _build(events, agent_name, branch, invocation_id, isolated)
            built = _Built(0, "", picked, covered)
        built.count = len(events)
        built.last_id = events[-1].id if events else ""
        self._entries[key] = built
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)
        return answer_next_to_its_call(_answers_to_others_retold(list(built.picked)))

    @staticmethod
    def _continues(built: _Built, events: Sequence[Event]) -> bool:
        if built.count == 0 or built.count > len(events):
            return False
        return events[built.count - 1].id == built.last_id
