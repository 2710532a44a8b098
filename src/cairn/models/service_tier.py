"""The serving tier a model call asks for (ADK's ``google.adk.models.ServiceTier``)."""

from __future__ import annotations

import enum


class ServiceTier(enum.StrEnum):
    """The serving tiers of Gemini's interactions API; a plain string is accepted as well
    wherever a tier is (``RunConfig.service_tier``). cairn's model classes do not send it."""

    FLEX = "flex"
    STANDARD = "standard"
    PRIORITY = "priority"
    DEFERRED = "deferred"
