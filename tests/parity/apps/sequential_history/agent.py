"""A SequentialAgent of three: the last one sees the whole conversation."""

from google.adk.agents import LlmAgent, SequentialAgent

planner = LlmAgent(
    name="planner", model="gemini-2.5-flash", instruction="Plan a trip in three steps."
)
booker = LlmAgent(name="booker", model="gemini-2.5-flash", instruction="Book what the plan needs.")
reporter = LlmAgent(
    name="reporter",
    model="gemini-2.5-flash",
    instruction="Summarize the plan and the bookings for the user.",
)

root_agent = SequentialAgent(name="trip", sub_agents=[planner, booker, reporter])
