"""Build the labelled leak set (data/leakset/) from ../shared/data: real headlines, hand-checked.

Usage: python scripts/build_leakset.py [--shared ../shared/data] [--out data/leakset]
           [--set sample|heldout|both] [--candidates]

The set measures outcome-leak detectors (hindcast.leaks.registry). Every row pairs a real
headline with a market at one cutoff t0, the day before the market's effective resolution.
Two sets: data/leakset (SPECS: markets of the shipped sample, markets/sample, where t0 is the
f=1.0 cutoff of the default sweep) and data/leakset/heldout (HELDOUT: resolved markets of the
shared data outside the sample, built after the model-free detector was tuned on the first
set; no market or headline in common). `--candidates` prints what there is to read (the
positive candidates and the first negatives of each market) and writes nothing; the reading
is recorded in each set's handcheck.json, which the build reads. Without ../shared the
script stops with exit 1 and says so.

Positives (label "positive", kind "misdated-outcome"): headlines of the shared Google News
archive published AT OR AFTER the market's effective resolution, within `post_days`, whose
title matches the market's entity pattern AND its outcome words (SPECS below), taken in a
fixed hash order and read one by one until POS_PER_MARKET are kept (so no single market
dominates): a candidate is kept only if, read against the question as it stood at t0, it states
the outcome (a rival's win counts: "Rodrigo Paz wins Bolivia's presidency" settles "Will
Jhonny Fernández win …?"). Rejected candidates are listed with the reason in handcheck.json.
A kept headline is re-stamped to a time before t0 (simulated misdating): t0 minus 1 to 168
hours, fixed by a hash of (market, headline). The row keeps both instants.

Negatives (label "negative", kind "pre-t0-same-topic"): headlines published in the 45 days
before t0 whose title matches the same entity pattern: real text on the same topic a
forecaster could legitimately read. The first NEG_PER_MARKET per market in a fixed hash order
of (market, headline), never re-stamped. The first nine of each market's pool were read; those
that state or settle the outcome (the Dutch election was called days before its listed
resolution date, so before t0) or match the topic words by accident are dropped (listed with
the reason in handcheck.json) and the next in hash order takes their place — the rows past the
ninth read are selected by the rule alone.

`hand_checked` is true on every row read: all positives, and the negatives listed as read.
The outcome is in each row for evaluation only; a detector must never see it.

Provenance: headlines from wklnd/news-archive (Google News US top-headlines RSS, MIT per
upstream README; each headline belongs to its publisher, named in `source`); market text from
ForecastBench (CC BY-SA 4.0, Forecasting Research Institute). See data/leakset/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hindcast.markets.importers import import_forecastbench  # noqa: E402
from hindcast.replay.cutoffs import fraction_cutoff, lifetime  # noqa: E402
from hindcast.timeutil import ONE_DAY, iso  # noqa: E402

NEG_DAYS = 45
NEG_PER_MARKET = 12
POS_PER_MARKET = 12  # at most this many positives per market (the first kept ones in hash order)

FED = r"\bfed\b|federal reserve|powell|interest rate"
NYC = r"mamdani|cuomo|sliwa|nyc mayor|new york city mayor|new york mayor"


@dataclass(frozen=True)
class Spec:
    entity: str  # the market's topic / entities (positives and negatives)
    outcome: str = ""  # outcome words (positives); "" = no positive search for this market
    post_days: int = 14


# keyed by the first 10 characters of the market id (the conditionId)
SPECS = {
    "0x2e43d977": Spec(r"\bsumy\b"),
    "0x856817eb": Spec(r"\bmeta\b.*\bAI\b|\bAI\b.*\bmeta\b|top AI model"),
    "0x319825b4": Spec(r"nobel peace|thunberg", r"award|wins|winner|recipient|laureate|goes to", 7),
    "0xac668145": Spec(r"showgirl|taylor swift", r"million|record|sales|sold|billboard|debut", 10),
    "0x8eff77c5": Spec(r"hyperliquid"),
    "0x898656e7": Spec(
        r"bolivia", r"wins|elected|elects|president-elect|new president|presidency", 10
    ),
    "0xd97d95f1": Spec(
        r"mariners|blue jays|\bALCS\b|american league",
        r"world series|pennant|game 7|beat|wins|won",
        10,
    ),
    "0x1321095e": Spec(r"argentin|milei", r"wins?\b|victory|triumph|landslide|secures", 10),
    "0x564dc4a3": Spec(r"argentin|milei", r"wins?\b|victory|triumph|landslide|secures", 10),
    "0x62995cb8": Spec(r"argentin|milei", r"wins?\b|victory|triumph|landslide|secures", 10),
    "0x829f5e07": Spec(r"argentin|milei", r"wins?\b|victory|triumph|landslide|secures", 10),
    "0x8e9b6942": Spec(FED, r"cuts?\b|lowers?|second", 5),
    "0xd6e0317c": Spec(FED, r"cuts?\b|lowers?", 5),
    "0x19848149": Spec(r"kostiantynivka|kostyantynivka|pokrovsk"),
    "0x4c9ccd14": Spec(
        r"world series|dodgers|blue jays",
        r"wins?\b|won\b|champion|retain|title|parade|back-to-back",
        10,
    ),
    "0x356057e0": Spec(
        r"dutch|netherlands|d66|jetten|wilders",
        r"wins?\b|won\b|victory|largest|first place|result",
        14,
    ),
    "0x8be38f21": Spec(
        r"dutch|netherlands|d66|jetten|wilders",
        r"wins?\b|won\b|victory|largest|first place|result",
        14,
    ),
    "0xdd69d771": Spec(
        r"dutch|netherlands|d66|jetten|wilders",
        r"wins?\b|won\b|victory|largest|first place|result",
        14,
    ),
    "0x0a7e45f6": Spec(r"\bMVP\b|yordan|alvarez"),
    "0xbb50a8be": Spec(NYC, r"wins?\b|won\b|elected|victory|mayor-elect|defeat", 4),
    "0xda8ebb9d": Spec(
        r"sherrill|ciattarelli|new jersey gov|n\.j\. gov",
        r"wins?\b|won\b|defeat|governor-elect|victor",
        7,
    ),
    "0xdf26e086": Spec(NYC + r"|lander"),
    "0xebddfcf7": Spec(NYC, r"wins?\b|won\b|elected|victory|mayor-elect|defeat", 4),
    "0xf14a0ca3": Spec(NYC + r"|andrew yang"),
    "0x50b8b0f7": Spec(r"bitcoin"),
    "0xa908e77b": Spec(
        r"\bchile|\bkast\b|\bjara\b", r"runoff|run-off|wins?\b|elected|advance|head to|face", 10
    ),
    "0xbea5d517": Spec(r"venezuela"),
    "0x184228c1": Spec(
        r"super bowl|saints", r"wins?\b|won\b|champion|beat|defeat|victory|rout", 130
    ),
    "0x199d0691": Spec(r"NFC|cardinals", r"wins?\b|won\b|beat|defeat|advance|champion", 130),
    "0xd87fa4ed": Spec(r"AFC\b|titans", r"wins?\b|won\b|beat|defeat|advance|champion", 130),
    "0x1bef2cec": Spec(r"bucharest|romania"),
    "0x6c8a58fb": Spec(r"bucharest|romania"),
    "0x8c866938": Spec(r"bucharest|romania"),
    "0x9b93c610": Spec(r"bucharest|romania"),
    "0xeee36eb4": Spec(r"bucharest|romania"),
    "0xef5880e9": Spec(r"bucharest|romania"),
    "0x05af636e": Spec(FED, r"cuts?\b|lowers?|third", 5),
    "0x37100ed3": Spec(FED, r"cuts?\b|lowers?|third", 5),
    "0x4319532e": Spec(FED, r"cuts?\b|lowers?|third", 5),
    "0x3f3ab94b": Spec(r"poker"),
    "0x58a07407": Spec(r"poker"),
    "0xac795778": Spec(r"poker"),
    "0x2762fb84": Spec(
        r"AFC South|jaguars|colts", r"clinch|wins?\b|won\b|division title|champion", 40
    ),
    "0xc30cf28f": Spec(r"avatar|box office", r"opening|opens|debut|box office|weekend", 14),
    "0x0d82012d": Spec(
        r"russia.*(\bus\b|u\.s\.|america|pentagon)|(\bus\b|u\.s\.|america|pentagon).*russia"
    ),
    "0x8da154fd": Spec(r"openai"),
    "0x2239eba5": Spec(
        r"best picture|oscar|academy award", r"wins?\b|won\b|nominat|snub|leads", 60
    ),
    "0xbd34bea6": Spec(r"aramco|most valuable compan|largest compan|market cap"),
    "0x7267c8c3": Spec(r"pacers|central division"),
    "0xda5e93ec": Spec(
        r"olympic|gold medal|medal", r"norway|tops|most gold|medal table|medal count|final", 14
    ),
    "0xf0d4ee47": Spec(r"\biran", r"strike|attack|war\b|bomb|missile|killed", 2),
    "0x9ec16fa7": Spec(r"best picture|oscar|academy award", r"wins?\b|won\b|takes", 10),
    "0x257b1820": Spec(FED, r"holds?\b|steady|unchanged|pause|leaves", 7),
    "0x71731ea0": Spec(r"\bbulls\b|worst record"),
    "0x1ca24652": Spec(
        r"paris mayor|mayor of paris|paris'? municipal|paris election|bournazel|gr[ée]goire|rachida dati",
        r"wins?\b|won\b|elected|victory|new mayor",
        10,
    ),
    "0x2701e5a5": Spec(r"taiwan"),
    "0xd3320fd4": Spec(r"\bnato\b"),
}

# The held-out set: resolved markets of the shared data NOT in the sample, read after the
# model-free detector was tuned on the sample set — its figures measure how the detector
# generalises. Keyed like SPECS. Markets whose news the sample set already holds (the NYC,
# New Jersey and Paris races, the October and December Fed meetings, the Nobel, Chile's first
# round, the strikes on Iran) are left out, so no held-out headline is in the sample set.
HELDOUT = {
    "0x01ef26bf": Spec(r"czech|babi[sš]\b", r"wins?\b|won\b|victory|cruises", 10),
    "0xb38ff89c": Spec(r"czech|babi[sš]\b", r"wins?\b|won\b|victory|cruises", 10),
    "0x02dc46f4": Spec(FED, r"cuts?\b|lowers?|quarter", 5),
    "0x6c3d5fba": Spec(FED, r"cuts?\b|lowers?|quarter", 5),
    "0xebfda84c": Spec(FED, r"cuts?\b|lowers?|quarter", 5),
    "0xc33864b6": Spec(r"palestin", r"recogni", 10),
    "0xc2e5f441": Spec(r"hamas|gaza", r"ceasefire|truce|deal|agree", 4),
    "0x3b7e0306": Spec(r"nigeria", r"strike|struck|attack|bomb", 10),
    "0x18b1dc15": Spec(r"portug", r"wins?\b|defeats?|elects|beating|runoff|run-off", 20),
    "0x70909f0b": Spec(
        r"khamenei|supreme leader", r"new supreme|success|named|funeral|killed|death|dead", 10
    ),
    "0x38837354": Spec(r"crockett|talarico", r"wins?\b|won\b|defeats?|victory|projects", 7),
}


@dataclass(frozen=True)
class Headline:
    id: str
    text: str
    source: str
    created_at: datetime


@dataclass(frozen=True)
class Target:
    market: object  # hindcast.records.Market
    status: str
    resolved_at: datetime
    t0: datetime


def digest(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


def load_headlines(folder: Path) -> list[Headline]:
    """Every shared headline, first sighting kept when a title repeats (by id order)."""
    rows, seen = [], set()
    for path in sorted(folder.glob("news_*.jsonl")):
        for line in path.open(encoding="utf-8"):
            raw = json.loads(line)
            if raw["title"] not in seen:
                seen.add(raw["title"])
                when = datetime.fromtimestamp(raw["created_utc"], timezone.utc)
                rows.append(Headline(raw["id"], raw["title"], raw["source"], when))
    return rows


def load_targets(folder: Path, specs: dict[str, Spec]) -> list[Target]:
    """The markets of `specs` in ForecastBench files, each at t0 = the day before its effective
    resolution (for a sample market that is its f=1.0 cutoff, which is checked)."""
    bundle = import_forecastbench(folder / "markets.jsonl", folder / "prices_daily.csv")
    resolutions = {r.market_id: r for r in bundle.resolutions}
    targets = []
    for market in (m for m in bundle.markets if m.id[:10] in specs):
        r = resolutions[market.id]
        t0 = r.resolved_at - ONE_DAY
        if market.id in bundle.prices or market.opened_at:
            assert (
                t0 == fraction_cutoff(lifetime(market, r, bundle.prices.get(market.id, ())), 1.0).t0
            )
        targets.append(Target(market, r.status, r.resolved_at, t0))
    return targets


def positive_candidates(target: Target, spec: Spec, headlines: list[Headline]) -> list[Headline]:
    if not spec.outcome:
        return []
    entity, words = re.compile(spec.entity, re.I), re.compile(spec.outcome, re.I)
    end = target.resolved_at + timedelta(days=spec.post_days)
    found = [
        h
        for h in headlines
        if target.resolved_at <= h.created_at < end
        and entity.search(h.text)
        and words.search(h.text)
    ]
    return sorted(found, key=lambda h: digest(target.market.id, h.id))


def negative_pool(target: Target, spec: Spec, headlines: list[Headline]) -> list[Headline]:
    """Same-topic headlines of the NEG_DAYS before t0, in the fixed hash order."""
    entity, start = re.compile(spec.entity, re.I), target.t0 - timedelta(days=NEG_DAYS)
    pool = [h for h in headlines if start <= h.created_at < target.t0 and entity.search(h.text)]
    return sorted(pool, key=lambda h: digest(target.market.id, h.id))


def restamp(target: Target, headline: Headline) -> datetime:
    return target.t0 - timedelta(hours=1 + digest("stamp", target.market.id, headline.id) % 168)


def row(target: Target, h: Headline, label: str, stamped: datetime, checked: bool) -> dict:
    return {
        "id": f"{label[:3]}-{target.market.id[:10]}-{h.id}",
        "market_id": target.market.id,
        "question": target.market.question,
        "t0": iso(target.t0),
        "text": h.text,
        "source": h.source,
        "headline_id": h.id,
        "original_created_at": iso(h.created_at),
        "stamped_created_at": iso(stamped),
        "label": label,
        "kind": "misdated-outcome" if label == "positive" else "pre-t0-same-topic",
        "hand_checked": checked,
        "outcome": target.status,
    }


def key(target: Target, h: Headline) -> str:
    return f"{target.market.id[:10]}:{h.id}"


def positives(target: Target, spec: Spec, headlines: list[Headline], check: dict) -> list[dict]:
    """Candidates read and kept (listed in check['positive_ok']), the first POS_PER_MARKET in hash order."""
    ok = set(check["positive_ok"])
    kept = [h for h in positive_candidates(target, spec, headlines) if key(target, h) in ok]
    return [row(target, h, "positive", restamp(target, h), True) for h in kept[:POS_PER_MARKET]]


def negatives(target: Target, spec: Spec, headlines: list[Headline], check: dict) -> list[dict]:
    """The first NEG_PER_MARKET of the pool not dropped; hand-checked when listed as read."""
    dropped, read = check["negative_dropped"], set(check["negative_read"])
    kept = [h for h in negative_pool(target, spec, headlines) if key(target, h) not in dropped]
    return [
        row(target, h, "negative", h.created_at, key(target, h) in read)
        for h in kept[:NEG_PER_MARKET]
    ]


def market_row(target: Target) -> dict:
    m = target.market
    return {
        "market_id": m.id,
        "question": m.question,
        "description": m.description,
        "url": m.url,
        "topic": m.topic,
        "t0": iso(target.t0),
        "resolved_at": iso(target.resolved_at),
        "outcome": target.status,
    }


def build(headlines: list[Headline], source: Path, specs: dict[str, Spec], out: Path) -> None:
    check = json.loads((out / "handcheck.json").read_text(encoding="utf-8"))
    rows, used = [], []
    for t in load_targets(source, specs):
        spec = specs[t.market.id[:10]]
        mine = positives(t, spec, headlines, check) + negatives(t, spec, headlines, check)
        rows += mine
        used += [market_row(t)] if mine else []
    write_jsonl(out / "leakset.jsonl", rows)
    write_jsonl(out / "markets.jsonl", used)
    summarise(rows, len(used))


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def summarise(rows: list[dict], n_markets: int) -> None:
    pos = [r for r in rows if r["label"] == "positive"]
    print(
        f"leak set: {len(rows)} rows over {n_markets} markets — {len(pos)} positives "
        f"({len({r['market_id'] for r in pos})} markets), {len(rows) - len(pos)} negatives; "
        f"hand-checked {sum(r['hand_checked'] for r in rows)}"
    )


def candidates(headlines: list[Headline], source: Path, specs: dict[str, Spec]) -> None:
    """Print the positive candidates and the first negatives of each market (to read)."""
    for t in load_targets(source, specs):
        spec = specs[t.market.id[:10]]
        print(f"\n## {t.market.id[:10]} [{t.status}] t0={iso(t.t0)} {t.market.question}")
        for h in positive_candidates(t, spec, headlines)[: POS_PER_MARKET + 8]:
            print(f"  + {key(t, h)}  {iso(h.created_at)[:16]}  {h.text}")
        for h in negative_pool(t, spec, headlines)[: NEG_PER_MARKET + 3]:
            print(f"  - {key(t, h)}  {iso(h.created_at)[:16]}  {h.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared/data")
    parser.add_argument("--out", type=Path, default=ROOT / "data/leakset")
    parser.add_argument("--set", choices=("sample", "heldout", "both"), default="both")
    parser.add_argument(
        "--candidates", action="store_true", help="print the candidates to read, write nothing"
    )
    args = parser.parse_args()
    if not (args.shared / "news/headlines").is_dir() or not (args.shared / "polymarket").is_dir():
        sys.exit(
            f"build_leakset: shared data not found at {args.shared} (needs news/headlines/ and polymarket/); "
            "the set is built from ../shared/data, which a user's clone does not have"
        )
    headlines = load_headlines(args.shared / "news/headlines")
    sets = {
        "sample": (ROOT / "markets/sample/forecastbench", SPECS, args.out),
        "heldout": (args.shared / "polymarket", HELDOUT, args.out / "heldout"),
    }
    for name in ("sample", "heldout") if args.set == "both" else (args.set,):
        source, specs, out = sets[name]
        print(f"# {name}")
        if args.candidates:
            candidates(headlines, source, specs)
        else:
            build(headlines, source, specs, out)


if __name__ == "__main__":
    main()
