"""The instructions a model-driven simulated user gets each turn (Jinja templates).

A template receives ``stop_signal`` (what to send when the conversation is over),
``conversation_plan``, ``conversation_history`` and, when the scenario has a persona,
``persona`` (a UserPersona).
"""

from __future__ import annotations

from ._prompt_templates import render_template, template_names_variables
from .user_simulator_personas import UserPersona

_PLAN_AND_HISTORY = """\
# Conversation Plan

{{ conversation_plan }}

# Conversation So Far

{{ conversation_history }}
"""

_DEFAULT_TEMPLATE = (
    """\
You are playing the user in a conversation with an AI Agent, so that the Agent can be tested.

What you write next must follow from the Agent's latest message. The Conversation Plan below \
tells you what you want and what you know; it is not a script to recite.

# How to choose your reply

First work out what the Agent's latest message does: does it ask you something, report that \
something worked or failed, or say something wrong or unexpected? Then do exactly one of these:

- ANSWER: the Agent asked you something. Answer with what the Conversation Plan tells you and \
nothing more. If the plan does not say, tell the Agent you do not know; never invent facts. \
Do not move on to your next request in the same message.
- ADVANCE: the Agent did what you asked. Make the next request of the Conversation Plan, \
skipping any that the Agent has already taken care of.
- CHANGE COURSE: your current request is not done yet and the Conversation Plan tells you to \
change it. Say so naturally.
- CORRECT: the Agent made a mistake or said something that does not add up. Point it out and \
ask for it to be fixed. The first time the Agent fails at a request, ask it to try again.
- FINISH: the conversation is over when the Agent has done every request of the plan, when it \
has failed at a request twice, when it did something wrong and says it cannot undo it, or \
when it hands you over to a human (not to another AI agent). Then reply with \
`{{ stop_signal }}` and nothing else. Do not finish before one of these holds.

Write only the user's next message, as the user would type it.

"""
    + _PLAN_AND_HISTORY
)

_PERSONA_TEMPLATE = (
    """\
You are playing the user in a conversation with an AI Agent, so that the Agent can be tested, \
and you play that user as the Persona below.

What you write next must follow from the Agent's latest message. The Conversation Plan below \
tells you what you want and what you know; it is not a script to recite. Where the Persona \
and the Conversation Plan disagree, the Conversation Plan wins.

# Persona

{{ persona.description }}

How this persona behaves:
{% for behavior in persona.behaviors %}
## {{ behavior.name | render_string_filter }}

{{ behavior.description | render_string_filter }}

What to do:
{{ behavior.get_behavior_instructions_str() | render_string_filter }}
{% endfor %}
When the conversation is over, reply with `{{ stop_signal }}`.

Write only the user's next message, as the user would type it.

"""
    + _PLAN_AND_HISTORY
)

_REQUIRED = ["stop_signal", "conversation_plan", "conversation_history"]


def is_valid_user_simulator_template(template_str: str, required_params: list[str]) -> bool:
    """Whether ``template_str`` is valid Jinja that uses every variable in ``required_params``."""
    return template_names_variables(template_str, required_params)


def _template(custom_instructions: str | None, user_persona: UserPersona | None) -> str:
    if custom_instructions is None:
        return _DEFAULT_TEMPLATE if user_persona is None else _PERSONA_TEMPLATE
    if user_persona is not None and not is_valid_user_simulator_template(
        custom_instructions, [*_REQUIRED, "persona"]
    ):
        raise ValueError(
            "The scenario has a user persona, so the user simulator's custom_instructions "
            "must use each of {{ stop_signal }}, {{ conversation_plan }}, "
            "{{ conversation_history }} and {{ persona }} (Jinja syntax); add the missing "
            "ones, or remove the persona from the scenario."
        )
    return custom_instructions


def get_llm_backed_user_simulator_prompt(
    conversation_plan: str,
    conversation_history: str,
    stop_signal: str,
    custom_instructions: str | None = None,
    user_persona: UserPersona | None = None,
) -> str:
    """The simulated user's instructions for this turn: ``custom_instructions`` when given,
    else cairn's template (with the persona's behaviours when there is a persona)."""
    variables: dict[str, object] = {
        "stop_signal": stop_signal,
        "conversation_plan": conversation_plan,
        "conversation_history": conversation_history,
    }
    if user_persona is not None:
        variables["persona"] = user_persona
    return render_template(_template(custom_instructions, user_persona), variables)
