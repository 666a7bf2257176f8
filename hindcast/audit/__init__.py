"""Validity audits of stored runs (issue 16). `run_audit` judges, with leak detectors
(`hindcast.leaks`), every document each forecaster read and each rationale, and
reports the Brier with and without the forecasts that saw a leak (`figures`); `stored` keeps
detector verdicts (a cache: re-auditing is free) and finished audits (the report reads them)
in `audits.db` beside the run database; `claims` judges and weighs each sentence of a rationale
(`hindcast audit --claims`). `probe*`: the memorisation probe. `evidence` (offered whole):
evidence strata, a fixed procedure independent of any forecaster (issue 30)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.audit import evidence
    from hindcast.audit.claims import CLAIM_COLUMNS, split_claims, stance, weigh
    from hindcast.audit.probe_run import RecallRun, probe_models, probe_recall
    from hindcast.audit.probe_store import (
        RecallTable,
        default_recall_path,
        exclude_recalled_runs,
        exclude_recalled_scores,
        load_recall,
    )
    from hindcast.audit.run_audit import audit, check_detectors
    from hindcast.audit.stored import stored_findings

_WHERE = {
    "audit": "run_audit",
    "check_detectors": "run_audit",
    "CLAIM_COLUMNS": "claims",
    "default_recall_path": "probe_store",
    "evidence": "evidence",
    "exclude_recalled_runs": "probe_store",
    "exclude_recalled_scores": "probe_store",
    "load_recall": "probe_store",
    "probe_models": "probe_run",
    "probe_recall": "probe_run",
    "RecallRun": "probe_run",
    "RecallTable": "probe_store",
    "split_claims": "claims",
    "stance": "claims",
    "stored_findings": "stored",
    "weigh": "claims",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE, modules=("evidence",))
