"""The data of a code run (its input, its result, the files it reads and writes) and the
conversions between model parts and code, at ADK's address."""

from __future__ import annotations

import base64
import binascii
import dataclasses

from google.genai import types


@dataclasses.dataclass(frozen=True)
class File:
    """A file given to or produced by a code run."""

    name: str
    """The file's name, with its extension (``data.csv``)."""
    content: str | bytes
    """The bytes themselves, or their base64 encoding as a str."""
    mime_type: str = "text/plain"


@dataclasses.dataclass
class CodeExecutionInput:
    """What a code executor is asked to run."""

    code: str
    input_files: list[File] = dataclasses.field(default_factory=list)
    """Files the code can open by name, in its working directory."""
    execution_id: str | None = None
    """For a stateful executor: the run's session (the same for every run of a session)."""


@dataclasses.dataclass
class CodeExecutionResult:
    """What a code run printed and wrote. A non-empty ``stderr`` marks the run failed."""

    stdout: str = ""
    stderr: str = ""
    output_files: list[File] = dataclasses.field(default_factory=list)
    exit_code: int | None = None
    """The process's exit status, or None where the executor cannot tell."""


def file_bytes(file: File) -> bytes:
    """The bytes of ``file``: as given, or decoded from base64."""
    if isinstance(file.content, bytes):
        return file.content
    return base64.b64decode(file.content)


class CodeExecutionUtils:
    """Conversions between model parts and code runs (ADK's helper class)."""

    @staticmethod
    def get_encoded_file_content(data: bytes) -> bytes:
        """``data`` base64-encoded, unless it already is valid base64."""
        try:
            if base64.b64encode(base64.b64decode(data, validate=True)) == data:
                return data
        except (binascii.Error, ValueError):
            pass
        return base64.b64encode(data)

    @staticmethod
    def extract_code_and_truncate_content(
        content: types.Content, code_block_delimiters: list[tuple[str, str]]
    ) -> str | None:
        """The first piece of code in ``content``, which is cut right after it.

        An ``executable_code`` part that no result follows wins; otherwise the text parts
        (joined by newlines) are searched for the earliest block that opens with one of the
        delimiters and is closed by its closing one. Then ``content.parts`` becomes the text
        before the block (if any) and an ``executable_code`` part; None if there is no code.
        """
        parts = list(content.parts or []) if content is not None else []
        if not parts:
            return None
        for index, part in enumerate(parts):
            if part.executable_code is None:
                continue
            followed = index + 1 < len(parts) and parts[index + 1].code_execution_result
            if not followed:
                content.parts = parts[: index + 1]
                return part.executable_code.code
        texts = [part for part in parts if part.text]
        if not texts:
            return None
        joined = "\n".join(part.text or "" for part in texts)
        found: tuple[int, int, int] | None = None  # (block start, code start, code end)
        for opening, closing in code_block_delimiters:
            start = joined.find(opening)
            if start < 0:
                continue
            end = joined.find(closing, start + len(opening))
            if end < 0:
                continue
            if found is None or start < found[0]:
                found = (start, start + len(opening), end)
        if found is None:
            return None
        start, code_start, code_end = found
        code = joined[code_start:code_end]
        if not code:
            return None
        kept: list[types.Part] = []
        if joined[:start]:
            kept.append(texts[0].model_copy(update={"text": joined[:start]}))
        kept.append(CodeExecutionUtils.build_executable_code_part(code))
        content.parts = kept
        return code

    @staticmethod
    def build_executable_code_part(code: str) -> types.Part:
        """A part holding Python ``code`` to run."""
        return types.Part(
            executable_code=types.ExecutableCode(code=code, language=types.Language.PYTHON)
        )

    @staticmethod
    def build_code_execution_result_part(
        code_execution_result: CodeExecutionResult,
    ) -> types.Part:
        """The part a run's result is recorded and shown to the model as: a failure with
        stderr, or what it printed and the names of the files it saved."""
        result = code_execution_result
        if result.stderr:
            return types.Part(
                code_execution_result=types.CodeExecutionResult(
                    outcome=types.Outcome.OUTCOME_FAILED, output=result.stderr
                )
            )
        sections = []
        if result.stdout or not result.output_files:
            sections.append(f"Code execution result:\n{result.stdout}\n")
        if result.output_files:
            names = ",".join(f"`{file.name}`" for file in result.output_files)
            sections.append(f"Saved artifacts:\n{names}")
        return types.Part(
            code_execution_result=types.CodeExecutionResult(
                outcome=types.Outcome.OUTCOME_OK, output="\n\n".join(sections)
            )
        )

    @staticmethod
    def convert_code_execution_parts(
        content: types.Content,
        code_block_delimiter: tuple[str, str],
        execution_result_delimiters: tuple[str, str],
    ) -> None:
        """Code and results in ``content`` as the text a model reads them as (in place).

        A trailing ``executable_code`` part becomes the code between the delimiters; a
        content that is one ``code_execution_result`` becomes the user's text of its output
        between the result delimiters (a model's own turn of several parts keeps its result).
        """
        parts = content.parts
        if not parts:
            return
        last = parts[-1]
        if last.executable_code is not None:
            opening, closing = code_block_delimiter
            parts[-1] = types.Part(text=f"{opening}{last.executable_code.code or ''}{closing}")
        elif len(parts) == 1 and last.code_execution_result is not None:
            output = last.code_execution_result.output
            opening, closing = execution_result_delimiters
            parts[-1] = types.Part(text="" if output is None else f"{opening}{output}{closing}")
            content.role = "user"


__all__ = ["CodeExecutionInput", "CodeExecutionResult", "CodeExecutionUtils", "File"]
