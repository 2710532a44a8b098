"""A node that waits for all its predecessors."""

from __future__ import annotations

from cairn.workflow.nodes import BaseNode


class JoinNode(BaseNode):
    """Runs once every predecessor has produced its output; its input (and output) is
    ``{predecessor_name: output}``. Its ``input_schema``, if any, checks each predecessor's
    output (a None output passes), not the joined dict."""
