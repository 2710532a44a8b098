"""A2A parts <-> genai parts, on the wire as google-adk 2.13.0 writes and reads them.

Each ADK-shaped part here is written as the JSON an a2a-sdk 1.x peer sends (ADK's metadata
keys and values), so a cairn server reads an ADK client's parts and an ADK client reads
what cairn sends.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from a2a.types import Part
from google.genai import types
from google.protobuf import json_format

from cairn.a2a.converters.part_converter import (
    A2A_DATA_PART_END_TAG,
    A2A_DATA_PART_START_TAG,
    convert_a2a_part_to_genai_part,
    convert_genai_part_to_a2a_part,
)


def wire(part: Part | None) -> dict[str, Any]:
    assert part is not None
    result: dict[str, Any] = json_format.MessageToDict(part)
    return result


def from_wire(data: dict[str, Any]) -> types.Part:
    genai = convert_a2a_part_to_genai_part(json_format.ParseDict(data, Part()))
    assert genai is not None
    return genai


def round_trip(part: types.Part) -> types.Part:
    a2a_part = convert_genai_part_to_a2a_part(part)
    assert a2a_part is not None
    back = convert_a2a_part_to_genai_part(a2a_part)
    assert back is not None
    return back


def test_text_and_thought() -> None:
    assert wire(convert_genai_part_to_a2a_part(types.Part(text="hi"))) == {"text": "hi"}
    thought = types.Part(text="pondering", thought=True)
    assert wire(convert_genai_part_to_a2a_part(thought)) == {
        "text": "pondering",
        "metadata": {"adk_thought": True},
    }
    back = from_wire({"text": "pondering", "metadata": {"adk_thought": True}})
    assert (back.text, back.thought) == ("pondering", True)


def test_a_file_by_url_keeps_its_type_and_name() -> None:
    part = types.Part(
        file_data=types.FileData(
            file_uri="gs://bucket/report.pdf", mime_type="application/pdf", display_name="r.pdf"
        )
    )
    assert wire(convert_genai_part_to_a2a_part(part)) == {
        "url": "gs://bucket/report.pdf",
        "mediaType": "application/pdf",
        "filename": "r.pdf",
    }
    assert round_trip(part).file_data == part.file_data


def test_a_file_by_bytes_keeps_its_bytes() -> None:
    data = bytes(range(256))
    part = types.Part(inline_data=types.Blob(data=data, mime_type="image/png", display_name="x"))
    sent = wire(convert_genai_part_to_a2a_part(part))
    assert sent == {
        "raw": base64.b64encode(data).decode(),
        "mediaType": "image/png",
        "filename": "x",
    }
    assert from_wire(sent).inline_data == part.inline_data


def test_media_reading_fields_travel_in_metadata() -> None:
    part = types.Part(
        file_data=types.FileData(file_uri="https://example.com/v.mp4", mime_type="video/mp4"),
        video_metadata=types.VideoMetadata(start_offset="1s", end_offset="5s", fps=2.5),
    )
    sent = wire(convert_genai_part_to_a2a_part(part))
    assert sent["metadata"] == {
        "adk_video_metadata": {"startOffset": "1s", "endOffset": "5s", "fps": 2.5}
    }
    back = from_wire(sent)
    assert back.video_metadata == part.video_metadata
    assert back.part_metadata is None  # read into the field, not left behind as well


def test_a_function_call_is_a_data_part_with_adks_type_key() -> None:
    call = types.FunctionCall(id="fc-1", name="transfer", args={"amount": 3, "to": "bob"})
    part = types.Part(function_call=call, thought_signature=b"\x00sig")
    assert wire(convert_genai_part_to_a2a_part(part)) == {
        "data": {"id": "fc-1", "name": "transfer", "args": {"amount": 3.0, "to": "bob"}},
        "metadata": {
            "adk_type": "function_call",
            "adk_thought_signature": base64.b64encode(b"\x00sig").decode(),
        },
    }
    back = round_trip(part)
    assert back.function_call == call  # the whole number is an int again
    assert isinstance(back.function_call.args["amount"], int)  # type: ignore[index,union-attr]
    assert back.thought_signature == b"\x00sig"


def test_an_adk_long_running_call_is_read_as_a_function_call() -> None:
    back = from_wire(
        {
            "data": {"id": "lr-1", "name": "adk_request_input", "args": {"message": "ok?"}},
            "metadata": {"adk_type": "function_call", "adk_is_long_running": True},
        }
    )
    assert back.function_call == types.FunctionCall(
        id="lr-1", name="adk_request_input", args={"message": "ok?"}
    )
    assert back.part_metadata == {"adk_type": "function_call", "adk_is_long_running": True}


def test_a_function_response_answers_by_id() -> None:
    sent = {
        "data": {"id": "lr-1", "name": "adk_request_input", "response": {"result": 2.5}},
        "metadata": {"adk_type": "function_response"},
    }
    back = from_wire(sent)
    assert back.function_response == types.FunctionResponse(
        id="lr-1", name="adk_request_input", response={"result": 2.5}
    )
    assert wire(convert_genai_part_to_a2a_part(back)) == sent


@pytest.mark.parametrize(
    "part",
    [
        types.Part(
            executable_code=types.ExecutableCode(code="print(1)", language=types.Language.PYTHON)
        ),
        types.Part(
            code_execution_result=types.CodeExecutionResult(
                outcome=types.Outcome.OUTCOME_OK, output="1\n"
            )
        ),
    ],
    ids=["executable_code", "code_execution_result"],
)
def test_code_and_its_result_round_trip(part: types.Part) -> None:
    sent = wire(convert_genai_part_to_a2a_part(part))
    assert sent["metadata"]["adk_type"] in ("executable_code", "code_execution_result")
    back = from_wire(sent)
    assert (back.executable_code, back.code_execution_result) == (
        part.executable_code,
        part.code_execution_result,
    )


def test_any_other_data_reaches_the_model_as_tagged_json_and_goes_back_as_data() -> None:
    sent = {"data": {"rows": [1, 2], "ok": True}, "metadata": {"source": "crm"}}
    genai = from_wire(sent)
    assert genai.inline_data is not None
    assert genai.inline_data.mime_type == "text/plain"
    data = genai.inline_data.data or b""
    assert data.startswith(A2A_DATA_PART_START_TAG)
    assert data.endswith(A2A_DATA_PART_END_TAG)
    assert wire(convert_genai_part_to_a2a_part(genai)) == {
        "data": {"rows": [1.0, 2.0], "ok": True},
        "metadata": {"source": "crm"},
    }


def test_a_data_part_that_is_not_an_object_is_kept_as_data() -> None:
    genai = from_wire({"data": ["a", "b"], "metadata": {"adk_type": "function_call"}})
    assert genai.function_call is None
    assert wire(convert_genai_part_to_a2a_part(genai)) == {
        "data": ["a", "b"],
        "metadata": {"adk_type": "function_call"},
    }


def test_vertex_ai_gets_no_part_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    back = from_wire({"text": "x", "metadata": {"adk_thought": False, "k": "v"}})
    assert back.part_metadata is None
    assert back.thought is False


def test_parts_without_content_are_skipped() -> None:
    assert convert_a2a_part_to_genai_part(Part()) is None
    assert convert_genai_part_to_a2a_part(types.Part()) is None
    assert convert_genai_part_to_a2a_part(types.Part(inline_data=types.Blob())) is None
