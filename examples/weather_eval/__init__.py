"""An agent with an eval set: ``cairn eval examples/weather_eval examples/weather_eval/weather.evalset.json``."""

from . import agent as agent
