"""The garbage collector in a serving process: what existed at startup is not scanned again.

A server's modules, classes and schemas are about 200,000 objects the garbage collector
tracks, and a full collection walks all of them although none ever becomes garbage: with a
full collection every few seconds under load, an A2A server spent a fifth of its CPU there.
``gc.freeze()`` moves them out of the collector's generations, so a collection walks only
what the requests made. The servers cairn builds (``to_a2a``, ``cairn api-server``,
``cairn web``) freeze them when they start, once per process; a cycle of objects made before
startup that later becomes garbage is then never freed (a process rarely makes one).

They also let the youngest generation grow to ``YOUNG_OBJECTS`` objects before it is
collected (Python's default is 700): a request's objects are still alive at a collection
that comes every 700 allocations, so they were moved to older generations and walked again
there; with room for a few requests' worth, most of them are gone before the collector
looks. Cyclic garbage then waits a little longer to be freed, a few megabytes at most.
"""

from __future__ import annotations

import gc
import threading

YOUNG_OBJECTS = 10_000
"""The youngest generation's threshold in a serving process."""

_frozen = False
_lock = threading.Lock()


def prepare_gc_for_serving() -> None:
    """Collect the garbage of startup, exempt every object left from later collections and
    raise the youngest generation's threshold (the first call of a process; later calls do
    nothing)."""
    global _frozen
    with _lock:
        if _frozen:
            return
        _frozen = True
    gc.collect()
    gc.freeze()
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(YOUNG_OBJECTS, young), middle, oldest)
