"""A tool that writes session state through tool_context.state."""

from google.adk.agents import Agent
from google.adk.tools.tool_context import ToolContext


def add_to_cart(item: str, quantity: int, tool_context: ToolContext) -> dict:
    """Adds an item to the shopping cart."""
    cart = dict(tool_context.state.get("cart", {}))
    cart[item] = cart.get(item, 0) + quantity
    tool_context.state["cart"] = cart
    tool_context.state["last_item"] = item
    return {"cart_size": sum(cart.values())}


root_agent = Agent(
    name="shop_agent",
    model="gemini-2.5-flash",
    instruction="Keep the user's cart up to date. The cart holds: {cart?}",
    tools=[add_to_cart],
)
