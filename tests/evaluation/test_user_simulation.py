"""User simulation: the static and model-driven simulated users, personas, provider, config."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn.evaluation.conversation_scenarios import ConversationScenario
from cairn.evaluation.errors import EvalFileError, UserSimulationError
from cairn.evaluation.eval_case import EvalCase, Invocation
from cairn.evaluation.eval_config import EvalConfig, load_eval_config
from cairn.evaluation.local_eval_sets_manager import load_eval_set_from_file
from cairn.evaluation.simulation.llm_backed_user_simulator import (
    LlmBackedUserSimulator,
    LlmBackedUserSimulatorConfig,
)
from cairn.evaluation.simulation.llm_backed_user_simulator_prompts import (
    get_llm_backed_user_simulator_prompt,
    is_valid_user_simulator_template,
)
from cairn.evaluation.simulation.pre_built_personas import (
    PreBuiltBehaviors,
    get_default_persona_registry,
)
from cairn.evaluation.simulation.static_user_simulator import StaticUserSimulator
from cairn.evaluation.simulation.user_simulator import (
    _SIMULATOR_BY_CONFIG_TYPE,
    BaseUserSimulatorConfig,
    NextUserMessage,
    Status,
    UserSimulator,
    register_user_simulator,
)
from cairn.evaluation.simulation.user_simulator_personas import UserBehavior, UserPersona
from cairn.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from cairn.events.event import Event
from cairn.models import LLMRegistry, LlmRequest, LlmResponse
from cairn.testing import ScriptedLlm

ADK_PYTHON = Path(__file__).resolve().parents[2] / "bench" / ".peers" / "adk" / "bin" / "python"
PLAN = "Book a one-way flight from SFO to LAX next Tuesday morning, under $150, then stop."
START = "I need to book a flight."


def said(author: str, text: str) -> Event:
    role = "user" if author == "user" else "model"
    return Event(author=author, content=types.Content(role=role, parts=[types.Part(text=text)]))


def text_of(message: NextUserMessage) -> str:
    assert message.status == Status.SUCCESS and message.user_message is not None
    return "".join(p.text or "" for p in message.user_message.parts or [])


def prompt_of(request: LlmRequest) -> str:
    assert len(request.contents) == 1 and request.contents[0].role == "user"
    return "".join(p.text or "" for p in request.contents[0].parts or [])


@pytest.fixture
def user_model(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[ScriptedLlm]]:
    """Registers model name `scripted-user` as a ScriptedLlm with the given replies; returns
    the models made (one per simulator), whose `requests` the tests read."""

    def register(*replies: Any) -> list[ScriptedLlm]:
        made: list[ScriptedLlm] = []

        class _UserLlm(ScriptedLlm):
            @classmethod
            def supported_models(cls) -> list[str]:
                return [r"scripted-user"]

            def model_post_init(self, context: Any, /) -> None:
                self.script = list(replies)
                made.append(self)

        monkeypatch.setattr(LLMRegistry, "_registered", list(LLMRegistry._registered))
        LLMRegistry.register(_UserLlm)
        return made

    return register


def simulator(
    scenario: ConversationScenario | None = None, **config: Any
) -> LlmBackedUserSimulator:
    return LlmBackedUserSimulator(
        config=LlmBackedUserSimulatorConfig(model="scripted-user", **config),
        conversation_scenario=scenario
        or ConversationScenario(starting_prompt=START, conversation_plan=PLAN),
    )


# --- the model-driven simulated user -------------------------------------------------------


async def test_the_first_message_is_the_starting_prompt_without_asking_the_model(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model()
    first = await simulator().get_next_user_message([])
    assert text_of(first) == START
    assert first.user_message is not None and first.user_message.role == "user"
    assert models[0].requests == []


async def test_later_messages_come_from_the_model_shown_plan_and_conversation(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model("From SFO to LAX, next Tuesday.", "A morning one under $150, please.")
    user = simulator()
    history = [said("user", START)]
    await user.get_next_user_message([])
    history.append(said("travel_agent", "Where are you flying from and to?"))
    second = await user.get_next_user_message(history)
    assert text_of(second) == "From SFO to LAX, next Tuesday."
    history += [said("user", text_of(second)), said("travel_agent", "Any time of day?")]
    third = await user.get_next_user_message(history)
    assert text_of(third) == "A morning one under $150, please."

    first_prompt, second_prompt = (prompt_of(r) for r in models[0].requests)
    assert PLAN in first_prompt and PLAN in second_prompt
    assert "</finished>" in first_prompt  # the stop signal the model is told to send
    assert "travel_agent: Where are you flying from and to?" in first_prompt
    assert "Any time of day?" not in first_prompt
    # Each turn shows the whole conversation so far, the agent's latest reply included.
    assert (
        "user: I need to book a flight.\n\n"
        "travel_agent: Where are you flying from and to?\n\n"
        "user: From SFO to LAX, next Tuesday.\n\n"
        "travel_agent: Any time of day?"
    ) in second_prompt
    assert all(r.model == "scripted-user" for r in models[0].requests)


async def test_the_model_configuration_is_sent_with_each_request(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model("ok")
    user = simulator(model_configuration=types.GenerateContentConfig(temperature=0.25))
    await user.get_next_user_message([])
    await user.get_next_user_message([said("agent", "Hello?")])
    assert models[0].requests[0].config.temperature == 0.25


async def test_the_stop_signal_in_any_case_ends_the_conversation(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    user_model("Thanks, that is all. </FINISHED>")
    user = simulator()
    await user.get_next_user_message([])
    ended = await user.get_next_user_message([said("user", START), said("agent", "Booked.")])
    assert ended == NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)


async def test_the_turn_limit_counts_the_starting_prompt(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model("second message")
    user = simulator(max_allowed_invocations=2)
    statuses = [(await user.get_next_user_message([said("agent", "?")])).status for _ in range(3)]
    assert statuses == [Status.SUCCESS, Status.SUCCESS, Status.TURN_LIMIT_REACHED]
    assert len(models[0].requests) == 1  # the limit is checked before the model is asked


async def test_a_limit_of_minus_one_means_no_limit(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    user_model(*[f"message {i}" for i in range(30)])
    user = simulator(max_allowed_invocations=-1)
    statuses = {(await user.get_next_user_message([])).status for _ in range(31)}
    assert statuses == {Status.SUCCESS}


async def test_an_empty_model_reply_is_an_error_naming_the_model(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    thought_only = types.Content(role="model", parts=[types.Part(text="hmm", thought=True)])
    user_model(thought_only, LlmResponse(error_code="SAFETY", error_message="blocked"))
    user = simulator()
    await user.get_next_user_message([])
    with pytest.raises(UserSimulationError, match=r"`scripted-user`.*only thoughts"):
        await user.get_next_user_message([said("agent", "Hi")])
    with pytest.raises(UserSimulationError, match=r"error SAFETY"):
        await user.get_next_user_message([said("agent", "Hi")])


async def test_thoughts_and_tool_calls_are_left_out_of_the_conversation_unless_asked(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    call = types.Part(function_call=types.FunctionCall(name="find_flights", args={"to": "LAX"}))
    result = types.Part(
        function_response=types.FunctionResponse(name="find_flights", response={"n": 2})
    )
    events = [
        said("user", START),
        Event(author="agent", content=types.Content(role="model", parts=[call])),
        Event(author="agent", content=types.Content(role="user", parts=[result])),
        Event(
            author="agent",
            content=types.Content(
                role="model",
                parts=[types.Part(text="secret plan", thought=True), types.Part(text="Found 2.")],
            ),
        ),
    ]
    models = user_model("ok", "ok")
    plain, with_tools = simulator(), simulator(include_function_calls=True)
    for user in (plain, with_tools):
        await user.get_next_user_message([])
        await user.get_next_user_message(events)
    plain_prompt, tools_prompt = (prompt_of(m.requests[0]) for m in models)
    assert "user: I need to book a flight.\n\nagent: Found 2." in plain_prompt
    assert "find_flights" not in plain_prompt and "secret plan" not in plain_prompt
    assert "agent called tool 'find_flights' with args: {'to': 'LAX'}" in tools_prompt
    assert "Tool 'find_flights' returned: {'n': 2}" in tools_prompt
    assert "secret plan" not in tools_prompt


async def test_a_persona_s_description_and_behaviours_are_in_the_prompt(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model("ok")
    scenario = ConversationScenario(
        starting_prompt=START, conversation_plan=PLAN, user_persona="NOVICE"
    )
    user = simulator(scenario)
    await user.get_next_user_message([])
    await user.get_next_user_message([said("agent", "Hi")])
    prompt = prompt_of(models[0].requests[0])
    novice = get_default_persona_registry().get_persona("NOVICE")
    assert novice.description in prompt and PLAN in prompt
    for behavior in novice.behaviors:
        assert behavior.name in prompt
        for instruction in behavior.behavior_instructions:
            # A behaviour naming the stop signal shows the signal itself.
            assert instruction.replace("{{ stop_signal }}", "</finished>") in prompt
    assert "{{" not in prompt


async def test_custom_instructions_replace_the_prompt(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    models = user_model("ok")
    custom = (
        "Plan: {{ conversation_plan }} | So far: {{ conversation_history }} | "
        "End: {{ stop_signal }}"
    )
    user = simulator(custom_instructions=custom)
    await user.get_next_user_message([])
    await user.get_next_user_message([said("agent", "Hi")])
    assert (
        prompt_of(models[0].requests[0]) == f"Plan: {PLAN} | So far: agent: Hi | End: </finished>"
    )


def test_custom_instructions_must_use_the_template_variables() -> None:
    with pytest.raises(ValueError, match="conversation_history"):
        LlmBackedUserSimulatorConfig(
            custom_instructions="{{ stop_signal }} {{ conversation_plan }}"
        )
    assert not is_valid_user_simulator_template("{{ stop_signal ", ["stop_signal"])
    assert is_valid_user_simulator_template("{{ a }}{{ b.c }}", ["a", "b"])
    with pytest.raises(ValueError, match=r"persona"):
        get_llm_backed_user_simulator_prompt(
            conversation_plan=PLAN,
            conversation_history="",
            stop_signal="</finished>",
            custom_instructions=(
                "{{ stop_signal }}{{ conversation_plan }}{{ conversation_history }}"
            ),
            user_persona=get_default_persona_registry().get_persona("EXPERT"),
        )


def test_the_model_name_is_resolved_through_the_model_registry() -> None:
    with pytest.raises(ValueError, match="no model class serves 'no-such-model'"):
        LlmBackedUserSimulator(
            config=LlmBackedUserSimulatorConfig(model="no-such-model"),
            conversation_scenario=ConversationScenario(
                starting_prompt=START, conversation_plan=PLAN
            ),
        )


def test_the_simulator_reads_a_base_config_carrying_its_fields(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    user_model()
    config = BaseUserSimulatorConfig.model_validate(
        {"type": "llm_backed", "model": "scripted-user", "maxAllowedInvocations": 3}
    )
    user = LlmBackedUserSimulator(
        config=config,
        conversation_scenario=ConversationScenario(starting_prompt=START, conversation_plan=PLAN),
    )
    assert user._llm_config.max_allowed_invocations == 3
    with pytest.raises(ValueError, match="LlmBackedUserSimulatorConfig"):
        LlmBackedUserSimulator(
            config=BaseUserSimulatorConfig.model_validate({"type": "llm_backed", "model": 5}),
            conversation_scenario=ConversationScenario(
                starting_prompt=START, conversation_plan=PLAN
            ),
        )


def test_a_message_is_given_exactly_on_success() -> None:
    hello = types.Content(role="user", parts=[types.Part(text="hi")])
    with pytest.raises(ValueError, match="needs a user_message"):
        NextUserMessage(status=Status.SUCCESS)
    with pytest.raises(ValueError, match="has a user_message"):
        NextUserMessage(status=Status.TURN_LIMIT_REACHED, user_message=hello)


# --- the static simulated user -------------------------------------------------------------


def turn(text: str) -> Invocation:
    return Invocation(user_content=types.Content(role="user", parts=[types.Part(text=text)]))


async def test_the_static_simulator_replays_the_user_turns_then_stops() -> None:
    user = StaticUserSimulator(static_conversation=[turn("one"), turn("two")])
    messages = [await user.get_next_user_message([]) for _ in range(3)]
    assert [text_of(m) for m in messages[:2]] == ["one", "two"]
    assert messages[2].status == Status.STOP_SIGNAL_DETECTED
    assert user.get_simulation_evaluator() is None


# --- choosing the simulator ----------------------------------------------------------------


def scenario_case() -> EvalCase:
    return EvalCase(
        eval_id="scenario",
        conversation_scenario=ConversationScenario(starting_prompt=START, conversation_plan=PLAN),
    )


def test_a_written_conversation_gets_the_static_simulator() -> None:
    case = EvalCase(eval_id="written", conversation=[turn("one")])
    provided = UserSimulatorProvider(LlmBackedUserSimulatorConfig(model="scripted-user")).provide(
        case
    )
    assert isinstance(provided, StaticUserSimulator)
    assert provided.static_conversation == case.conversation


def test_a_scenario_gets_the_configured_simulator(
    user_model: Callable[..., list[ScriptedLlm]],
) -> None:
    user_model()
    provided = UserSimulatorProvider(
        LlmBackedUserSimulatorConfig(model="scripted-user", max_allowed_invocations=4)
    ).provide(scenario_case())
    assert isinstance(provided, LlmBackedUserSimulator)
    assert provided._llm_config.max_allowed_invocations == 4


def test_without_a_config_a_scenario_gets_the_model_driven_simulator_with_its_defaults() -> None:
    provided = UserSimulatorProvider().provide(scenario_case())
    assert isinstance(provided, LlmBackedUserSimulator)
    assert provided._llm_config.model == "gemini-2.5-flash"
    assert provided._llm_config.max_allowed_invocations == 20


def test_a_registered_simulator_serves_its_config_type() -> None:
    class EchoConfig(BaseUserSimulatorConfig):
        type: str | None = "echo"

    class EchoSimulator(UserSimulator):
        def __init__(
            self, *, config: BaseUserSimulatorConfig, conversation_scenario: ConversationScenario
        ) -> None:
            super().__init__(config, config_type=EchoConfig)
            self.scenario = conversation_scenario

    with pytest.raises(ValueError, match=r"No user simulator is registered for EchoConfig"):
        UserSimulatorProvider(EchoConfig()).provide(scenario_case())
    register_user_simulator(EchoConfig, EchoSimulator)
    try:
        provided = UserSimulatorProvider(EchoConfig()).provide(scenario_case())
    finally:
        del _SIMULATOR_BY_CONFIG_TYPE[EchoConfig]
    assert isinstance(provided, EchoSimulator)
    assert provided.scenario.starting_prompt == START


def test_the_provider_refuses_what_is_not_a_simulator_config() -> None:
    with pytest.raises(ValueError, match="not a dict"):
        UserSimulatorProvider({"model": "x"})  # type: ignore[arg-type]


# --- the eval config's user_simulator_config -----------------------------------------------


def test_a_config_with_type_loads_as_that_simulator_s_config() -> None:
    config = EvalConfig.model_validate(
        {"userSimulatorConfig": {"type": "llm_backed", "model": "m", "maxAllowedInvocations": 5}}
    )
    assert config.user_simulator_config == LlmBackedUserSimulatorConfig(
        model="m", max_allowed_invocations=5
    )


@pytest.mark.parametrize("key", ["user_simulator_config", "userSimulatorConfig"])
def test_a_config_without_type_loads_as_the_model_driven_one(key: str) -> None:
    config = EvalConfig.model_validate({key: {"model": "m", "include_function_calls": True}})
    assert isinstance(config.user_simulator_config, LlmBackedUserSimulatorConfig)
    assert config.user_simulator_config.model == "m"
    assert config.user_simulator_config.include_function_calls is True
    assert config.user_simulator_config.max_allowed_invocations == 20
    again = EvalConfig.model_validate_json(config.model_dump_json(by_alias=True))
    assert again == config


def write(tmp_path: Path, content: dict[str, Any]) -> str:
    path = tmp_path / "test_config.json"
    path.write_text(json.dumps(content))
    return str(path)


def test_an_unknown_type_is_a_file_error_naming_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, {"criteria": {}, "user_simulator_config": {"type": "llm_audio"}})
    with pytest.raises(EvalFileError, match=r"'llm_backed'") as raised:
        load_eval_config(path)
    assert raised.value.field == "user_simulator_config"
    assert raised.value.path == path


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"maxAllowedInvocations": "many"}, "user_simulator_config.max_allowed_invocations"),
        ({"max_allowed_invocation": 3}, "user_simulator_config.max_allowed_invocation"),
        ({"custom_instructions": "{{ stop_signal }}"}, "user_simulator_config.custom_instructions"),
    ],
)
def test_a_bad_setting_is_a_file_error_naming_it(
    tmp_path: Path, settings: dict[str, Any], field: str
) -> None:
    path = write(tmp_path, {"userSimulatorConfig": settings})
    with pytest.raises(EvalFileError, match="user simulator config") as raised:
        load_eval_config(path)
    assert raised.value.field == field


# --- personas by id ------------------------------------------------------------------------


def test_a_scenario_names_a_pre_built_persona_by_id() -> None:
    scenario = ConversationScenario.model_validate(
        {"startingPrompt": START, "conversationPlan": PLAN, "userPersona": "EXPERT"}
    )
    expert = scenario.user_persona
    assert expert is not None and expert.id == "EXPERT"
    assert list(expert.behaviors) == [
        PreBuiltBehaviors.ADVANCE_DETAIL_ORIENTED.value,
        PreBuiltBehaviors.ANSWER_RELEVANT_ONLY.value,
        PreBuiltBehaviors.CORRECT_AGENT.value,
        PreBuiltBehaviors.TROUBLESHOOT_ONCE.value,
        PreBuiltBehaviors.END_LIMITED_TROUBLESHOOTING.value,
        PreBuiltBehaviors.TONE_PROFESSIONAL.value,
    ]


def test_the_pre_built_personas_are_adk_s() -> None:
    registry = get_default_persona_registry()
    assert [p.id for p in registry.get_registered_personas()] == ["EXPERT", "NOVICE", "EVALUATOR"]
    assert len(registry.get_persona("NOVICE").behaviors) == 5
    assert len(registry.get_persona("EVALUATOR").behaviors) == 5
    assert len(PreBuiltBehaviors) == 11


def test_an_unknown_persona_id_names_the_pre_built_ones() -> None:
    with pytest.raises(ValueError, match=r"`CRITIC` is not a pre-built persona.*EXPERT, NOVICE"):
        ConversationScenario(starting_prompt=START, conversation_plan=PLAN, user_persona="CRITIC")


def test_an_eval_set_names_personas_by_id(tmp_path: Path) -> None:
    def case(persona: str) -> dict[str, Any]:
        scenario = {"startingPrompt": START, "conversationPlan": PLAN, "userPersona": persona}
        return {"eval_id": persona, "conversation_scenario": scenario}

    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case("EVALUATOR")]}))
    [loaded] = load_eval_set_from_file(str(path), "s").eval_cases
    assert loaded.conversation_scenario is not None
    assert loaded.conversation_scenario.user_persona == (
        get_default_persona_registry().get_persona("EVALUATOR")
    )
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [case("EVALUATOR"), case("X")]}))
    with pytest.raises(EvalFileError, match="`X` is not a pre-built persona") as raised:
        load_eval_set_from_file(str(path), "s")
    assert raised.value.field == "eval_cases[1].conversation_scenario.user_persona"


def test_a_persona_written_out_is_kept_as_written() -> None:
    persona = UserPersona(
        id="TERSE",
        description="Says little.",
        behaviors=[
            UserBehavior(
                name="Short", description="d", behavior_instructions=["i"], violation_rubrics=["v"]
            )
        ],
    )
    scenario = ConversationScenario(
        starting_prompt=START, conversation_plan=PLAN, user_persona=persona
    )
    assert scenario.user_persona == persona


# --- against google-adk itself --------------------------------------------------------------


def run_adk(script: str, stdin: str = "") -> Any:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name(script))],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_pre_built_personas_combine_the_behaviours_adk_s_do() -> None:
    def member(behavior: UserBehavior) -> str:
        return next(m.name for m in PreBuiltBehaviors if m.value == behavior)

    personas = get_default_persona_registry().get_registered_personas()
    ours = {p.id: [member(b) for b in p.behaviors] for p in personas}
    assert ours == run_adk("adk_personas.py")


@pytest.mark.parametrize(
    "written",
    [
        {"userSimulatorConfig": {"model": "m", "maxAllowedInvocations": 4}},
        {"user_simulator_config": {"type": "llm_backed", "include_function_calls": True}},
    ],
)
def test_adk_reads_a_user_simulator_config_as_cairn_does(written: dict[str, Any]) -> None:
    text = json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}, **written})
    ours = EvalConfig.model_validate_json(text).model_dump(mode="json", exclude_none=True)
    request = json.dumps({"model": "EvalConfig", "json": text, "dump": {"exclude_none": True}})
    assert run_adk("adk_roundtrip.py", request) == ours
