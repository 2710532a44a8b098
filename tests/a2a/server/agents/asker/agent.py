"""Asks which color, then answers with it: a workflow that pauses for input."""

from cairn.workflow import START, RequestInput, Workflow, node


@node(rerun_on_resume=True)
def ask(node_input: str, ctx):  # type: ignore[no-untyped-def]
    if not ctx.resume_inputs:
        yield RequestInput(message="Which color?", payload={"topic": node_input})
        return
    [answer] = ctx.resume_inputs.values()
    yield f"you chose {answer}"


root_agent = Workflow(name="asker", description="Asks which color.", edges=[(START, ask)])
