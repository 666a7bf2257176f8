"""Validity audits of stored runs (issue 16). `run_audit` judges, with leak detectors
(`hindcast.forecasters.leaks`), every document each forecaster read and each rationale, and
reports the Brier with and without the forecasts that saw a leak (`figures`); `stored` keeps
detector verdicts (a cache: re-auditing is free) and finished audits (the report reads them)
in `audits.db` beside the run database. `probe*`: the memorisation probe."""
