"""An Inspect AI log of `hindcast/replay` → a hindcast run (`hindcast import-inspect LOG`).

Each scored sample becomes one stored forecast of the forecaster `inspect:model=<model>` (with
`,solver=<steps>` when the solver was not the task's default), at its (market, t0), repeat =
epoch − 1: the probability the scorer parsed, or the failure and its reason; the answer text;
the tool calls of the sample (its retrievals, so audits apply); token usage. A sample that
errored (the model could not be reached …) is an outage: logged as an attempt, never a
forecast. The run is created against the market store (and archive snapshot) the task planned
from, read back from the log and checked against the run identity it recorded; its id is the
hash of that identity plus the log's eval id, so importing one log twice stores nothing twice
and two logs are two runs. Leaderboards, analyses and audits then apply unchanged (they score
from the market store, not from Inspect's scores).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hindcast import forecasters, llm
from hindcast.errors import ConfigError
from hindcast.forecasters import require_inspect
from hindcast.http import redact, redacted
from hindcast.records import Forecast, RunIdentity, RunManifest
from hindcast.replay import prepare, run_id, scoring_policies
from hindcast.runs import RunStore, identity_form, identity_of, manifest, retrievals_of
from hindcast.timeutil import iso, parse_utc

TASKS = ("hindcast/replay", "replay")
DEFAULT_SOLVER = ["t0_bound", "generate"]


@dataclass(frozen=True)
class Imported:
    run_id: str
    forecaster: str
    samples: int
    stored: int  # new forecasts stored now (a re-import stores none)
    failures: int  # of the samples, forecast failures (no valid probability)
    outages: int  # errored samples: logged as attempts, not forecasts


@dataclass(frozen=True)
class InspectRun:
    """A log read and checked, nothing written yet: the run to create and its rows."""

    run_id: str
    forecaster: str
    identity: RunIdentity
    manifest: RunManifest
    forecasts: list  # (market_id, t0, label, repeat, Forecast, retrievals)
    outages: list  # (market_id, t0, repeat, reason)


def import_inspect(path: Path, store: RunStore, now: datetime) -> Imported:
    """Store the forecasts of the Inspect log at `path` as a hindcast run (see the module doc)."""
    return store_inspect(read_inspect(path), store, now)


def read_inspect(path: Path) -> InspectRun:
    """Read and check the log (every sample) before anything is written."""
    require_inspect()
    log = _read(Path(path))
    recorded = (log.eval.metadata or {}).get("hindcast")
    if log.eval.task not in TASKS or not recorded:
        raise ConfigError(f"{path}: not a log of the hindcast/replay task (task {log.eval.task!r})")
    if log.status != "success":
        raise ConfigError(
            f"{path}: the eval did not finish (status {log.status}); finish it with inspect "
            "eval-retry"
        )
    name = forecaster_name(log)
    plan = _plan(log, recorded, path)
    identity = dataclasses.replace(
        plan.identity, forecasters=(name,), inspect_eval=log.eval.eval_id
    )
    archive = Path(recorded["archive"]) if recorded.get("archive") else None
    provenance = {name: _Provenance(log).provenance()}
    run_manifest = manifest.build(
        identity, plan.store_root, provenance, archive, scoring_policies()
    )
    forecasts, outages = _rows(log, {(c.market_id, c.t0) for c in plan.cutoffs})
    return InspectRun(run_id(identity), name, identity, run_manifest, forecasts, outages)


def store_inspect(run: InspectRun, store: RunStore, now: datetime) -> Imported:
    """Create the run (once) and store its forecasts and outages (a forecast
    stored before is kept)."""
    store.ensure_run(run.run_id, run.identity, run.manifest, now)
    stored = sum(
        store.add(run.run_id, run.forecaster, m, t0, label, f, retrievals, repeat=repeat)
        for m, t0, label, repeat, f, retrievals in run.forecasts
    )
    logged = {
        (a.forecaster, a.market_id, a.t0, a.repeat, a.reason) for a in store.attempts(run.run_id)
    }
    for (
        m,
        t0,
        repeat,
        reason,
    ) in run.outages:  # an outage of this log already logged is not logged again
        if (run.forecaster, m, iso(t0), repeat, reason) not in logged:
            store.add_attempt(
                run.run_id, run.forecaster, m, t0, repeat, "infrastructure", reason, now
            )
    failures = sum(1 for row in run.forecasts if row[4].probability is None)
    return Imported(
        run.run_id,
        run.forecaster,
        len(run.forecasts) + len(run.outages),
        stored,
        failures,
        len(run.outages),
    )


def _read(path: Path):
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise ConfigError(f"no Inspect log at {path}")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # Inspect raises plain exceptions on a file it cannot read
        raise ConfigError(
            f"{path}: not a readable Inspect log ({type(exc).__name__}: {exc})"
        ) from None


def _plan(log, recorded: dict, path: Path):
    """The task's plan again, from the recorded store version and snapshot;
    refused if it differs."""
    from hindcast.adapters.inspect_task import spec_of

    wanted = recorded["run_identity"]
    recorded_identity = identity_of(wanted)
    spec = dataclasses.replace(
        spec_of(log.eval.task_args or {}),
        store=Path(recorded["store"]),
        version=recorded_identity.store_version,
        snapshot=recorded_identity.snapshot,
        archive=Path(recorded["archive"]) if recorded.get("archive") else None,
    )
    plan = prepare(spec)
    close = getattr(plan.index, "close", None)
    if close is not None:  # the index the check opened (its scan threads)
        close()
    if identity_form(plan.identity) != wanted:
        raise ConfigError(
            f"{path}: the market store {recorded['store']} no longer plans what the log ran "
            "(markets, cutoffs or search settings differ); nothing was stored"
        )
    return plan


def forecaster_name(log) -> str:
    """`inspect:model=<model spec>` (provider prefix `hindcast/` dropped), with `,solver=…` when
    the log's solver steps are not the task's default."""
    model = redact(
        log.eval.model.removeprefix("hindcast/")
    )  # a log from elsewhere may carry a key in a URL
    steps = [s.solver for s in (log.plan.steps if log.plan else [])]
    solver = (
        ""
        if steps == DEFAULT_SOLVER
        else f",solver={'+'.join(s for s in steps if s != 't0_bound')}"
    )
    return f"inspect:model={model}{solver}"


def _rows(log, planned: set) -> tuple[list, list]:
    """(forecasts, outages) of every sample; an unplanned, unscored, duplicated or tampered
    sample refuses the log (one line naming it; nothing stored)."""
    forecasts, outages, seen = [], [], set()
    epochs = int(getattr(log.eval.config, "epochs", None) or 1)
    for sample in log.samples or ():
        market, t0 = _where(sample)
        if (market, t0) not in planned:
            raise _refused(sample, "is not a planned (market, t0) of the task")
        if not isinstance(sample.epoch, int) or not 1 <= sample.epoch <= epochs:
            raise _refused(sample, f"has epoch {sample.epoch!r}, outside the eval's 1..{epochs}")
        if (market, t0, sample.epoch) in seen:
            raise _refused(sample, f"appears twice for epoch {sample.epoch}")
        seen.add((market, t0, sample.epoch))
        if sample.error is not None:
            outages.append((market, t0, sample.epoch - 1, redact(sample.error.message)))
            continue
        meta, retrievals = _scored(sample)
        forecast = _forecast(sample, meta, retrievals, log.eval.model)
        forecasts.append((market, t0, meta["label"], sample.epoch - 1, forecast, retrievals))
    return forecasts, outages


def _where(sample) -> tuple[str, datetime]:
    meta = sample.metadata or {}
    try:
        return str(meta["market_id"]), parse_utc(str(meta["t0"]))
    except (KeyError, ValueError) as exc:
        raise _refused(sample, f"has no valid market_id and t0 in its metadata ({exc})") from None


def _refused(sample, what: str) -> ConfigError:
    return ConfigError(f"sample {sample.id} (epoch {sample.epoch}) {what}; nothing was stored")


def _scored(sample) -> tuple[dict, tuple]:
    """The sample's hindcast score metadata and its retrievals (a list of calls), checked."""
    from hindcast.adapters.inspect_task import SCORE

    found = [
        s.metadata[SCORE]
        for s in (sample.scores or {}).values()
        if s.metadata and isinstance(s.metadata.get(SCORE), dict)
    ]
    if not found:
        raise _refused(sample, "has no hindcast score (was the log scored?)")
    meta = found[0]
    retrievals = meta.get("retrievals")
    if not isinstance(retrievals, list) or not all(isinstance(r, dict) for r in retrievals):
        raise _refused(sample, "has no retrievals list in its hindcast score")
    if not isinstance(meta.get("label"), str):
        raise _refused(sample, "has no cutoff label in its hindcast score")
    return meta, retrievals_of(redacted(r) for r in retrievals)


def _forecast(sample, meta: dict, retrievals: tuple, model: str) -> Forecast:
    """The forecast the sample's own answer holds, parsed as the scorer parses it; a score that
    says otherwise (a probability that is not the answer's, a string, NaN …) refuses the log."""
    text = sample.output.completion if sample.output is not None else ""
    parsed = llm.parse_probability(text)
    said = meta.get("probability")
    if said is not None and (isinstance(said, bool) or not isinstance(said, (int, float))):
        raise _refused(sample, f"has a score probability {said!r} that is not a number")
    if said != parsed.probability:
        answer = "no valid probability" if parsed.probability is None else parsed.probability
        raise _refused(sample, f"has a score probability {said!r} but its answer holds {answer}")
    usage, raw = _usage(sample, model), redact(text)
    if parsed.probability is None:
        return Forecast.failure(f"invalid answer: {parsed.reason}", raw=raw, usage=usage)
    evidence = forecasters.evidence_of(retrievals)
    return Forecast(parsed.probability, rationale=raw, evidence=evidence, usage=usage, raw=raw)


def _usage(sample, model: str) -> dict:
    """Token counts of the sample's model calls (hindcast's usage keys; no cache figures: Inspect
    does not report which replies hindcast's response cache answered)."""
    spec = redact(model.removeprefix("hindcast/"))
    try:
        model_name = llm.client.parse_model(spec).model
    except ValueError:  # a log made with another provider
        model_name = spec
    used = list((sample.model_usage or {}).values())
    return {
        "model": spec,
        "model_name": model_name,
        "source": "inspect",
        "prompt_tokens": sum(u.input_tokens for u in used),
        "completion_tokens": sum(u.output_tokens for u in used),
    }


class _Provenance:
    def __init__(self, log):
        self.log = log

    def provenance(self) -> dict:
        """What the log says of its eval, every text redacted (a model URL, task arguments)."""
        e = self.log.eval
        return redacted(
            {
                "class": "InspectEval",
                "model": e.model.removeprefix("hindcast/"),
                "task": e.task,
                "eval_id": e.eval_id,
                "created": e.created,
                "task_args": json.loads(json.dumps(e.task_args, default=str)),
                "solver": [s.solver for s in (self.log.plan.steps if self.log.plan else [])],
                "packages": dict(e.packages or {}),
            }
        )
