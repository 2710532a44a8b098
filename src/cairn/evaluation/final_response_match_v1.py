"""``response_match_score``: ROUGE-1 F-measure of the final response against the expected one.

Text is tokenised so that every script counts: it is NFKC-normalised and lower-cased; Chinese,
Japanese and Korean characters are one token each; Thai, Lao, Khmer and Myanmar text (written
without spaces) gives one token per letter with its combining marks; other runs of letters,
digits and marks are words. ASCII words go through rouge-score's own tokenizer with Porter
stemming, as in plain ROUGE; other words are kept as they are.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any, NamedTuple

from google.genai import types as genai_types
from typing_extensions import override

from .constants import MISSING_EVAL_DEPENDENCIES_MESSAGE
from .eval_case import ConversationScenario, Invocation
from .eval_metrics import EvalMetric, _get_metric_threshold
from .evaluator import (
    EvalStatus,
    EvaluationResult,
    Evaluator,
    PerInvocationResult,
    _validate_invocation_lengths,
)

# Code point ranges (inclusive).
_ONE_TOKEN_PER_CHARACTER = (
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0xAC00, 0xD7AF),  # Hangul syllables
)
_WRITTEN_WITHOUT_SPACES = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1780, 0x17FF),  # Khmer
    (0x1000, 0x109F),  # Myanmar
)


def _within(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


class _ScriptAwareTokenizer:
    """A rouge-score tokenizer (an object with ``tokenize``) that keeps non-Latin text."""

    def __init__(self, use_stemmer: bool = True) -> None:
        from rouge_score import tokenizers

        ascii_tokenizer = tokenizers.DefaultTokenizer(use_stemmer)
        # Stemming is the cost, and a word always stems the same: each word once.
        self._ascii_word = functools.lru_cache(maxsize=1 << 16)(
            lambda word: tuple(ascii_tokenizer.tokenize(word))
        )

    def _words(self, text: str) -> list[str]:
        words: list[str] = []
        current = ""

        def flush() -> None:
            nonlocal current
            if current:
                words.append(current)
            current = ""

        for char in unicodedata.normalize("NFKC", text).lower():
            if _within(char, _ONE_TOKEN_PER_CHARACTER):
                flush()
                words.append(char)
            elif _within(char, _WRITTEN_WITHOUT_SPACES):
                if not _is_mark(char):
                    flush()  # a new letter starts a new cluster; a mark joins the current one
                current += char
            elif char.isalnum() or _is_mark(char):
                current += char
            else:
                flush()
        flush()
        return words

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = []
        for word in self._words(text):
            tokens.extend(self._ascii_word(word) if word.isascii() else (word,))
        return tokens


class Rouge1Score(NamedTuple):
    """ROUGE-1 precision, recall and F-measure."""

    precision: float
    recall: float
    fmeasure: float


@functools.cache
def _rouge_1_scorer() -> Any:
    """One scorer for the process (it holds the stemmer and its cache of stemmed words)."""
    try:
        from rouge_score import rouge_scorer
    except ImportError as error:
        raise ImportError(MISSING_EVAL_DEPENDENCIES_MESSAGE) from error
    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=_ScriptAwareTokenizer())


def _calculate_rouge_1_scores(candidate: str, reference: str) -> Rouge1Score:
    """ROUGE-1 of ``candidate`` (the agent's text) against ``reference`` (the expected text)."""
    score: Any = _rouge_1_scorer().score(reference, candidate)["rouge1"]
    return Rouge1Score(float(score.precision), float(score.recall), float(score.fmeasure))


def _get_text_from_content(content: genai_types.Content | None) -> str:
    """The text parts of the content, one per line."""
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text)


class RougeEvaluator(Evaluator):
    """Scores each final response by ROUGE-1 F-measure against the expected one (0 to 1)."""

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._threshold = _get_metric_threshold(eval_metric)

    @override
    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        if expected_invocations is None:
            raise ValueError(
                "response_match_score compares with expected final responses; the case has none."
            )
        _validate_invocation_lengths(actual_invocations, expected_invocations)
        results = []
        for actual, expected in zip(actual_invocations, expected_invocations, strict=True):
            said = _get_text_from_content(actual.final_response)
            wanted = _get_text_from_content(expected.final_response)
            # Both silent (a turn that ended in a pause): the agent said what was expected,
            # nothing. ROUGE alone (and ADK) would score the pair 0.
            score = (
                1.0
                if not said.strip() and not wanted.strip()
                else _calculate_rouge_1_scores(said, wanted).fmeasure
            )
            results.append(
                PerInvocationResult(
                    actual_invocation=actual,
                    expected_invocation=expected,
                    score=score,
                    eval_status=self._status(score),
                )
            )
        if not results:
            return EvaluationResult()
        overall = sum(r.score or 0.0 for r in results) / len(results)
        return EvaluationResult(
            overall_score=overall,
            overall_eval_status=self._status(overall),
            per_invocation_results=results,
        )

    def _status(self, score: float) -> EvalStatus:
        return EvalStatus.PASSED if score >= self._threshold else EvalStatus.FAILED
