"""An LlmAgent calls a FunctionNode and a whole Workflow as tools (ADK's node-as-tool)."""

from google.adk.agents import LlmAgent
from google.adk.workflow import START, FunctionNode, Workflow
from pydantic import BaseModel


class Order(BaseModel):
    item: str
    quantity: int


def price(item: str, quantity: int) -> dict:
    """Prices an order."""
    return {"item": item, "total": quantity * 3}


def check_stock(node_input: Order) -> dict:
    return {"item": node_input.item, "in_stock": node_input.quantity <= 5}


def label(node_input: dict) -> str:
    return f"{node_input['item']}: {'ok' if node_input['in_stock'] else 'backorder'}"


stock = Workflow(
    name="stock",
    description="Checks the stock for an order.",
    edges=[(START, check_stock, label)],
)

root_agent = LlmAgent(
    name="clerk",
    model="gemini-2.5-flash",
    instruction="Price orders and check stock with your tools.",
    tools=[FunctionNode(func=price), stock],
)
