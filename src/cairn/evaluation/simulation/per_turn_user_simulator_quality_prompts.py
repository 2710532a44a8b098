"""The judge's instructions for ``per_turn_user_simulator_quality_v1`` (Jinja templates).

The judge sees the plan, the conversation before the message it judges, the message itself
and, when the scenario has one, the persona's behaviours with their violation rubrics. It
answers in JSON whose ``"is_valid"`` field (true or false) the metric reads.
"""

from __future__ import annotations

from ._prompt_templates import render_template
from .user_simulator_personas import UserPersona

_INTRODUCTION = """\
You are reviewing a Simulated User: a model that plays the user in a conversation with an AI \
Agent, so that the Agent can be tested. Decide whether one message of the Simulated User, the \
Candidate Message, is the message that user should have sent at this point of the \
conversation.

The Conversation Plan lists, in order, the goals the Simulated User pursues and the details \
it knows for them. It is what the user wants, not a script.

The Conversation So Far is the exchange before the Candidate Message. The Simulated User may \
have had to put the Agent back on track in it. The conversation is over only once the \
Simulated User sends `{{ stop_signal }}`; until then more turns may follow.
"""

_ANSWER_FORMAT = """\
The Candidate Message passes unless it commits one of the violations below; if it commits \
any, it fails.

{{ criteria }}
Answer with JSON alone, in this shape:
{
  "criteria": [
    {"name": "NAME OF A CRITERION", "reasoning": "why it passes or fails", "passes": true},
    ...
  ],
  "is_valid": true
}
with one entry per criterion, and "is_valid" true only when every criterion passes (false \
otherwise).

# Conversation Plan

{{ conversation_plan }}

# Conversation So Far

{{ conversation_history }}
{% if persona %}
# Persona

{{ persona.description }}
(The criteria above already say how this persona should behave. Where the persona and the \
Conversation Plan disagree, the plan wins.)
{% endif %}
# Candidate Message

{{ generated_user_response }}
"""

_DEFAULT_CRITERIA = """\
## FOLLOWS_THE_PLAN
Fails if the candidate message asks again for a goal already completed, or gives details for \
one; accepts a change of topic or a task the plan does not contain; or makes up a goal or a \
detail (a phone number, an address) that the plan does not give.

## ENDS_AT_THE_RIGHT_TIME
Fails if the conversation should be over but the candidate message lacks \
`{{ stop_signal }}`; if it sends `{{ stop_signal }}` while goals of the plan are still open \
and the Agent has not failed; or if the Agent handed the user to a human and the candidate \
message carries on instead of sending `{{ stop_signal }}`.

## STATES_GOALS_NOT_DATA
Fails if the candidate message gives specific details of a goal (a message's text, an \
address, a phone number) before the Agent asked for them, or pursues more than one goal at \
once.

## HELPS_THE_AGENT_ONCE
(Count the Agent's failures in the conversation so far.) Fails if the candidate message ends \
the conversation right after the Agent's first failure, or carries on without \
`{{ stop_signal }}` after the Agent's second failure.

## ANSWERS_WHAT_IS_ASKED
Fails if the Agent asked questions and the candidate message leaves any unanswered, or if \
the Agent asked for something the plan does not contain and the candidate message invents an \
answer instead of saying it does not know.

## CATCHES_MISTAKES
Fails if the Agent said something wrong and the candidate message goes on as if it were \
right, or if the Agent acted on a risky assumption (sending a message before asking what it \
should say, say) and the candidate message lets it pass.

## SOUNDS_HUMAN
Fails if the candidate message is convoluted or full of jargon, a bare command with no \
conversational framing, stiff or over-polite, or a long block of text where one sentence \
would do.
"""

_PERSONA_CRITERIA = """\
{% for behavior in persona.behaviors %}\
## {{ behavior.name | render_string_filter }}
{{ behavior.description | render_string_filter }}
Fails if any of these holds:
{{ behavior.get_violation_rubrics_str() | render_string_filter }}

{% endfor %}"""


def get_per_turn_user_simulator_quality_prompt(
    conversation_plan: str,
    conversation_history: str,
    generated_user_response: str,
    stop_signal: str,
    user_persona: UserPersona | None = None,
) -> str:
    """The judge's instructions for one message of the simulated user."""
    variables: dict[str, object] = {
        "conversation_plan": conversation_plan,
        "conversation_history": conversation_history,
        "generated_user_response": generated_user_response,
        "stop_signal": stop_signal,
        "persona": user_persona,
    }
    criteria_template = _DEFAULT_CRITERIA if user_persona is None else _PERSONA_CRITERIA
    variables["criteria"] = render_template(criteria_template, variables)
    return render_template(_INTRODUCTION + "\n" + _ANSWER_FORMAT, variables)
