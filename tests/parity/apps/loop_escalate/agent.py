"""A LoopAgent of writer and critic; the critic ends it with exit_loop (escalate)."""

from google.adk.agents import LlmAgent, LoopAgent
from google.adk.tools import exit_loop

writer = LlmAgent(
    name="draft_writer",
    model="gemini-2.5-flash",
    instruction="Write or improve a slogan. Feedback so far: {feedback?}",
    output_key="slogan",
)
critic = LlmAgent(
    name="slogan_critic",
    model="gemini-2.5-flash",
    instruction="Judge the slogan {slogan}. If it is good, call exit_loop; else give feedback.",
    output_key="feedback",
    tools=[exit_loop],
)

root_agent = LoopAgent(name="slogan_loop", sub_agents=[writer, critic], max_iterations=5)
