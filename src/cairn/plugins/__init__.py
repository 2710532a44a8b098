"""Plugins: cross-cutting hooks around every invocation."""

from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.plugin_manager import PluginManager

__all__ = ["BasePlugin", "PluginManager"]
