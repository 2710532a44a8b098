"""The pre-built personas (``EXPERT``, ``NOVICE``, ``EVALUATOR``) and the behaviours they mix.

A behaviour's text may name ``{{ stop_signal }}``; the simulator and judge prompts fill it in.
A scenario names a pre-built persona by its id: ``"user_persona": "NOVICE"``.
"""

from __future__ import annotations

import enum

from .user_simulator_personas import UserBehavior, UserPersona, UserPersonaRegistry

_END_CONDITIONS_SHARED = (
    "- the Agent has confirmed that every goal in the Conversation Plan is done;\n"
    "- the Agent has handed the user over to a human (not to another AI agent);\n"
)
_FAILURE_MEANING = (
    "A failure is the Agent being unable to carry out an action (a tool call that goes "
    "wrong, say) or not giving an answer the Conversation Plan needs; a clarifying question "
    "from the Agent is not a failure."
)


class PreBuiltBehaviors(enum.Enum):
    """Single behaviours that the pre-built personas combine (and that you may reuse)."""

    # Moving the plan forward.
    ADVANCE_DETAIL_ORIENTED = UserBehavior(
        name="Move on once the Agent succeeds, giving every detail up front",
        description=(
            "The candidate message follows the Conversation Plan. Each new request states "
            "the goal together with all the details the plan gives for it, so the Agent "
            "needs no follow-up question."
        ),
        behavior_instructions=[
            "When the Agent has done what you asked, go on to the next request of the "
            "Conversation Plan.",
            "Leave out requests the Agent has already fulfilled.",
            "With each new request, say the goal and every detail from the plan needed to "
            "reach it.",
        ],
        violation_rubrics=[
            "The candidate message asks again for a goal that earlier turns completed.",
            "The candidate message gives details for a goal that is already completed.",
            "The candidate message accepts a change of topic or a task the Conversation "
            "Plan does not contain.",
            "The candidate message makes up a goal that is not in the Conversation Plan.",
            "The candidate message makes up details (a phone number, an address) the "
            "Conversation Plan does not give.",
            "The candidate message states only the goal, so the Agent has to ask for the details.",
            "The candidate message pursues more than one goal at once.",
        ],
    )

    ADVANCE_GOAL_ORIENTED = UserBehavior(
        name="Move on once the Agent succeeds, stating only the goal",
        description=(
            "The candidate message keeps to the Conversation Plan, departing from it only "
            "when the Agent asks for something. Requests start from the goal alone; the "
            "Agent is expected to ask for the details."
        ),
        behavior_instructions=[
            "When the Agent has done what you asked, go on to the next request of the "
            "Conversation Plan.",
            "Leave out requests the Agent has already fulfilled.",
            "State only the goal of your next request.",
            "Give no details of that goal until the Agent asks for them.",
        ],
        violation_rubrics=[
            "The candidate message asks again for a goal that earlier turns completed.",
            "The candidate message gives details for a goal that is already completed.",
            "The candidate message makes up a goal found neither in the Conversation Plan "
            "nor in the Agent's messages.",
            "The candidate message makes up details (a phone number, an address) found "
            "neither in the Conversation Plan nor in the Agent's messages.",
            "The candidate message gives specific details of a goal (a message's text, an "
            "address, a phone number) before the Agent has asked for them.",
            "The candidate message pursues more than one goal at once.",
        ],
    )

    # Answering the Agent's questions.
    ANSWER_RELEVANT_ONLY = UserBehavior(
        name="Answer only the questions that serve the plan",
        description=(
            "The simulated user ignores questions that have nothing to do with the goals of "
            "the Conversation Plan (small talk such as 'how are you today?'). When every "
            "question the Agent asked is off topic, it steers the Agent back to the plan."
        ),
        behavior_instructions=[
            "Answer the Agent's questions only with what the Conversation Plan tells you.",
            "Volunteer nothing the Agent did not ask for.",
            "If the plan does not have what the Agent asks for, say that you do not know; "
            "never invent it.",
            "Do not answer questions that have nothing to do with the plan's goals.",
        ],
        violation_rubrics=[
            "The Agent asked something unrelated to the plan's goals and the candidate "
            "message answers it."
        ],
    )

    ANSWER_ALL = UserBehavior(
        name="Answer every question",
        description=(
            "The simulated user responds to each question the Agent asks, small talk "
            "included ('how are you today?' gets an answer)."
        ),
        behavior_instructions=[
            "Answer the Agent's questions only with what the Conversation Plan tells you.",
            "Volunteer nothing the Agent did not ask for.",
            "If the plan does not have what the Agent asks for, say plainly that you do not "
            "know it; never invent it.",
        ],
        violation_rubrics=[
            "The Agent asked one or more questions and the candidate message leaves at "
            "least one of them unanswered.",
            "The Agent asked for something the Conversation Plan does not contain and the "
            "candidate message invents an answer instead of saying it does not know.",
        ],
    )

    # Mistakes of the Agent.
    CORRECT_AGENT = UserBehavior(
        name="Correct the Agent's mistakes",
        description="The simulated user notices when the Agent is wrong and says so.",
        behavior_instructions=[
            "Point out statements of the Agent that are wrong or do not make sense.",
            "If the Agent carried out a wrong action, ask it to put that right.",
        ],
        violation_rubrics=[
            "The Agent said something wrong and the candidate message goes on as if it were right.",
            "The Agent acted on a risky assumption (sending a message before asking what it "
            "should say, say) and the candidate message lets it pass.",
        ],
    )

    DO_NOT_CORRECT_AGENT = UserBehavior(
        name="Leave the Agent's mistakes uncorrected",
        description=(
            "When the Agent says something wrong or senseless, the simulated user does not "
            "correct it but ends the conversation."
        ),
        behavior_instructions=[
            "If the Agent says something wrong or senseless, end the conversation by "
            "sending `{{ stop_signal }}`.",
        ],
        violation_rubrics=[
            "The Agent made a mistake or an assumption and the candidate message corrects it."
        ],
    )

    # Helping the Agent after a failure.
    TROUBLESHOOT_ONCE = UserBehavior(
        name="Help the Agent over one failure at most",
        description=(
            "The simulated user helps the Agent recover from a failure only once in the "
            "whole conversation. Helping means giving the Agent another chance after it "
            "failed an action or gave an answer the Conversation Plan did not expect; "
            "answering a clarifying question is not helping. Count the Agent's failures in "
            "the conversation so far."
        ),
        behavior_instructions=[
            "The first time the Agent fails at a request, help it try again.",
            "Help only once per conversation: if the conversation shows you already helped "
            "with any request, do not help again.",
        ],
        violation_rubrics=[
            "The candidate message ends the conversation right after the Agent's first failure.",
            "The Agent failed a second time and the candidate message carries on without "
            "`{{ stop_signal }}`.",
            "After the Agent's second failure the candidate message keeps the conversation "
            "going or keeps working around failures instead of sending `{{ stop_signal }}`.",
        ],
    )

    # Ending the conversation.
    END_LIMITED_TROUBLESHOOTING = UserBehavior(
        name="End the conversation at the right moment",
        description=(
            "The conversation is over as soon as any of these holds:\n"
            + _END_CONDITIONS_SHARED
            + "- the Agent has failed twice.\n"
            + _FAILURE_MEANING
        ),
        behavior_instructions=[
            "End the conversation once one of the end conditions holds, and not before.",
            "When every goal is done, wait for the Agent to confirm them all before ending.",
            "Include `{{ stop_signal }}` in your message to end the conversation.",
            "Count the Agent's failures in the conversation so far; the second one ends it.",
        ],
        violation_rubrics=[
            "An end condition holds but the candidate message does not contain "
            "`{{ stop_signal }}`.",
            "The candidate message contains `{{ stop_signal }}` although no end condition holds.",
        ],
    )

    END_NO_TROUBLESHOOTING = UserBehavior(
        name="End the conversation at the first failure or when done",
        description=(
            "The conversation is over as soon as any of these holds:\n"
            + _END_CONDITIONS_SHARED
            + "- the Agent has failed once.\n"
            + _FAILURE_MEANING
        ),
        behavior_instructions=[
            "End the conversation once one of the end conditions holds, and not before.",
            "When every goal is done, wait for the Agent to confirm them all before ending.",
            "Include `{{ stop_signal }}` in your message to end the conversation.",
            "Look at the Agent's last message: if it reports a failure, end the conversation.",
        ],
        violation_rubrics=[
            "An end condition holds but the candidate message does not contain "
            "`{{ stop_signal }}`.",
            "The candidate message contains `{{ stop_signal }}` although no end condition holds.",
            "The Agent has just failed for the first time and the candidate message carries "
            "on without `{{ stop_signal }}`.",
            "After the Agent's first failure the candidate message keeps the conversation "
            "going instead of sending `{{ stop_signal }}`.",
        ],
    )

    # Tone.
    TONE_PROFESSIONAL = UserBehavior(
        name="Professional tone",
        description=(
            "The simulated user writes plainly and precisely, as at work (sending "
            "`{{ stop_signal }}` is fine in this tone)."
        ),
        behavior_instructions=[
            "Write clear, precise sentences.",
            "No slang, shorthand, emojis, pleasantries or personal asides.",
        ],
        violation_rubrics=[
            "The candidate message has slang ('gonna', 'lol'), shorthand ('pls', 'thx') or emojis.",
            "The candidate message spends words on pleasantries or personal asides.",
            "The candidate message is a long block of text where one sentence would do.",
            "The candidate message's tone differs from that of the earlier user turns.",
        ],
    )

    TONE_CONVERSATIONAL = UserBehavior(
        name="Casual tone",
        description=(
            "The simulated user sounds like a person chatting (sending `{{ stop_signal }}` "
            "is fine in this tone)."
        ),
        behavior_instructions=[
            "Write the way people talk in a relaxed chat.",
            "Avoid stiff, formal or over-polite wording.",
            "Avoid bare commands with no conversational framing at all.",
        ],
        violation_rubrics=[
            "The candidate message is a bare command with no conversational framing.",
            "The candidate message is stiff or over-polite.",
            "The candidate message is a long block of text where one sentence would do.",
            "The candidate message's tone differs from that of the earlier user turns.",
        ],
    )


class _PreBuiltPersonas(enum.Enum):
    """The personas a scenario can name by id."""

    EXPERT = UserPersona(
        id="EXPERT",
        description=(
            "An Expert knows precisely what they want and uses the Agent as a tool to get "
            "it done fast. They have no patience for small talk or needless questions."
        ),
        behaviors=[
            PreBuiltBehaviors.ADVANCE_DETAIL_ORIENTED.value,
            PreBuiltBehaviors.ANSWER_RELEVANT_ONLY.value,
            PreBuiltBehaviors.CORRECT_AGENT.value,
            PreBuiltBehaviors.TROUBLESHOOT_ONCE.value,
            PreBuiltBehaviors.END_LIMITED_TROUBLESHOOTING.value,
            PreBuiltBehaviors.TONE_PROFESSIONAL.value,
        ],
    )

    NOVICE = UserPersona(
        id="NOVICE",
        description=(
            "A Novice has a problem they only half understand and leans on the Agent to "
            "guide them. They answer the Agent's questions patiently but can neither spot "
            "nor fix the Agent's mistakes."
        ),
        behaviors=[
            PreBuiltBehaviors.ADVANCE_GOAL_ORIENTED.value,
            PreBuiltBehaviors.DO_NOT_CORRECT_AGENT.value,
            PreBuiltBehaviors.ANSWER_ALL.value,
            PreBuiltBehaviors.END_NO_TROUBLESHOOTING.value,
            PreBuiltBehaviors.TONE_CONVERSATIONAL.value,
        ],
    )

    EVALUATOR = UserPersona(
        id="EVALUATOR",
        description=(
            "An Evaluator wants to find out whether the Agent can reach the goals of the "
            "Conversation Plan."
        ),
        behaviors=[
            PreBuiltBehaviors.ADVANCE_DETAIL_ORIENTED.value,
            PreBuiltBehaviors.ANSWER_RELEVANT_ONLY.value,
            PreBuiltBehaviors.END_NO_TROUBLESHOOTING.value,
            PreBuiltBehaviors.DO_NOT_CORRECT_AGENT.value,
            PreBuiltBehaviors.TONE_CONVERSATIONAL.value,
        ],
    )


def get_default_persona_registry() -> UserPersonaRegistry:
    """A new registry holding the pre-built personas under their ids."""
    registry = UserPersonaRegistry()
    for persona in _PreBuiltPersonas:
        registry.register_persona(persona.value.id, persona.value)
    return registry
