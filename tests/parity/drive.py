"""Run the parity apps on one framework and print what they did, normalized, as JSON.

    <python> tests/parity/drive.py --framework adk|cairn [app ...]

With ``adk`` (inside google-adk 2.13.0's own venv) each ``apps/<name>/agent.py`` is
imported exactly as written. With ``cairn`` (in the project venv) the same source is
loaded with ``google.adk`` rewritten to ``cairn`` and nothing else, as a porting user
does. This file imports neither framework at module level, so one copy serves both.

Each app's ``script.py`` (plain data, no framework import) gives the user turns and, per
agent name, the fake model's replies. Every LlmAgent's model is replaced by one scripted
instance per agent name (the class's ``canonical_model`` is patched, so agents inside
workflows, AgentTools and copies are covered); what each agent's model would have been is
recorded under ``models``.

Script keys: ``TURNS`` (list), ``REPLIES`` ({agent: [reply, ...]}), optional ``STATE``
(initial session state), ``RUNNER`` ("agent", "node" or "app"; "app" when agent.py defines
``app``), ``APP_NAME``, ``NODE_PATHS`` (keep events' node_info.path: workflow apps).

A turn is a str (a user message), or a dict:
  {"text": "...", "session": "s2"}                  a user message to another session
  {"respond": "tool_name", "response": {...}}       a FunctionResponse to the latest call
                                                    of that name (its id), as a client sends
  {"memory": "add_session"}                         memory_service.add_session_to_memory
A reply is a str (text), {"call": name, "args": {...}} or a list of them (function calls
in one response), {"json": {...}} (its JSON as text) or {"text": ..., "calls": [...]}.

Printed per app: ``turns`` (the events each run_async yielded, and any exception),
``sessions`` (stored events, final state, artifacts), ``model_calls`` (what each model call
was shown), ``models`` (what each agent's model resolved to) and ``unused_replies``.
Normalized away, as incidental: event, invocation and function-call ids (renamed call-1,
call-2, ... in order of appearance, so links stay visible), uuids inside branches,
timestamps, usage, function-call ids inside model requests (ADK strips them), node paths
outside workflow apps, and framework-worded text: confirmation hints, retry plugins'
guidance, the system instruction beyond the app's own instruction (identity and transfer
paragraphs), and the wording of "For context:" turns and past-conversation blocks (reduced
to who did what).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.abc
import importlib.util
import json
import re
import sys
import traceback
import types as pytypes
from pathlib import Path
from typing import Any

APPS = Path(__file__).resolve().parent / "apps"
SURFACE = APPS.parent.parent / "compat" / "adk_surface.json"  # ADK's public module paths
USER = "user-1"

# ---------------------------------------------------------------------------------------
# Loading an app


def load_app(framework: str, name: str) -> pytypes.ModuleType:
    """The app's agent.py as a module: imported as written, or rewritten for cairn."""
    path = APPS / name / "agent.py"
    module_name = f"parity_apps_{framework}_{name}"
    if framework == "adk":
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    if not any(isinstance(finder, PortedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, PortedModules())
    source = path.read_text().replace("google.adk", "cairn")
    module = pytypes.ModuleType(module_name)
    module.__file__ = str(path)
    sys.modules[module_name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


class PortedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The apps' own modules (``apps.<app>.<module>``, e.g. the functions a YAML config
    names) imported for cairn with ``google.adk`` rewritten to ``cairn``, as agent.py is."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        parts = fullname.split(".")
        if len(parts) < 3 or parts[0] != "apps":
            return None
        file = APPS.joinpath(*parts[1:]).with_suffix(".py")
        if not file.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, file, loader=self)

    def create_module(self, spec: Any) -> Any:
        return None

    def exec_module(self, module: Any) -> None:
        source = Path(module.__spec__.origin).read_text().replace("google.adk", "cairn")
        exec(compile(source, module.__spec__.origin, "exec"), module.__dict__)


def load_script(name: str) -> dict[str, Any]:
    path = APPS / name / "script.py"
    spec = importlib.util.spec_from_file_location(f"parity_script_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {key: value for key, value in vars(module).items() if key.isupper()}


# ---------------------------------------------------------------------------------------
# --alias-missing: what the app would do once cairn has ADK's module paths

ALIASED: set[str] = set()
SEARCHED = (
    "agents",
    "tools",
    "workflow",
    "events",
    "models",
    "apps",
    "sessions",
    "memory",
    "artifacts",
    "auth",
    "runners",
    "plugins",
)


def find_elsewhere(requested: str, name: str) -> Any:
    """`name` from whichever cairn package has it, noted in ALIASED (for the table)."""
    import cairn

    for candidate in (cairn, *(importlib.import_module(f"cairn.{p}") for p in SEARCHED)):
        if name in dir(candidate):  # dir(): cairn's lazy names are listed before first use
            ALIASED.add(f"{requested}.{name} -> {candidate.__name__}")
            return getattr(candidate, name)
    raise AttributeError(f"module {requested!r} has no attribute {name!r} (nor has cairn)")


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Missing ``cairn.*`` modules become modules that find each name in cairn's packages."""

    def __init__(self) -> None:
        surface = json.loads(SURFACE.read_text())["modules"]
        self.adk_modules = {"cairn" + name[len("google.adk") :] for name in surface}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.adk_modules or fullname in sys.modules:
            return None
        for finder in sys.meta_path:
            if finder is not self and finder.find_spec(fullname, path, target) is not None:
                return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> Any:
        module = pytypes.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda name: find_elsewhere(spec.name, name)  # type: ignore[method-assign]
        return module

    def exec_module(self, module: Any) -> None:
        return None


def alias_missing() -> None:
    sys.meta_path.insert(0, AliasFinder())
    for package in ("", *(f".{p}" for p in SEARCHED)):
        module = importlib.import_module(f"cairn{package}")
        own = vars(module).get("__getattr__")  # a package's lazy names come first
        module.__getattr__ = (  # type: ignore[method-assign]
            lambda name, requested=module.__name__, own=own: own_or_elsewhere(own, requested, name)
        )


def own_or_elsewhere(own: Any, requested: str, name: str) -> Any:
    if own is not None:
        try:
            return own(name)
        except AttributeError:
            pass
    return find_elsewhere(requested, name)


# ---------------------------------------------------------------------------------------
# The fake model


class Fw:
    """The framework's modules, imported by name."""

    def __init__(self, framework: str) -> None:
        root = "google.adk" if framework == "adk" else "cairn"
        self.name = framework
        self.genai = importlib.import_module("google.genai.types")
        self.models = importlib.import_module(f"{root}.models")
        self.agents = importlib.import_module(f"{root}.agents")
        self.runners = importlib.import_module(f"{root}.runners")
        self.sessions = importlib.import_module(f"{root}.sessions")
        self.memory = importlib.import_module(f"{root}.memory")
        self.artifacts = importlib.import_module(f"{root}.artifacts")
        self.apps = importlib.import_module(f"{root}.apps")


class Recorder:
    """Per app: the scripted replies still to give and every request the model saw."""

    def __init__(self, replies: dict[str, list[Any]]) -> None:
        self.replies = {agent: list(items) for agent, items in replies.items()}
        self.requests: list[dict[str, Any]] = []
        self.models: dict[str, str] = {}
        self.instructions: dict[str, dict[str, Any]] = {}


CURRENT: dict[str, Recorder] = {}


def install_fake_model(fw: Fw) -> None:
    types = fw.genai
    llm_agent_class = fw.agents.LlmAgent
    original = llm_agent_class.canonical_model

    class ScriptedModel(fw.models.BaseLlm):  # type: ignore[misc, name-defined]
        agent_name: str = ""

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            recorder = CURRENT["app"]
            recorder.requests.append(describe_request(recorder, self.agent_name, llm_request))
            queue = recorder.replies.get(self.agent_name, [])
            item = queue.pop(0) if queue else f"<no scripted reply left for {self.agent_name}>"
            yield fw.models.LlmResponse(content=reply_content(types, item), turn_complete=True)

    cache: dict[tuple[int, str], Any] = {}

    def canonical_model(self: Any) -> Any:
        recorder = CURRENT["app"]
        if self.name not in recorder.models:
            recorder.instructions[self.name] = {
                "instruction": self.instruction,
                "static": text_of(getattr(self, "static_instruction", None)),
            }
            try:
                resolved = original.fget(self)
                recorder.models[self.name] = str(getattr(resolved, "model", resolved))
            except Exception as error:
                recorder.models[self.name] = f"{type(error).__name__}: {error}"
        key = (id(recorder), self.name)
        if key not in cache:
            cache[key] = ScriptedModel(
                model=recorder.models[self.name].split(":")[0], agent_name=self.name
            )
        return cache[key]

    llm_agent_class.canonical_model = property(canonical_model)


def text_of(value: Any) -> str | None:
    """A str, or the text of a Content or Part (a static_instruction), else None."""
    if value is None or isinstance(value, str):
        return value
    parts = getattr(value, "parts", None) or [value]
    return "".join(getattr(part, "text", None) or "" for part in parts) or None


def reply_content(types: Any, item: Any) -> Any:
    parts: list[Any] = []
    if isinstance(item, str):
        parts.append(types.Part(text=item))
    elif isinstance(item, list):
        parts += [call_part(types, call) for call in item]
    elif "json" in item:
        parts.append(types.Part(text=json.dumps(item["json"])))
    elif "call" in item:
        parts.append(call_part(types, item))
    else:
        if item.get("text"):
            parts.append(types.Part(text=item["text"]))
        parts += [call_part(types, call) for call in item.get("calls", [])]
    return types.Content(role="model", parts=parts)


def call_part(types: Any, call: dict[str, Any]) -> Any:
    return types.Part(
        function_call=types.FunctionCall(name=call["call"], args=call.get("args", {}))
    )


# ---------------------------------------------------------------------------------------
# Normalizing


def plain(value: Any) -> Any:
    """JSON-able data: pydantic models dumped (None fields dropped), sets sorted."""
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(mode="json", exclude_none=True))
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(item) for item in value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def parts_of(content: Any, ids: bool = True) -> list[Any]:
    out: list[Any] = []
    for part in (content.parts or []) if content is not None else []:
        if part.text is not None:
            out.append({"thought": part.text} if part.thought else {"text": part.text})
        if part.function_call is not None:
            call = part.function_call
            out.append({"call": call.name, "args": plain(call.args or {})})
            if ids:
                out[-1]["id"] = call.id
        if part.function_response is not None:
            response = part.function_response
            out.append({"response": response.name, "value": plain(response.response)})
            if ids:
                out[-1]["id"] = response.id
        if part.inline_data is not None:
            out.append({"inline_data": part.inline_data.mime_type})
        if part.executable_code is not None:
            out.append({"code": part.executable_code.code})
        if part.code_execution_result is not None:
            result = part.code_execution_result
            outcome = getattr(result.outcome, "value", result.outcome)
            out.append({"code_result": outcome, "output": last_line(result.output or "")})
    return out


def last_line(output: str) -> str:
    """A run's output cut to its last non-empty line (a traceback's frames name files)."""
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ACTION_FIELDS = (
    "state_delta",
    "artifact_delta",
    "transfer_to_agent",
    "escalate",
    "skip_summarization",
    "end_of_agent",
    "agent_state",
    "route",
    "set_model_response",
)


def describe_event(event: Any, node_paths: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"author": event.author}
    if event.branch:
        out["branch"] = event.branch  # call ids in it are renamed with the calls
    if getattr(event, "partial", None):
        out["partial"] = True
    if event.content is not None:
        out["role"] = event.content.role
        out["parts"] = parts_of(event.content)
    actions = event.actions
    for field in ACTION_FIELDS:
        value = getattr(actions, field, None)
        if value not in (None, {}, []):
            out[field] = plain(value)
    confirmations = getattr(actions, "requested_tool_confirmations", None)
    if confirmations:
        out["requested_tool_confirmations"] = [
            {"id": key, **plain(value)} for key, value in confirmations.items()
        ]
    if getattr(event, "long_running_tool_ids", None):
        out["long_running_tool_ids"] = sorted(event.long_running_tool_ids)
    for field in ("output", "error_code", "error_message", "interrupted"):
        value = getattr(event, field, None)
        if value is not None:
            out[field] = plain(value)
    node_info = getattr(event, "node_info", None)
    if node_paths and node_info is not None and getattr(node_info, "path", ""):
        out["node_path"] = node_info.path
    return out


def describe_request(recorder: Recorder, agent_name: str, request: Any) -> dict[str, Any]:
    config = request.config
    instruction = getattr(config, "system_instruction", None) if config else None
    if instruction is not None and not isinstance(instruction, str):
        instruction = "".join(part.text or "" for part in getattr(instruction, "parts", []) or [])
    tools: list[Any] = []
    for tool in (config.tools or []) if config else []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            tools.append(declaration.name)
            if declaration.name == "transfer_to_agent":
                tools[-1] = {"transfer_to_agent": transfer_targets(declaration)}
    contents = [
        {"role": content.role, "parts": memory_marked(parts_of(content, ids=False))}
        for content in request.contents
    ]
    agent = recorder.instructions.get(agent_name, {})
    return {
        "agent": agent_name,
        "instruction": own_instruction(agent, instruction or "", contents),
        "tools": tools,
        "contents": contents,
        "response_schema": config is not None
        and bool(
            getattr(config, "response_schema", None)
            or getattr(config, "response_json_schema", None)
        ),
    }


def own_instruction(
    agent: dict[str, Any], system: str, contents: list[dict[str, Any]]
) -> list[Any]:
    """The app's own instructions as the model got them, and any memories the framework added.

    The rest of the system instruction (ADK's identity and transfer paragraphs, its tool
    hints) is the framework's own wording, which cairn writes in its own words. An
    instruction found in the contents instead (ADK moves it there beside a
    static_instruction) is reported as ``{"in_contents": ...}`` and its part, wrapper
    wording and all, becomes ``{"instruction": ...}``.
    """
    out: list[Any] = []
    static = agent.get("static")
    if static:
        out.append({"static": static if static in system else "<missing>"})
    template = agent.get("instruction")
    if isinstance(template, str) and template:
        pieces = re.split(r"\{+[^{}]*\}+", template)
        pattern = re.compile(".*?".join(re.escape(p) for p in pieces) + r"(?=\n\n|\n<|\Z)", re.S)
        found = pattern.search(system)
        if found:
            out.append(found.group(0))
        else:
            out.append(in_contents(pattern, contents) or f"<missing: {system!r}>")
    elif system:
        out.append(system.split("\n\n")[0])
    for paragraph in system.split("\n\n"):
        if "<PAST_CONVERSATIONS>" in paragraph:
            out.append({"memories": memory_lines(paragraph)})
    return out


def in_contents(pattern: re.Pattern[str], contents: list[dict[str, Any]]) -> Any:
    for content in contents:
        for index, part in enumerate(content["parts"]):
            found = pattern.search(part.get("text", ""))
            if found:
                content["parts"][index] = {"instruction": found.group(0)}
                return {"in_contents": found.group(0)}
    return None


def memory_lines(text: str) -> list[str]:
    """`author: text` lines of a past-conversations block (timestamps dropped)."""
    inside = text.split("<PAST_CONVERSATIONS>", 1)[1].split("</PAST_CONVERSATIONS>", 1)[0]
    lines = []
    for line in inside.splitlines():
        line = re.sub(r"^\[[^\]]*\]\s*", "", line.strip())
        if line and not line.startswith("Time:"):
            lines.append(line)
    return lines


CONTEXT_LINE = re.compile(
    r"\[([^\]]+)\] (said|called tool `(\w+)`|`(\w+)` tool returned|tool `(\w+)` returned)"
)


def memory_marked(parts: list[Any]) -> list[Any]:
    """Framework-worded parts made comparable: past conversations and other agents' turns.

    Both frameworks show another agent's turn to the model as a user "For context:" text
    in their own words; what stays is who did what (the payloads are compared in the
    events themselves).
    """
    texts = [part.get("text", "") for part in parts]
    if texts and texts[0].startswith("For context:"):
        seen = []
        for found in CONTEXT_LINE.finditer("\n".join(texts)):
            agent, verb, called, returned_a, returned_b = found.groups()
            if verb == "said":
                seen.append(f"{agent} said")
            elif called:
                seen.append(f"{agent} called {called}")
            else:
                seen.append(f"{agent} got {returned_a or returned_b}'s result")
        return [{"for_context": seen}]
    return [
        {"memories": memory_lines(part["text"])}
        if "<PAST_CONVERSATIONS>" in part.get("text", "")
        else part
        for part in parts
    ]


def transfer_targets(declaration: Any) -> Any:
    parameters = getattr(declaration, "parameters", None)
    properties = getattr(parameters, "properties", None) or {}
    agent_name = properties.get("agent_name")
    return sorted(agent_name.enum) if agent_name is not None and agent_name.enum else None


class Ids:
    """Framework-made ids (function calls, confirmations) become call-1, call-2, ...

    Only ids that look generated (a uuid in them, or 20 characters and more) are renamed,
    also inside longer strings (error texts); an id the app chose stays as it is.
    """

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def rename(self, value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "id" and isinstance(item, str):
                    out[key] = self.label(item)
                elif key == "timestamp" and isinstance(item, (str, float)):
                    out[key] = "<timestamp>"
                elif key == "hint" and isinstance(item, str):
                    out[key] = "<the framework's confirmation hint>"
                elif key == "reflection_guidance" and isinstance(item, str):
                    out[key] = "<the retry plugin's guidance>"
                elif key == "long_running_tool_ids":
                    out[key] = sorted(self.label(i) for i in item)
                else:
                    out[key] = self.rename(item)
            if "id" in out and out["id"] is None:
                del out["id"]
            return out
        if isinstance(value, list):
            return [self.rename(item) for item in value]
        if isinstance(value, str) and value in self.names:
            return self.names[value]
        if isinstance(value, str):
            for raw, label in self.names.items():
                value = value.replace(raw, label)
            return UUID.sub("<uuid>", value)
        return value

    def label(self, raw: str) -> str:
        if not (UUID.search(raw) or len(raw) >= 20):
            return raw  # chosen by the app (an interrupt_id, say), not made by the framework
        if raw not in self.names:
            self.names[raw] = f"call-{len(self.names) + 1}"
        return self.names[raw]


# ---------------------------------------------------------------------------------------
# Running


async def run_app(fw: Fw, name: str) -> dict[str, Any]:
    script = load_script(name)
    recorder = CURRENT["app"] = Recorder(script.get("REPLIES", {}))
    result: dict[str, Any] = {}
    try:
        module = load_app(fw.name, name)
    except Exception as error:
        return {"load_error": f"{type(error).__name__}: {error}"}
    app_name = script.get("APP_NAME", "parity")
    runner_kind = script.get("RUNNER", "app" if hasattr(module, "app") else "agent")
    session_service = fw.sessions.InMemorySessionService()
    memory_service = fw.memory.InMemoryMemoryService()
    artifact_service = fw.artifacts.InMemoryArtifactService()
    services = {
        "session_service": session_service,
        "memory_service": memory_service,
        "artifact_service": artifact_service,
    }
    try:
        if runner_kind == "app":
            runner = fw.runners.Runner(app=module.app, **services)
            app_name = module.app.name
        elif runner_kind == "node":
            runner = fw.runners.Runner(node=module.root_agent, app_name=app_name, **services)
        else:
            runner = fw.runners.Runner(agent=module.root_agent, app_name=app_name, **services)
    except Exception as error:
        return {"runner_error": f"{type(error).__name__}: {error}"}
    node_paths = bool(script.get("NODE_PATHS", False))
    turns_out: list[Any] = []
    sessions: dict[str, Any] = {}
    types = fw.genai
    for turn in script.get("TURNS", []):
        turn = {"text": turn} if isinstance(turn, str) else turn
        session_id = turn.get("session", "s1")
        if session_id not in sessions:
            sessions[session_id] = await session_service.create_session(
                app_name=app_name,
                user_id=USER,
                session_id=session_id,
                state=dict(script.get("STATE", {})),
            )
        if "memory" in turn:
            stored = await session_service.get_session(
                app_name=app_name, user_id=USER, session_id=session_id
            )
            await memory_service.add_session_to_memory(stored)
            turns_out.append({"memory": turn["memory"]})
            continue
        if "respond" in turn:
            stored = await session_service.get_session(
                app_name=app_name, user_id=USER, session_id=session_id
            )
            call_id = latest_call_id(stored.events, turn["respond"])
            message = types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call_id, name=turn["respond"], response=turn["response"]
                        )
                    )
                ],
            )
        else:
            message = types.Content(role="user", parts=[types.Part(text=turn["text"])])
        yielded: list[Any] = []
        entry: dict[str, Any] = {"events": yielded}
        try:
            async for event in runner.run_async(
                user_id=USER, session_id=session_id, new_message=message
            ):
                yielded.append(describe_event(event, node_paths))
        except Exception as error:
            entry["exception"] = type(error).__name__
            entry["exception_message"] = str(error)[:300]
        turns_out.append(entry)
    result["turns"] = turns_out
    result["sessions"] = {}
    for session_id in sessions:
        stored = await session_service.get_session(
            app_name=app_name, user_id=USER, session_id=session_id
        )
        result["sessions"][session_id] = {
            "events": [describe_event(event, node_paths) for event in stored.events],
            "state": plain(dict(stored.state)),
        }
        keys = await artifact_service.list_artifact_keys(
            app_name=app_name, user_id=USER, session_id=session_id
        )
        artifacts = {}
        for key in sorted(keys):
            part = await artifact_service.load_artifact(
                app_name=app_name, user_id=USER, session_id=session_id, filename=key
            )
            artifacts[key] = part.text if part is not None and part.text else plain(part)
        if artifacts:
            result["sessions"][session_id]["artifacts"] = artifacts
    result["model_calls"] = recorder.requests
    result["models"] = recorder.models
    leftover = {agent: items for agent, items in recorder.replies.items() if items}
    if leftover:
        result["unused_replies"] = leftover
    return Ids().rename(result)  # type: ignore[no-any-return]


def latest_call_id(events: list[Any], name: str) -> str | None:
    for event in reversed(events):
        for part in (event.content.parts or []) if event.content is not None else []:
            if part.function_call is not None and part.function_call.name == name:
                return part.function_call.id  # type: ignore[no-any-return]
    return None


async def main_async(framework: str, names: list[str], alias: bool) -> dict[str, Any]:
    if alias:
        alias_missing()
    fw = Fw(framework)
    install_fake_model(fw)
    results: dict[str, Any] = {}
    for name in names:
        ALIASED.clear()
        try:
            results[name] = await run_app(fw, name)
            if ALIASED:
                results[name]["aliased"] = sorted(ALIASED)
        except Exception as error:
            results[name] = {
                "driver_error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc().splitlines()[-6:],
            }
    return results


def all_apps() -> list[str]:
    return sorted(path.parent.name for path in APPS.glob("*/agent.py"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=("adk", "cairn"), required=True)
    parser.add_argument(
        "--alias-missing",
        action="store_true",
        help="cairn only: serve ADK module paths cairn lacks from where cairn has the names",
    )
    parser.add_argument("apps", nargs="*")
    options = parser.parse_args()
    names = options.apps or all_apps()
    results = asyncio.run(main_async(options.framework, names, options.alias_missing))
    json.dump(results, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
