"""Where in the node tree an event came from."""

from __future__ import annotations

from cairn.events._base import CamelModel


class NodeInfo(CamelModel):
    """The path of the node that produced an event.

    ``path`` is a ``/``-joined list of ``name@run`` segments, e.g. ``wf@1/a@2``
    (node ``a``'s second run inside the first run of workflow ``wf``).
    """

    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None

    @property
    def _last_segment(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def name(self) -> str:
        """The node's name (last segment without its run number)."""
        return self._last_segment.split("@", 1)[0]

    @property
    def run_id(self) -> str:
        """The node's run number within its parent (``''`` when the path has none)."""
        segment = self._last_segment
        return segment.split("@", 1)[1] if "@" in segment else ""

    @property
    def parent_path(self) -> str:
        """The path of the parent node (``''`` at the root)."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""
