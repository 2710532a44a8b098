"""An App whose root is a Workflow."""

from google.adk.apps import App
from google.adk.workflow import START, Workflow


def shout(node_input) -> str:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return text.upper() + "!"


root_agent = Workflow(name="shouter", edges=[(START, shout)])

app = App(name="shout_app", root_agent=root_agent)
