"""A node runs other nodes dynamically with ctx.run_node (run ids from its path)."""

from google.adk.workflow import START, Workflow, node


def double(node_input: int) -> int:
    return node_input * 2


def describe(node_input: int) -> str:
    return f"the total is {node_input}"


@node(rerun_on_resume=True)
async def orchestrate(ctx, node_input):
    total = 0
    for number in (1, 2, 3):
        total += await ctx.run_node(double, node_input=number)
    return await ctx.run_node(describe, node_input=total, run_id="summary")


def finish(node_input: str) -> str:
    return node_input.upper()


root_agent = Workflow(name="dynamic", edges=[(START, orchestrate, finish)])
