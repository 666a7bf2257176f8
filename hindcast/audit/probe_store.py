"""The probe's results file, and dropping recalled (model, market) pairs from scored rows.

Storage: one JSON file (`recall.json`, by default beside the run database), not a table of
the run database: the probe is about models and markets, not about a run, and the leaderboard
of any run reads it. It is written whole and atomically (a temporary file, then a rename: a
failed write leaves the previous file intact), byte-stable (sorted keys and rows), and MERGED:
a new probe replaces the answers of the same (model, market, kind, t0) and keeps the rest.
The file carries the definitions (thresholds) and the prompt hashes it was made with.

`exclude_recalled(rows, table, model_of)` drops the scored rows of every (model, market)
pair the table says the model recalls (the `after` rule), failures included, and says how
many per forecaster; rows of a model the table never probed are KEPT and named in the note
(never silently treated as "not recalled").
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hindcast.audit.probe import (
    KINDS,
    RECALL_CONFIDENCE,
    T0_EXTREME,
    TEMPLATES,
    ProbeAnswer,
)
from hindcast.errors import ConfigError
from hindcast.llm import prompts

FORMAT = "hindcast-recall"
VERSION = 1
FILE_NAME = "recall.json"


@dataclass(frozen=True)
class RecallTable:
    """Every stored probe answer, keyed by (model, market, kind, t0)."""

    answers: tuple[ProbeAnswer, ...] = ()

    def merged(self, newer: Iterable[ProbeAnswer]) -> RecallTable:
        rows = {a.key: a for a in self.answers}
        rows.update({a.key: a for a in newer})
        return RecallTable(tuple(sorted(rows.values(), key=lambda a: a.key)))

    def models(self) -> set[str]:
        return {a.model for a in self.answers}

    def recalled(self) -> set[tuple[str, str]]:
        """(model, market) pairs whose outcome the model named correctly and
        confidently when asked plainly."""
        return {(a.model, a.market_id) for a in self.answers if a.kind == "after" and a.hit}

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "definitions": {
                "recall_confidence": RECALL_CONFIDENCE,
                "t0_extreme": T0_EXTREME,
                "recalled": (
                    "kind 'after': the real outcome named with confidence >= recall_confidence"
                ),
                "t0_hit": (
                    "kind 't0': p >= t0_extreme on a YES market, p <= 1 - t0_extreme on a NO one"
                ),
            },
            "prompts": {TEMPLATES[k]: prompts.load(TEMPLATES[k]).sha256 for k in KINDS},
            "answers": [a.to_json() for a in self.answers],
        }


def default_recall_path(db_url: str, out_dir: Path | None = None) -> Path:
    """recall.json beside the run database when it is a SQLite file, else in
    `out_dir` (or runs/)."""
    from hindcast.runs import db_file

    path = db_file(db_url)
    return (path.parent if path is not None else Path(out_dir or "runs")) / FILE_NAME


def load_recall(path: Path, missing_ok: bool = True) -> RecallTable:
    """The table stored at `path`; a missing file is an empty table, or (`missing_ok=False`,
    what an exclusion asks) an error: excluding by a probe never run must not pass silently."""
    path = Path(path)
    if not path.exists():
        if missing_ok:
            return RecallTable()
        raise ConfigError(
            f"no probe results at {path}: run `hindcast probe recall -f SPEC` first "
            "(or name the file with --recall FILE)"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("format") != FORMAT or int(document.get("version", 0)) > VERSION:
            raise ValueError(f"not a {FORMAT} file of version ≤ {VERSION}")
        return RecallTable(tuple(ProbeAnswer.from_json(row) for row in document["answers"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"probe results {path}: cannot be read ({exc})") from None


def save_recall(path: Path, table: RecallTable) -> Path:
    """Write the table atomically (the previous file stays whole if this fails)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        json.dumps(table.to_json(), indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
        + "\n"
    )
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


# ---- excluding recalled markets ----------------------------------------------------------------
@dataclass(frozen=True)
class Exclusion:
    """Scored rows without the recalled (model, market) pairs, and what was dropped."""

    rows: list
    dropped: dict[str, int]  # forecaster → rows dropped (failures included)
    unprobed: dict[str, int]  # forecaster → rows kept because its model was never probed
    markets: dict[str, int]  # forecaster → distinct markets dropped

    def note(self) -> str:
        total = sum(self.dropped.values())
        parts = [
            (
                f"excluded {total} row(s) of (model, market) pairs the model recalls "
                f"(memorisation probe, outcome named with confidence >= {RECALL_CONFIDENCE:g})"
            )
        ]
        parts += [
            f"{f}: {n} row(s), {self.markets[f]} market(s)"
            for f, n in sorted(self.dropped.items())
            if n
        ]
        parts += [
            f"{f}: model not probed, {n} row(s) kept" for f, n in sorted(self.unprobed.items())
        ]
        return "; ".join(parts)


def exclude_recalled(
    rows: Sequence, table: RecallTable, model_of: Callable[[str], str | None]
) -> Exclusion:
    """Drop every scored row (a ScoredRow or anything with `forecaster` and `market_id`) whose
    forecaster's model (`model_of(forecaster)`) recalls its market. A forecaster without a
    model (a baseline) keeps every row; one whose model the table never probed keeps every row
    and is counted in `unprobed`."""
    recalled, probed = table.recalled(), table.models()
    kept, dropped, unprobed, markets = [], {}, {}, {}
    for row in rows:
        model = model_of(row.forecaster)
        if model is not None and model not in probed:
            unprobed[row.forecaster] = unprobed.get(row.forecaster, 0) + 1
        if model is not None and (model, row.market_id) in recalled:
            dropped[row.forecaster] = dropped.get(row.forecaster, 0) + 1
            markets.setdefault(row.forecaster, set()).add(row.market_id)
            continue
        kept.append(row)
    return Exclusion(kept, dropped, unprobed, {f: len(m) for f, m in markets.items()})


def exclude_recalled_scores(scores, table: RecallTable):
    """A scored run (`RunScores`) without the rows of recalled pairs: (RunScores, Exclusion).
    Each forecaster's model is read as the regime labels read it (its provenance, else its spec)."""
    from hindcast.scoring import model_of

    provenance: Mapping = scores.manifest.get("forecasters", {}) or {}
    exclusion = exclude_recalled(scores.rows, table, lambda f: model_of(f, provenance.get(f)))
    return replace(scores, rows=exclusion.rows), exclusion


def exclude_recalled_runs(scored: Sequence, path: Path) -> tuple[list, list[str]]:
    """Scored runs without the recalled pairs of the probe results at `path` (which must exist),
    and one note per run (what `--exclude-recalled` does to a leaderboard or a rescore)."""
    table = load_recall(path, missing_ok=False)
    pairs = [exclude_recalled_scores(scores, table) for scores in scored]
    return [s for s, _ in pairs], [f"run {s.run_id}: {e.note()}" for s, e in pairs]
