"""A node that raises: the workflow stops with an error."""

from google.adk.workflow import START, Workflow


def load_record(node_input) -> dict:
    return {"id": 7}


def validate_record(node_input: dict) -> dict:
    raise ValueError(f"record {node_input['id']} has no owner")


def store_record(node_input: dict) -> str:
    return "stored"


root_agent = Workflow(
    name="records",
    edges=[(START, load_record, validate_record, store_record)],
)
