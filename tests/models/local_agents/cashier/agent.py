"""Refunds, each after a human confirms it: the call is forced, the follow-up is text."""

from tests.models.local_agents.local import SETTINGS, force, local_model, ran

from cairn import Agent, FunctionTool


def refund(order: str) -> dict[str, object]:
    """Refund an order to the customer."""
    ran("refund")
    return {"order": order, "refunded": True}


root_agent = Agent(
    name="cashier",
    model=local_model(),
    instruction="You refund orders with the refund tool.",
    tools=[FunctionTool(refund, require_confirmation=True)],
    generate_content_config=SETTINGS,
    before_model_callback=force("refund"),
)
