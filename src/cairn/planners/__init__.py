"""Planners: how an LLM agent's model plans before it acts (``LlmAgent.planner``)."""

from cairn.planners.base_planner import BasePlanner
from cairn.planners.built_in_planner import BuiltInPlanner
from cairn.planners.plan_re_act_planner import PlanReActPlanner

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]
