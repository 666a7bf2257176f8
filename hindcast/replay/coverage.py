"""Coverage strata from the archive alone, independent of any agent's own retrieval.

For each (market, t0): search the archive as it stood at t0 with the market's question
(vector mode, top COVERAGE_K) and count hits at cosine ≥ COVERAGE_MIN_SIMILARITY. The
stratum — `none` (0), `some` (1–4), `rich` (≥ 5) — lets "retrieval helps where the
archive discussed the event" be tested without labelling rows by the agent's own hits.
"""

from __future__ import annotations

from typing import Any

COVERAGE_K = 50
COVERAGE_MIN_SIMILARITY = 0.45
POLICY = {
    "coverage": f"vector top-{COVERAGE_K}, cosine >= {COVERAGE_MIN_SIMILARITY}; "
    "none=0, some=1-4, rich>=5"
}


def stratum(n_relevant: int) -> str:
    return "none" if n_relevant == 0 else ("some" if n_relevant < 5 else "rich")


def relevant_count(retriever: Any, question: str) -> int:
    """Pre-t0 documents similar to the question, by the fixed rule above (`retriever`: the
    TimeBoundRetriever `plan.retriever_factory` made, which it types as object)."""
    hits = retriever.search(question, COVERAGE_K, "vector")
    return sum(1 for h in hits if h.score >= COVERAGE_MIN_SIMILARITY)
