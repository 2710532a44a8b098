"""An artifact as a part a model accepts (``as_safe_part_for_llm``, ADK's name).

Models take some binary data inline (images, audio, video, PDF); everything else
is turned into text: text-like data decoded, a Word document's paragraphs, an
Excel workbook's cells (on request), and for other binary data a line saying
what it is and how big. Nothing here needs a third-party library.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import zipfile
from collections.abc import Awaitable, Callable
from typing import TypeAlias
from xml.etree import ElementTree

from google.genai import types

ProcessArtifactCallback: TypeAlias = Callable[
    [types.Part, str], types.Part | Awaitable[types.Part | None] | None
]
"""What ``LoadArtifactsTool(process_artifact=...)`` takes: ``(part, artifact name)`` to the
part shown to the model, or None to leave the artifact out (sync or async)."""

_INLINE_PREFIXES = ("image/", "audio/", "video/")
_INLINE_TYPES = frozenset({"application/pdf"})
# XML-based image types: models refuse them inline; they are text.
_XML_IMAGES = frozenset({"image/svg", "image/svg+xml", "image/xml"})
_TEXT_TYPES = frozenset(
    {
        "application/csv",
        "application/json",
        "application/svg+xml",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        *_XML_IMAGES,
    }
)
_TEXT_SUFFIXES = (".csv", ".txt", ".json", ".xml", ".md", ".yaml", ".yml")
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_XLS = "application/vnd.ms-excel"
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]*={0,2}\s*$")


def as_safe_part_for_llm(
    artifact: types.Part, artifact_name: str, enable_spreadsheet_parsing: bool = False
) -> types.Part:
    """``artifact`` as a part a model accepts.

    A text part, and inline data of a type models take inline, come back as they
    are (the MIME type lower-cased). Other inline data becomes a text part: its
    text when it is text-like (by type or by the name's suffix), a ``.docx``'s
    paragraphs, an ``.xlsx``'s sheets when ``enable_spreadsheet_parsing`` is set,
    and otherwise ``[Binary artifact: name, type: ..., size: ... KB. ...]``.
    """
    blob = artifact.inline_data
    if blob is None:
        return artifact
    given = blob.mime_type or ""
    base, sep, params = given.partition(";")
    mime_type = base.strip().lower()
    if mime_type and _inline(mime_type):
        canonical = f"{mime_type}{sep}{params}"
        if canonical == given:
            return artifact
        return artifact.model_copy(
            update={"inline_data": blob.model_copy(update={"mime_type": canonical})}
        )
    mime_type = mime_type or "application/octet-stream"
    data = blob.data
    if data is None:
        return _text(
            f"[Artifact: {artifact_name}, type: {mime_type}. No inline data was provided.]"
        )
    if isinstance(data, str):  # base64 text, or text that was never encoded
        decoded = _from_base64(data)
        if decoded is None:
            return _text(data)
        data = decoded
    name = artifact_name.lower()
    if mime_type in (_DOCX, "application/octet-stream") or name.endswith(".docx"):
        paragraphs = _docx_text(data)
        if paragraphs is not None:
            return _text(paragraphs)
    if mime_type.startswith("text/") or mime_type in _TEXT_TYPES or name.endswith(_TEXT_SUFFIXES):
        return _text(data.decode("utf-8", errors="replace"))
    if enable_spreadsheet_parsing and (
        mime_type in (_XLSX, _XLS) or name.endswith((".xlsx", ".xls"))
    ):
        sheets = _xlsx_text(data)
        if sheets is not None:
            return _text(sheets)
    return _text(
        f"[Binary artifact: {artifact_name}, type: {mime_type}, size: "
        f"{len(data) / 1024:.1f} KB. Content cannot be displayed inline.]"
    )


def _inline(mime_type: str) -> bool:
    if mime_type in _XML_IMAGES:
        return False
    return mime_type.startswith(_INLINE_PREFIXES) or mime_type in _INLINE_TYPES


def _text(text: str) -> types.Part:
    return types.Part(text=text)


def _from_base64(data: str) -> bytes | None:
    if not data.strip() or not _BASE64.match(data):
        return None
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None


_WORD = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_SHEET = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _zip_member(data: bytes, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.read(name)
    except (zipfile.BadZipFile, KeyError, OSError):
        return None


def _docx_text(data: bytes) -> str | None:
    """A Word document's paragraphs, one per line; None if ``data`` is not one."""
    document = _zip_member(data, "word/document.xml")
    if document is None:
        return None
    try:
        root = ElementTree.fromstring(document)
    except ElementTree.ParseError:
        return None
    return "\n".join(
        "".join(node.text or "" for node in paragraph.iter(f"{_WORD}t"))
        for paragraph in root.iter(f"{_WORD}p")
    )


def _xlsx_text(data: bytes) -> str | None:
    """An Excel workbook's sheets as comma-separated rows; None if ``data`` is not one."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return None
    with archive:
        names = sorted(
            (n for n in archive.namelist() if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n)),
            key=lambda n: int(re.sub(r"\D", "", n)),
        )
        if not names:
            return None
        try:
            shared = _shared_strings(archive)
            sheets = []
            for index, name in enumerate(names, start=1):
                root = ElementTree.fromstring(archive.read(name))
                rows = [
                    ",".join(_cell_text(cell, shared) for cell in row.iter(f"{_SHEET}c"))
                    for row in root.iter(f"{_SHEET}row")
                ]
                sheets.append(f"Sheet {index}:\n" + "\n".join(rows))
        except (ElementTree.ParseError, KeyError, ValueError, IndexError):
            return None
    return "\n\n".join(sheets)


def _shared_strings(archive: zipfile.ZipFile) -> list[str]:
    if "xl/sharedStrings.xml" not in archive.namelist():
        return []
    root = ElementTree.fromstring(archive.read("xl/sharedStrings.xml"))
    return [
        "".join(node.text or "" for node in item.iter(f"{_SHEET}t"))
        for item in root.iter(f"{_SHEET}si")
    ]


def _cell_text(cell: ElementTree.Element, shared: list[str]) -> str:
    kind = cell.get("t")
    if kind == "inlineStr":
        return "".join(node.text or "" for node in cell.iter(f"{_SHEET}t"))
    value = cell.find(f"{_SHEET}v")
    text = value.text if value is not None and value.text is not None else ""
    return shared[int(text)] if kind == "s" and text else text


__all__ = ["ProcessArtifactCallback", "as_safe_part_for_llm"]
