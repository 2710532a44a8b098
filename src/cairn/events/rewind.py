"""Which events of a log a rewind took back.

A rewind is one event whose ``actions.rewind_before_invocation_id`` names an
invocation: every event from that invocation's first event up to the rewind
event is *rewound*. The events stay in the log (nothing is deleted); prompts,
pending interrupts and resumes read only the events that are still live.
Rewinds nest naturally: a later rewind to an earlier invocation takes back the
earlier rewind event too (its effect on state is undone with everything else).
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.events.event import Event


def is_rewind(event: Event) -> bool:
    """True for an event that rewinds the session."""
    return event.actions.rewind_before_invocation_id is not None


def replay_rewinds(
    events: Sequence[Event], *, whole_log: bool = False
) -> tuple[list[Event], set[str]]:
    """(the events still in effect, rewind events included; the ids of the events taken back).

    In a window (``whole_log`` false) a rewind to an invocation the window does not show
    takes back everything before it (that invocation started earlier); in a whole log,
    such a rewind names no invocation of it and takes nothing back.
    """
    in_effect: list[Event] = []
    taken: set[str] = set()
    for event in events:
        target = event.actions.rewind_before_invocation_id
        if target is not None:
            start = next((i for i, e in enumerate(in_effect) if e.invocation_id == target), None)
            if start is None and whole_log:
                start = len(in_effect)
            # An invocation that started before this window: everything before the rewind goes.
            gone = in_effect[0 if start is None else start :]
            taken.update(e.id for e in gone)
            del in_effect[0 if start is None else start :]
        in_effect.append(event)
    return in_effect, taken


def live_events(events: Sequence[Event], *, whole_log: bool = False) -> list[Event]:
    """The events no rewind took back, in log order (rewind events themselves excluded).

    ``events`` must be the log from its start, or a window whose first event is
    not inside a rewound invocation that also has events before the window
    (``whole_log``: see ``replay_rewinds``).
    """
    if not any(is_rewind(event) for event in events):
        return list(events)
    in_effect, _ = replay_rewinds(events, whole_log=whole_log)
    return [event for event in in_effect if not is_rewind(event)]


def rewound_event_ids(events: Sequence[Event]) -> set[str]:
    """The ids of the events a rewind took back (taken-back rewind events included)."""
    if not any(is_rewind(event) for event in events):
        return set()
    return replay_rewinds(events)[1]
