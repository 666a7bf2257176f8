"""Validity audits of stored runs (issue 16). `run_audit` judges, with leak detectors
(`hindcast.leaks`), every document each forecaster read and each rationale, and
reports the Brier with and without the forecasts that saw a leak (`figures`); `stored` keeps
detector verdicts (a cache: re-auditing is free) and finished audits (the report reads them)
in `audits.db` beside the run database; `claims` judges and weighs each sentence of a rationale
(`hindcast audit --claims`). `probe*`: the memorisation probe. `evidence` (offered whole):
evidence strata, a fixed procedure independent of any forecaster (issue 30)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.audit import evidence
    from hindcast.audit.claims import CLAIM_COLUMNS, split_claims, stance, weigh
    from hindcast.audit.probe_run import probe_models, probe_recall
    from hindcast.audit.probe_store import default_recall_path, exclude_recalled_runs
    from hindcast.audit.run_audit import audit, check_detectors
    from hindcast.audit.stored import stored_findings

__all__ = ["CLAIM_COLUMNS", "audit", "check_detectors", "default_recall_path", "evidence",
    "exclude_recalled_runs", "probe_models", "probe_recall", "split_claims", "stance",
    "stored_findings", "weigh"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
