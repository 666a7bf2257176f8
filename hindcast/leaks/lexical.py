"""The model-free leak detector. `lexical[:threshold=0.5,embedder=minilm]` — model-free,
deterministic. From the question alone
it derives (`statements`) entity groups (runs of capitalised words and numbers, e.g. ("rodrigo",
"paz"), ("bolivia",); a group is named by its last token, two of its tokens, a stem or a few
aliases: NYC ~ New York, Fed ~ Federal Reserve) and a small template set phrasing BOTH outcomes
("X happened" / "X did not happen", "resolved Yes/No", "S won O" / "S wins O" / "S did not win
O" / "S fails to win O" / "S lost O"). A text is scored only if it names at least TOPIC_MIN of
the groups; its score is CUE_WEIGHT × the outcome cue + SIM_WEIGHT × its largest cosine to a
statement (all-MiniLM-L6-v2 bf16 from its PyPI wheel, loaded once per detector on first use),
scaled between SIM_FLOOR and SIM_CEIL. The outcome cue is 1 for an outcome verb used as a verb
("wins", "elected", "captures", "cuts rates", "holds rates steady", "drops below $90,000" when
the question names that number, "after the Fed's rate cut"), HEDGE_FACTOR when it is hedged or
the text is a question ("could win", "poised to", "expected to"), 0 for none or a noun ("a rate
cut", "rate-cut hopes"). score ≥ threshold → "reveals-outcome"; else a past-tense text on the
topic naming a date after t0 (one the question does not itself name) → "after-t0"; else
"neither". The constants were tuned on real headlines (see REVEAL_THRESHOLD).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from dataclasses import dataclass
from datetime import datetime

from hindcast import archive
from hindcast.errors import ConfigError
from hindcast.leaks.registry import Verdict, check_params
from hindcast.leaks.vocabulary import (
    AFTER_EVENT,
    ALIASES,
    DEADLINE,
    GENERIC,
    HEDGE,
    MONTH_ABBR,
    MONTH_YEAR,
    MONTHS,
    NOUN_AFTER,
    NOUN_BEFORE,
    NUMBER,
    OUTCOME,
    OUTCOME_NOUN,
    PAST,
    PAST_OF,
    PRICE_MOVE,
    QUESTION_WORDS,
    STOP,
    WORD,
    YEAR,
    plain_number,
)
from hindcast.records import Question

# ---- the model-free detector: `lexical` --------------------------------------------------------
# Chosen on real headlines: a development set drawn like the shipped leak set (data/leakset: sample
# markets, headlines after resolution that state the outcome vs same-topic headlines before t0),
# then a grid over these constants: recall and precision are flat around these values (≥ 0.9 both
# on data/leakset at threshold 0.45–0.5); the held-out set (data/leakset/heldout) was not used.
REVEAL_THRESHOLD = 0.5  # score ≥ this → "reveals-outcome"
TEXTS_KEPT = 100_000  # document vectors a detector keeps (~150 MB of 384-dim float32 at most)
TOPIC_MIN = (
    0.34  # share of the question's entity groups the text must name to be about THIS question
)
SIM_FLOOR, SIM_CEIL = (
    0.35,
    0.75,
)  # cosine to an outcome statement mapped linearly onto 0..1 between these
CUE_WEIGHT, SIM_WEIGHT = (
    0.5,
    0.5,
)  # the score: CUE_WEIGHT·outcome cue + SIM_WEIGHT·scaled similarity
HEDGE_FACTOR = 0.4  # an outcome verb inside hedged / forward-looking wording counts this much
HEDGE_WINDOW = 30  # characters before an outcome verb searched for a hedge word


@dataclass(frozen=True)
class Statements:
    """What the lexical detector knows of a question (derived from its text
    only, never the outcome)."""

    groups: tuple[tuple[str, ...], ...]  # entity groups: names, numbers, places (lower-case tokens)
    yes: tuple[str, ...]  # statements that the question resolved YES
    no: tuple[str, ...]  # statements that it resolved NO
    numbers: frozenset[str] = (
        frozenset()
    )  # the question's numbers, normalised ('$90,000' → '90000')

    @property
    def all(self) -> tuple[str, ...]:
        return self.yes + self.no


def statements(question: Question) -> Statements:
    """The deterministic template set for a question: both outcomes phrased with its entities."""
    clause = _clause(question.question)
    subject, verb, rest = _parse_clause(clause)
    yes, no = (
        [f"{clause} happened", f"{clause}: resolved Yes"],
        [f"{clause} did not happen", f"{clause}: resolved No"],
    )
    if verb:
        past = _past(verb)
        yes += [f"{subject} {past} {rest}".strip(), f"{subject} {_third(verb)} {rest}".strip()]
        no += [
            f"{subject} did not {verb} {rest}".strip(),
            f"{subject} fails to {verb} {rest}".strip(),
        ]
        if verb == "win":
            no += [f"{subject} lost {rest}".strip(), f"{subject} loses {rest}".strip()]
    return Statements(
        _entity_groups(question.question), tuple(yes), tuple(no), _numbers(question.question)
    )


def _numbers(question: str) -> frozenset[str]:
    found = {
        plain_number(w) for w in NUMBER.findall(DEADLINE.sub("", question.strip().rstrip("?")))
    }
    return frozenset(n for n in found if n and not re.fullmatch(r"(?:19|20)\d\d", n))


def _clause(text: str) -> str:
    """The question as a clause: no trailing '?', no leading 'Will', no
    deadline ('by August 31')."""
    clause = " ".join(text.strip().rstrip("?").split())
    clause = re.sub(r"^(?:will|did|does|is|are|has|have|can)\s+", "", clause, flags=re.IGNORECASE)
    return DEADLINE.sub("", clause) or clause


def _parse_clause(clause: str) -> tuple[str, str, str]:
    """(subject, verb, rest) of `Subject verb rest`: the subject runs to the first lower-case word
    that is not a connector; ('', '', '') when there is no such verb."""
    words = clause.split()
    for i, word in enumerate(words[1:], start=1):
        if word[:1].islower() and word.lower() not in (
            "the",
            "of",
            "de",
            "x",
            "and",
            "&",
            "a",
            "an",
            "del",
            "von",
        ):
            return " ".join(words[:i]), word.lower(), " ".join(words[i + 1 :])
    return "", "", ""


def _past(verb: str) -> str:
    if verb in PAST_OF:
        return PAST_OF[verb]
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb) and len(verb) <= 4:  # dip → dipped
        return verb + verb[-1] + "ed"
    return (
        verb + "d"
        if verb.endswith("e")
        else verb[:-1] + "ied"
        if verb.endswith("y")
        else verb + "ed"
    )


def _third(verb: str) -> str:
    if verb == "be":
        return "is"
    return verb + "es" if verb.endswith(("s", "sh", "ch", "x")) else verb + "s"


def _entity_groups(question: str) -> tuple[tuple[str, ...], ...]:
    """Runs of capitalised words and numbers (the first word of the question excluded), each a
    group of its distinctive lower-case tokens; a question without any: its content words."""
    words = WORD.findall(DEADLINE.sub("", " ".join(question.split()).rstrip("?")))
    groups, run = [], []
    for i, word in enumerate(words):
        token = word.strip(".'’").lower()
        named = (i > 0 or token not in QUESTION_WORDS) and (
            word[:1].isupper() or word[:1].isdigit() or word[:1] == "$"
        )
        if named and token not in GENERIC and token not in MONTHS and len(token) > 1:
            run.append(token)
        elif run:
            groups.append(tuple(run))
            run = []
    groups += [tuple(run)] if run else []
    if groups:
        return tuple(groups)
    content = [
        w.lower()
        for w in words
        if len(w) > 3 and w.lower() not in STOP and w.lower() not in GENERIC
    ]
    return tuple((w,) for w in content)


def topic_share(text: str, groups: tuple[tuple[str, ...], ...]) -> float:
    """The share of entity groups the text names. A group is named by its last token (a surname, a
    team's nickname) or by two of its tokens; a token matches a text word starting with it
    (Russia ~ Russian's) or a slightly shorter one (Bolivia ~ Bolivian is not:
    Bolivia ~ Bolivia's)."""
    if not groups:
        return 0.0
    words = [w.strip(".'’").lower() for w in WORD.findall(text)]
    hits = sum(1 for group in groups if _group_named(group, words))
    return hits / len(groups)


def _group_named(group: tuple[str, ...], words: list[str]) -> bool:
    present = [_named(token, words) for token in group]
    return present[-1] or sum(present) >= 2


def _named(token: str, words: list[str]) -> bool:
    if plain_number(token):
        return plain_number(token) in {plain_number(w) for w in words}
    if any(_alias_in(alias, words) for alias in ALIASES.get(token, ())):
        return True
    if len(token) < 5 or not token.isalpha():
        return token in words or any(w.startswith((token + "'", token + "’")) for w in words)
    stem = token[: max(5, len(token) - 2)]
    return any(w.startswith(stem) for w in words)


def _alias_in(alias: str, words: list[str]) -> bool:
    parts = alias.split()
    return any(words[i : i + len(parts)] == parts for i in range(len(words) - len(parts) + 1))


def outcome_cue(text: str, numbers: frozenset[str] = frozenset()) -> float:
    """1 for an outcome verb in plain reporting — used as a verb, not a noun ('a rate cut', 'the
    strike'), or a price move past one of the question's own numbers ('drops below $90,000') — or
    an event reported as past ('after the Fed's rate cut', even in a question); HEDGE_FACTOR when
    the text is a question or every outcome verb is hedged (a hedge word in the HEDGE_WINDOW
    characters before it: 'could win', 'poised to win', 'expected to'); 0 otherwise."""
    verbs = [m for m in OUTCOME.finditer(text) if _as_verb(text, m)] + _price_moves(text, numbers)
    if AFTER_EVENT.search(text):  # presupposed past, even inside a question
        return 1.0
    if not verbs:
        return 0.0
    if text.rstrip().endswith("?"):
        return HEDGE_FACTOR
    plain = [
        m for m in verbs if not HEDGE.search(text[max(0, m.start() - HEDGE_WINDOW) : m.start()])
    ]
    return 1.0 if plain else HEDGE_FACTOR


def _as_verb(text: str, match: re.Match) -> bool:
    if OUTCOME_NOUN.match(match.group(0)):
        return True
    return not (NOUN_BEFORE.search(text[: match.start()]) or NOUN_AFTER.match(text[match.end() :]))


def _price_moves(text: str, numbers: frozenset[str]) -> list[re.Match]:
    return [m for m in PRICE_MOVE.finditer(text) if plain_number(m.group("number")) in numbers]


def dates_after(text: str, t0: datetime, named: str = "") -> list[str]:
    """Dates the text names that lie after t0's day: `Month [D,] YYYY`, or a bare year after t0's
    that the question itself does not name (`named`: 'the 2026 Winter Olympics' is no news)."""
    own = set(YEAR.findall(named))
    found = [m.group(0) for m in MONTH_YEAR.finditer(text) if _after(m, t0)]
    found += [
        y for y in YEAR.findall(MONTH_YEAR.sub(" ", text)) if int(y) > t0.year and y not in own
    ]
    return found


def _after(match: re.Match, t0: datetime) -> bool:
    name = match.group(1).lower()
    month = MONTH_ABBR.get(name[:4] if name.startswith("sept") else name[:3])
    day, year = int(match.group(2) or 0), int(match.group(3))
    return bool(month) and (year, month, day) > (
        t0.year,
        t0.month,
        t0.day if match.group(2) else 99,
    )


@dataclass(frozen=True)
class Evidence:
    """The lexical detector's measurements of one text (what the score is made of)."""

    topic: float
    cue: float
    similarity: float  # the largest cosine to an outcome statement (either outcome)
    later: tuple[str, ...]  # dates after t0 the text names
    past: bool  # the text reports in the past tense

    def score(self) -> float:
        if self.topic < TOPIC_MIN:
            return 0.0
        scaled = min(1.0, max(0.0, (self.similarity - SIM_FLOOR) / (SIM_CEIL - SIM_FLOOR)))
        return round(CUE_WEIGHT * self.cue + SIM_WEIGHT * scaled, 4)


class LexicalDetector:
    """Model-free: entity overlap with the question, outcome verbs (hedged or not), cosine to the
    template statements of both outcomes (embedder `minilm` by default, loaded once on first use),
    and dates after t0. `threshold` overrides REVEAL_THRESHOLD."""

    def __init__(
        self, name: str = "lexical", threshold: float = REVEAL_THRESHOLD, embedder: str = "minilm"
    ):
        self.name, self.threshold, self.embedder_name = name, float(threshold), embedder
        self._embedder = None
        self._vectors: dict[tuple, object] = {}
        self._texts: dict[bytes, object] = {}  # a text's digest → its vector (TEXTS_KEPT at most)
        self._lock = threading.Lock()

    async def judge(self, text: str, question: Question) -> Verdict:
        evidence = await asyncio.to_thread(self.measure, text, question)
        return self.verdict(evidence)

    def measure(self, text: str, question: Question) -> Evidence:
        facts = statements(question)
        text = " ".join((text or "").split())
        topic = topic_share(text, facts.groups)
        similarity = self._similarity(text, question, facts) if topic >= TOPIC_MIN and text else 0.0
        later = tuple(dates_after(text, question.t0, question.question))
        return Evidence(
            topic, outcome_cue(text, facts.numbers), similarity, later, bool(PAST.search(text))
        )

    def verdict(self, e: Evidence) -> Verdict:
        score = e.score()
        detail = f"topic {e.topic:.2f}, outcome cue {e.cue:.1f}, similarity {e.similarity:.2f}"
        if score >= self.threshold:
            return Verdict("reveals-outcome", score, self.name, f"states an outcome ({detail})")
        if e.later and e.past and e.topic >= TOPIC_MIN:
            return Verdict(
                "after-t0",
                score,
                self.name,
                f"reports dates after t0: {', '.join(e.later)} ({detail})",
            )
        return Verdict("neither", score, self.name, detail)

    def _similarity(self, text: str, question: Question, facts: Statements) -> float:
        import numpy as np

        vectors = self._statement_vectors(question, facts)
        return round(float(np.max(vectors @ self._text_vector(text))), 4)

    def _statement_vectors(self, question: Question, facts: Statements):
        key = (question.market_id, question.question)
        with self._lock:
            if key not in self._vectors:
                self._vectors[key] = self._embed_locked(list(facts.all))
            return self._vectors[key]

    def _text_vector(self, text: str):
        """The text's vector, embedded alone as it always was (the same bits), once: the same
        documents are judged against many questions (the evidence strata of a run)."""
        key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()  # not the text
        with self._lock:
            vector = self._texts.get(key)
            if vector is None:
                if len(self._texts) >= TEXTS_KEPT:
                    self._texts.clear()
                vector = self._texts[key] = self._embed_locked([text])[0]
            return vector

    def _embed_locked(self, texts: list[str]):
        if self._embedder is None:
            self._embedder = archive.get_embedder(self.embedder_name)
        return self._embedder.embed(texts)


def make(spec: str, params: dict[str, str], models=None) -> LexicalDetector:
    check_params(spec, params, ("threshold", "embedder"))
    try:
        threshold = float(params.get("threshold", REVEAL_THRESHOLD))
    except ValueError:
        raise ConfigError(f"leak detector {spec!r}: threshold must be a number") from None
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"leak detector {spec!r}: threshold must lie in [0, 1]")
    return LexicalDetector(spec, threshold, params.get("embedder", "minilm"))
