"""A Workflow of three function nodes in a chain; each output is the next one's input."""

from google.adk.workflow import START, Workflow


def parse_order(node_input) -> dict:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    quantity, item = text.split(" ", 1)
    return {"item": item, "quantity": int(quantity)}


def price_order(node_input: dict) -> dict:
    return {**node_input, "total": node_input["quantity"] * 3}


def confirm_order(node_input: dict) -> str:
    return f"{node_input['quantity']} x {node_input['item']}: {node_input['total']} EUR"


root_agent = Workflow(
    name="order_flow",
    edges=[(START, parse_order, price_order, confirm_order)],
)
