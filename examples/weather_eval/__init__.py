"""A weather agent with an eval set. From the repository's root:

cairn eval examples/weather_eval examples/weather_eval/weather.evalset.json
"""

from . import agent as agent
