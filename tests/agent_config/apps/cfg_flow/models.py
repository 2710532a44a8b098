"""A scripted model for the inline LlmAgent node."""

from cairn.testing import ScriptedLlm

rewriter_model = ScriptedLlm(respond=lambda request: "rewritten")
