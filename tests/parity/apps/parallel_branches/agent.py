"""A ParallelAgent of two researchers, then a merger that reads both results."""

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent

solar = LlmAgent(
    name="solar_researcher",
    model="gemini-2.5-flash",
    instruction="One fact about solar power.",
    output_key="solar",
)
wind = LlmAgent(
    name="wind_researcher",
    model="gemini-2.5-flash",
    instruction="One fact about wind power.",
    output_key="wind",
)
research = ParallelAgent(name="research", sub_agents=[solar, wind])
merger = LlmAgent(
    name="merger",
    model="gemini-2.5-flash",
    instruction="Combine: solar={solar} wind={wind}",
)

root_agent = SequentialAgent(name="energy_report", sub_agents=[research, merger])
