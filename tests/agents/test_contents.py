"""Prompt contents: what an agent sees of the history, and the cache that builds it once."""

from __future__ import annotations

import random

from google.genai import types

from cairn import Event, EventActions, EventCompaction
from cairn.agents.contents import ContentsCache, build_contents


def text_event(author: str, text: str, timestamp: float, branch: str | None = None) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        branch=branch,
        timestamp=timestamp,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def test_own_turns_as_they_were_others_as_context_other_branches_hidden() -> None:
    events = [
        text_event("user", "hi", 1),
        text_event("helper", "I can help", 2),
        text_event("me", "hello", 3),
        text_event("sibling", "secret", 4, branch="root.sibling"),
        text_event("me", "in my branch", 5, branch="root.me"),
    ]
    contents = build_contents(events, agent_name="me", branch="root.me")
    texts = [c.parts[0].text for c in contents]
    assert texts == ["hi", "For context:\n[helper] said: I can help", "hello", "in my branch"]


def test_an_agent_with_no_branch_sees_every_branch_but_runs_serving_a_call() -> None:
    """ADK's rule: a merger after a ParallelAgent sees both branches; the run of an
    AgentTool or task agent (``name@<call id>``) stays private, as ADK scopes it."""
    events = [
        text_event("user", "report", 1),
        text_event("solar", "solar fact", 2, branch="research.solar"),
        text_event("wind", "wind fact", 3, branch="research.wind"),
        text_event("node", "node work", 4, branch="flow@1.step@2"),
        text_event("translator", "private", 5, branch="translator@call_x7"),
        text_event("booker", "private too", 6, branch="flow@1.booker@adk-1f"),
    ]
    contents = build_contents(events, agent_name="merger", branch=None)
    seen = " ".join(c.parts[0].text or "" for c in contents)
    assert "solar fact" in seen and "wind fact" in seen and "node work" in seen
    assert "private" not in seen


def test_the_cache_always_matches_a_full_build() -> None:
    rng = random.Random(7)
    cache = ContentsCache()
    for trial in range(30):
        events: list[Event] = []
        clock = 0.0
        for step in range(60):
            clock += 1
            roll = rng.random()
            if roll < 0.08 and events:
                start = rng.choice(events).timestamp
                summary = types.Content(role="model", parts=[types.Part(text=f"sum {step}")])
                compaction = EventCompaction(
                    start_timestamp=start, end_timestamp=clock - 1, compacted_content=summary
                )
                events.append(
                    Event(
                        author="user", timestamp=clock, actions=EventActions(compaction=compaction)
                    )
                )
            elif roll < 0.12:
                events = [text_event("user", "restart", clock)]  # a recreated session
            else:
                author = rng.choice(["user", "me", "other"])
                branch = rng.choice([None, None, "root.me", "root.other"])
                events.append(text_event(author, f"{trial}-{step}", clock, branch))
            expected = build_contents(events, agent_name="me", branch="root.me")
            cached = cache.contents(
                ("a", "u", f"s{trial}"), events, agent_name="me", branch="root.me"
            )
            assert cached == expected, (trial, step)
