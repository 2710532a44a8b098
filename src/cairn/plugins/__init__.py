"""Plugins: hooks around every invocation, agent run, model call and tool call of a Runner."""

from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.context_filter_plugin import ContextFilterPlugin
from cairn.plugins.debug_logging_plugin import DebugLoggingPlugin
from cairn.plugins.global_instruction_plugin import GlobalInstructionPlugin
from cairn.plugins.logging_plugin import LoggingPlugin
from cairn.plugins.multimodal_tool_results_plugin import MultimodalToolResultsPlugin
from cairn.plugins.plugin_manager import PluginCallbackName, PluginManager
from cairn.plugins.reflect_retry_model_plugin import ReflectAndRetryModelPlugin
from cairn.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin, TrackingScope
from cairn.plugins.save_files_as_artifacts_plugin import SaveFilesAsArtifactsPlugin
from cairn.plugins.tool_call_integrity_plugin import ToolCallIntegrityError, ToolCallIntegrityPlugin
from cairn.plugins.tool_results import ToolResultClassification, ToolResultClassifier

__all__ = [
    "BasePlugin",
    "ContextFilterPlugin",
    "DebugLoggingPlugin",
    "GlobalInstructionPlugin",
    "LoggingPlugin",
    "MultimodalToolResultsPlugin",
    "PluginCallbackName",
    "PluginManager",
    "ReflectAndRetryModelPlugin",
    "ReflectAndRetryToolPlugin",
    "SaveFilesAsArtifactsPlugin",
    "ToolCallIntegrityError",
    "ToolCallIntegrityPlugin",
    "ToolResultClassification",
    "ToolResultClassifier",
    "TrackingScope",
]
