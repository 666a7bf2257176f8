"""Claim-level rationale leakage (`hindcast audit --claims`): which sentences of a forecast's
rationale state a fact after t0, and how much each could have moved its probability.

A rationale is split into claims (`split_claims`: sentences and list items). Each claim is judged
by the audit's detectors against the question as it stood at the forecast's t0 — the same
detectors and verdict cache as the whole texts (run_audit) — and flagged like a text is (any
detector labels it "reveals-outcome" or "after-t0"; the most severe label is kept).

The weight of a flagged claim (`weigh`) is a model-free proxy of its effect on the probability:

    weight = stance(claim) × (p − reference)

where p is the forecast's probability, reference the market price at t0 (the last point strictly
before t0) or 0.5 when the market had none, and stance +1 when the claim reads as the question's
YES outcome, −1 when it reads as NO (`stance`: a negation or a loss word — "not", "no", "never",
"n't", "failed", "lost", "rejected", "defeated" — makes it NO). A positive weight: the claim
points the way the forecaster moved off the reference, and by that much (|p − reference| bounds
what the claim could explain); negative: it points the other way; None: the forecast failed (no
probability). A forecast's leak weight is its largest positive claim weight (0 when none) — not a
sum, as several sentences often restate one fact.

Limits (stated in the audit's notes): the stance is lexical — a claim naming the winner on a
loser's market ("Y won", on "Will X win?") reads as YES; a pronoun-only claim ("He won.") names
none of the question's entities, so `lexical` does not flag it; the weight is an upper bound of
the claim's influence, not a measured effect (re-asking the forecaster without the claim would
measure it, but a stored run's forecaster is not re-run by an audit). The audit is after the
fact: nothing of it reaches a forecaster.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SEVERITY = ("reveals-outcome", "after-t0")
MIN_CHARS = 12  # a shorter piece ("Yes.", "1)") is joined to the claim before it
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr vs etc inc corp co ltd gov sen rep gen col prof approx no fig est "
    "jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e u.s u.k u.n".split()
)
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|fail(?:s|ed)?|lost|lose|loses|rejected|"
    r"defeated|dropped out|withdr[ae]w)\b|n['’]t\b",
    re.IGNORECASE,
)


def split_claims(rationale: str) -> list[str]:
    """The claims of a rationale in order: its lines (a list item's bullet dropped; a line that
    does not end a sentence continues on the next unless that one is a list item or blank), each
    split into sentences at . ! ? … followed by a capital or a digit — never after an abbreviation
    ("U.S.", "Dr.", "Jan.") or an initial ("J. Smith"); whitespace collapsed; within a line a piece
    shorter than MIN_CHARS ("Yes.") is joined to the piece before it, or to the next one when it
    comes first."""
    if not isinstance(rationale, str):
        raise TypeError(f"a rationale is text, not {type(rationale).__name__}")
    claims: list[str] = []
    for line in _lines(rationale):
        pieces: list[str] = []
        carry = ""
        for piece in _sentences(line):
            piece = f"{carry} {piece}".strip()
            carry = ""
            if len(piece) >= MIN_CHARS or not pieces:
                if len(piece) < MIN_CHARS:
                    carry = piece
                    continue
                pieces.append(piece)
            else:
                pieces[-1] = f"{pieces[-1]} {piece}"
        claims += pieces + ([carry] if carry else [])
    return claims


def _lines(rationale: str) -> list[str]:
    """Logical lines: bullets dropped, a wrapped sentence joined, whitespace collapsed."""
    lines: list[str] = []
    open_line = False  # the last line does not end a sentence
    for raw in rationale.splitlines():
        bullet = bool(_BULLET.match(raw))
        line = " ".join(_BULLET.sub("", raw).split())
        if not line:
            open_line = False
            continue
        if open_line and not bullet:
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
        open_line = not re.search(r"[.!?…:;][\"'”’)\]]*$", lines[-1])
    return lines


def _sentences(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(line):
        before = line[start : match.start()].rstrip(".!?…\"'”’)]").split()
        last = before[-1].lower() if before else ""
        if last in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)*[a-z]", last):
            continue  # "U.S. officials", "J. Smith": not a sentence end
        out.append(line[start : match.start()].strip())
        start = match.end()
    out.append(line[start:].strip())
    return [s for s in out if s]


def stance(claim: str) -> int:
    """+1: the claim reads as the question's YES outcome; −1: as NO (a negation or loss word)."""
    return -1 if _NEGATION.search(claim) else 1


def weigh(claim: str, probability: float | None, price: float | None) -> float | None:
    """stance × (p − reference), reference the market price at t0 or 0.5; None without p."""
    if probability is None:
        return None
    reference = 0.5 if price is None else price
    return round(stance(claim) * (probability - reference), 6)


@dataclass(frozen=True)
class Claim:
    """One judged claim of one forecast's rationale."""

    row: tuple  # (forecaster, market_id, t0 ISO, repeat)
    index: int  # its place in the rationale (0-based)
    text: str
    label: str | None  # the most severe label over the detectors; None: a detector gave no verdict
    score: float | None  # the largest score among the verdicts that flagged it


def forecast_entries(
    claims: Sequence[Claim], rows: dict[tuple, object], excerpt: int = 300
) -> list[dict]:
    """Per forecast with a judged claim: its probability, the reference, every flagged claim with
    its label, score, stance and weight, and its leak weight (the largest positive weight)."""
    by_row: dict[tuple, list[Claim]] = {}
    for claim in claims:
        by_row.setdefault(claim.row, []).append(claim)
    out = []
    for key, mine in sorted(by_row.items()):
        row = rows[key]
        p, price = getattr(row, "probability", None), getattr(row, "market_price", None)
        flagged = [c for c in mine if c.label in SEVERITY]
        listed = [
            {
                "index": c.index,
                "claim": c.text[:excerpt],
                "label": c.label,
                "score": c.score,
                "stance": stance(c.text),
                "weight": weigh(c.text, p, price),
            }
            for c in flagged
        ]
        weights = [c["weight"] for c in listed if c["weight"] is not None]
        forecaster, market, t0, repeat = key
        out.append(
            {
                "forecaster": forecaster,
                "market": market,
                "t0": t0,
                "repeat": repeat,
                "probability": p,
                "reference": 0.5 if price is None else price,
                "reference_is": "0.5 (no market price)" if price is None else "market price",
                "claims": len(mine),
                "unjudged": sum(c.label is None for c in mine),
                "flagged": listed,
                "leak_weight": max([0.0, *weights]) if p is not None else None,
            }
        )
    return out


CLAIM_COLUMNS = (
    "forecaster",
    "rationales",
    "claims",
    "claims_flagged",
    "unjudged",
    "forecasts_flagged",
    "leak_weight_sum",
    "leak_weight_max",
)


def summary(entries: Sequence[dict]) -> list[dict]:
    """Per forecaster: rationales and claims judged, claims flagged, claims without a verdict,
    forecasts with a flagged claim, and the sum and largest of their leak weights."""
    out = []
    for name in sorted({e["forecaster"] for e in entries}):
        mine = [e for e in entries if e["forecaster"] == name]
        weights = [e["leak_weight"] for e in mine if e["flagged"] and e["leak_weight"] is not None]
        out.append(
            {
                "forecaster": name,
                "rationales": len(mine),
                "claims": sum(e["claims"] for e in mine),
                "claims_flagged": sum(len(e["flagged"]) for e in mine),
                "unjudged": sum(e["unjudged"] for e in mine),
                "forecasts_flagged": sum(bool(e["flagged"]) for e in mine),
                "leak_weight_sum": round(sum(weights), 6),
                "leak_weight_max": max(weights, default=0.0),
            }
        )
    return out


NOTES = (
    "Claims: each rationale split into sentences and list items, each judged by the audit's "
    "detectors against the question at t0 (flagged: reveals-outcome or after-t0).",
    "weight = stance × (p − reference): stance +1 if the claim reads as YES, −1 if it holds a "
    "negation or loss word; reference = the market price at t0, or 0.5 without one. A forecast's "
    "leak_weight: its largest positive claim weight — an upper bound of what the leaked claims "
    "could explain of its departure from the market, not a measured effect (the forecaster is "
    "not re-run). Known misses: a winner named on a loser's market reads as YES; a pronoun-only "
    "claim names none of the question's entities.",
)
