"""Build the second labelled leak set (data/leakset/v2/{dev,heldout}) from ../shared/data.

Usage: python scripts/build_leakset_v2.py [--shared ../shared/data] [--candidates]

A larger and more varied set than data/leakset: markets of the shared data that are in neither
data/leakset nor data/leakset/heldout, grouped into news CLUSTERS (markets settled by the same
news — the four Fed-chair markets, the Super Bowl markets — form one cluster). Each cluster goes
whole to `dev` or to `heldout` by a fixed rule chosen before any reading or tuning:
sha256("leakset-v2:" + cluster) taken as an integer, ≡ 0 mod 3 → heldout (so the split is
clustered by market and by news; one headline is in both parts, for clusters with different
cutoffs — see the set's README).

Candidates: for each market, headlines AT OR AFTER its effective resolution (within
`post_days`) that match its entity pattern and its outcome words (positive candidates), and the
same-topic headlines of the 45 days before t0 (negative candidates; those with hedged, polled or
forecast wording first, so the hard negatives are read). Both in a fixed hash order. EVERY row of
the set was read against the question as it stood at t0 and labelled by hand in
`handcheck.json`: `"market:headline": "positive:<category>" | "negative:<category>" |
"drop:<reason>"`. Only read rows are in the set (`hand_checked` is true on every row). A positive
is re-stamped to 1–168 hours before t0 (simulated misdating) like data/leakset; a negative keeps
its instant. Categories are described in data/leakset/v2/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from build_leakset import (  # noqa: E402
    NEG_DAYS,
    Headline,
    Spec,
    Target,
    digest,
    key,
    load_headlines,
    market_row,
    restamp,
    row,
    write_jsonl,
)

from hindcast.markets.importers import import_forecastbench  # noqa: E402
from hindcast.timeutil import ONE_DAY  # noqa: E402

OUT = ROOT / "data/leakset/v2"
SHOW_POS, SHOW_NEG = 14, 6  # candidates printed per market to read
HARD = re.compile(
    r"\b(?:polls?|odds|expect\w*|could|may|might|would|forecast\w*|predict\w*|bets?|favou?rite\w*|"
    r"lead\w*|ahead of|likely|poised|set to|will|if|whether|what to know|hopes?|fears?|eyes)\b",
    re.I,
)
FED = r"\bfed\b|federal reserve|powell|interest rate"
HOLD = r"holds?\b|steady|unchanged|leaves|keeps|pause|dissent"
FED_CHAIR = r"fed chair|\\bwarsh\\b|hassett|next fed|lead the fed|fed pick"
BTC = r"bitcoin|\bcrypto"
OSCARS = r"oscar|academy award|best picture|best director|best actor|best actress"
CHAIR_PICK = r"\bwarsh\b|nomine|nominat|pick|confirm"
PRICE = r"\d|below|falls?|drops?|slides?|tumbles?|plunge|sinks?"
SB = r"super bowl|seahawks|patriots|kansas city chiefs|commanders"
INFL = r"inflation|\bcpi\b|consumer prices"
IRAN = r"\biran"
IRAN_HIT = r"strikes?|struck|attack|bomb|war\b|missile|killed|ceasefire"
WINS = r"wins?\b|won\b|takes|victory|sweep|winners?\b|beat|defeat"


@dataclass(frozen=True)
class Entry:
    cluster: str
    spec: Spec


# keyed by the first 10 characters of the market id; the cluster names the news that settles it
V2 = {
    "0x362c61cf": Entry("fed-2025-07", Spec(FED, HOLD, 3)),
    "0x17815081": Entry("fed-2026-01", Spec(FED, HOLD, 3)),
    "0x7c6c69d9": Entry("fed-2026-01", Spec(FED, HOLD, 3)),
    "0x4b23c2e3": Entry("fed-2026-03", Spec(FED, HOLD, 3)),
    "0xb2e1fde8": Entry("boe-2026-03", Spec(r"bank of england|\bboe\b|bailey", HOLD + r"|cut", 3)),
    "0x60acc46c": Entry("fed-chair", Spec(FED_CHAIR, CHAIR_PICK, 20)),
    "0x998acf9e": Entry("fed-chair", Spec(FED_CHAIR, CHAIR_PICK, 20)),
    "0xdc609df6": Entry("fed-chair", Spec(FED_CHAIR, CHAIR_PICK, 20)),
    "0xfbb2046e": Entry("fed-chair", Spec(FED_CHAIR, CHAIR_PICK, 20)),
    "0x21d5b50f": Entry("fed-chair-2025", Spec(FED_CHAIR, CHAIR_PICK + r"|hassett|announce", 35)),
    "0xe26424b7": Entry(
        "fed-chair-2025", Spec(FED_CHAIR + r"|lutnick", CHAIR_PICK + r"|hassett|announce", 35)
    ),
    "0xa76a7eca": Entry("btc-2025-11", Spec(BTC, PRICE, 7)),
    "0xfb0c98ef": Entry("btc-2025-11", Spec(BTC, PRICE, 7)),
    "0xf2591ada": Entry("btc-2026-02", Spec(BTC, PRICE, 10)),
    "0xb08e5d3c": Entry("btc-2026-02", Spec(BTC, PRICE + r"|rebound|month", 20)),
    "0xee97e9ed": Entry("btc-2026-02", Spec(BTC, PRICE + r"|rebound|month", 20)),
    "0x3126cccd": Entry(
        "treasury-2025-10",
        Spec(r"treasury yield|10-year|bond yield", r"4%|below|falls?|drops?|lowest", 5),
    ),
    "0x1d395b8d": Entry("super-bowl", Spec(SB, WINS + r"|champion|parade", 20)),
    "0x8bf53bab": Entry("super-bowl", Spec(SB, WINS + r"|champion|parade", 20)),
    "0xd407fc7b": Entry(
        "eagles-2026-01",
        Spec(r"\beagles\b", WINS + r"|eliminat|upset|season ends|lose|loss|fall", 10),
    ),
    "0x3e6cb7ad": Entry(
        "afc-west",
        Spec(
            r"\bchiefs\b|broncos|chargers|afc west|mahomes", WINS + r"|clinch|eliminat|playoff", 20
        ),
    ),
    "0x3ddfb68a": Entry(
        "grammys",
        Spec(r"grammy", WINS + r"|album of the year|record of the year|song of the year", 14),
    ),
    "0xcd144078": Entry(
        "grammys",
        Spec(r"grammy", WINS + r"|album of the year|record of the year|song of the year", 14),
    ),
    "0xcc7d2919": Entry(
        "gemini-flash", Spec(r"gemini", r"flash|launch|release|unveil|rolls? out", 10)
    ),
    "0x11db0777": Entry("hamas-disarm", Spec(r"hamas", r"disarm|weapons|refuses|rejects", 14)),
    "0x8d0139c2": Entry(
        "starmer",
        Spec(
            r"starmer", r"prime minister|\bpm\b|starmer says|starmer's|vows|government|insists", 10
        ),
    ),
    "0x8114cbeb": Entry("merz", Spec(r"\bmerz\b", r"chancellor|merz says|germany's", 10)),
    "0x3fe28ac4": Entry(
        "trump-approval", Spec(r"approval rating|trump'?s? approval", r"\d+%|low|poll", 10)
    ),
    "0xe6508d86": Entry(
        "hottest-year",
        Spec(r"hottest|warmest|record heat|second-hottest|third-hottest", r"20\d\d|year", 30),
    ),
    "0x1bed9a77": Entry(
        "inflation-2025", Spec(INFL, r"\d(?:\.\d)?%|cool|eas|rose|rise|steady|december", 20)
    ),
    "0x2beb6918": Entry(
        "inflation-2025", Spec(INFL, r"\d(?:\.\d)?%|cool|eas|rose|rise|steady|december", 20)
    ),
    "0xee3898d1": Entry("gold-2025", Spec(r"\bgold\b", r"\$|record|year|2025|ends?|annual", 15)),
    "0x12993004": Entry("gold-2025", Spec(r"\bgold\b", r"\$|record|year|2025|ends?|annual", 15)),
    "0xb42cf911": Entry(
        "gold-2026-01", Spec(r"\bgold\b", r"\$|record|slump|tumble|plunge|falls?|drops?", 10)
    ),
    "0xed6e40ee": Entry(
        "gold-2026-02", Spec(r"\bgold\b", r"\$|record|slump|tumble|plunge|falls?|drops?", 10)
    ),
    "0xc8485767": Entry("tomahawk", Spec(r"tomahawk", r"strike|fire|launch|send|deliver", 20)),
    "0xbacb4cac": Entry(
        "maxwell", Spec(r"ghislaine|maxwell", r"prison|custody|release|freed|pardon|commut", 20)
    ),
    "0xc798fb82": Entry("newsom", Spec(r"newsom", r"governor|gov\.|california", 10)),
    "0x3bc78552": Entry(
        "richest", Spec(r"richest|musk'?s? (?:net )?worth|net worth", r"musk|richest|trillion", 20)
    ),
    "0x0ac91dc0": Entry(
        "largest-company",
        Spec(
            r"most valuable|largest compan|market cap|market value",
            r"nvidia|alphabet|apple|microsoft|most valuable",
            20,
        ),
    ),
    "0x797d586a": Entry("iran-2026-02", Spec(IRAN, IRAN_HIT, 4)),
    "0xf8b73081": Entry("iran-2026-02", Spec(IRAN, IRAN_HIT, 4)),
    "0xabe05aa3": Entry(
        "iran-2026-02",
        Spec(IRAN, IRAN_HIT + r"|britain|\buk\b|france|germany|starmer|macron|merz", 4),
    ),
    "0x62f31557": Entry(
        "venezuela-2025",
        Spec(r"venezuela|maduro", r"invade|invasion|troops|ground|strikes?|captur", 10),
    ),
    "0x1d54eb5e": Entry("ukraine-ceasefire-2026-03", Spec(r"ukrain", r"ceasefire|truce|peace", 3)),
    "0x61ce3773": Entry(
        "iran-regime-2026-03", Spec(r"iran", r"regime|collapse|fall|khamenei|government", 3)
    ),
    "0x4d0d4338": Entry("russia-nato-2026-03", Spec(r"\bnato\b", r"russia", 3)),
    "0x48d65cfb": Entry("hamas-disarm-2026", Spec(r"hamas", r"disarm|weapons|refuses|rejects", 3)),
    "0xab6faa3e": Entry(
        "nobel-2025", Spec(r"nobel", r"wins?\b|won\b|awarded|goes to|laureate|machado|snub", 7)
    ),
    "0x027eeeab": Entry(
        "nj-2025",
        Spec(
            r"sherrill|ciattarelli|new jersey",
            r"wins?\b|won\b|victory|defeat|governor-elect|elected",
            7,
        ),
    ),
    "0x56a161fc": Entry(
        "nyc-2025",
        Spec(
            r"mamdani|cuomo|sliwa", r"wins?\b|won\b|victory|defeat|mayor-elect|elected|concede", 4
        ),
    ),
    "0x53f82bd5": Entry("fed-2025-10", Spec(FED, r"cuts?\b|lowers?|second", 3)),
    "0x419c7ae2": Entry("fed-2025-10", Spec(FED, r"cuts?\b|lowers?|second", 3)),
    "0x617c7a90": Entry("fed-2025-10", Spec(FED, r"cuts?\b|lowers?|second", 3)),
}
OLD_SETS = (ROOT / "data/leakset/leakset.jsonl", ROOT / "data/leakset/heldout/leakset.jsonl")


def old_headlines() -> frozenset[str]:
    """Headlines already in data/leakset or its held-out set: never in this set."""
    return frozenset(
        json.loads(line)["headline_id"] for p in OLD_SETS for line in p.open(encoding="utf-8")
    )


def load_targets(folder: Path) -> list[Target]:
    """The markets of V2 in the shared ForecastBench files, each at t0 = the day before its
    effective resolution."""
    bundle = import_forecastbench(folder / "markets.jsonl", folder / "prices_daily.csv")
    resolutions = {r.market_id: r for r in bundle.resolutions}
    return [
        Target(
            m,
            resolutions[m.id].status,
            resolutions[m.id].resolved_at,
            resolutions[m.id].resolved_at - ONE_DAY,
        )
        for m in bundle.markets
        if m.id[:10] in V2
    ]


def cluster_heldout(cluster: str) -> bool:
    """The fixed split rule, chosen before any reading or tuning: whole clusters, by hash."""
    return int(hashlib.sha256(f"leakset-v2:{cluster}".encode()).hexdigest(), 16) % 3 == 0


def part_of(market_id: str) -> str:
    return "heldout" if cluster_heldout(V2[market_id[:10]].cluster) else "dev"


def positive_candidates(t: Target, spec: Spec, headlines: list[Headline]) -> list[Headline]:
    entity, words = re.compile(spec.entity, re.I), re.compile(spec.outcome, re.I)
    end = t.resolved_at + timedelta(days=spec.post_days)
    old = old_headlines()
    found = [
        h
        for h in headlines
        if t.resolved_at <= h.created_at < end
        and h.id not in old
        and entity.search(h.text)
        and words.search(h.text)
    ]
    return sorted(found, key=lambda h: digest(t.market.id, h.id))


def negative_candidates(t: Target, spec: Spec, headlines: list[Headline]) -> list[Headline]:
    """Same-topic headlines of the NEG_DAYS before t0: hedged / polled / forecast wording first."""
    entity, start = re.compile(spec.entity, re.I), t.t0 - timedelta(days=NEG_DAYS)
    old = old_headlines()
    pool = [
        h
        for h in headlines
        if start <= h.created_at < t.t0 and h.id not in old and entity.search(h.text)
    ]
    return sorted(pool, key=lambda h: (not HARD.search(h.text), digest(t.market.id, h.id)))


def labelled_row(t: Target, h: Headline, verdict: str) -> dict:
    label, category = verdict.split(":", 1)
    stamped = restamp(t, h) if label == "positive" else h.created_at
    return {
        **row(t, h, label, stamped, True),
        "category": category,
        "cluster": V2[t.market.id[:10]].cluster,
    }


def build(headlines: list[Headline], source: Path) -> None:
    check = json.loads((OUT / "handcheck.json").read_text(encoding="utf-8"))["rows"]
    parts: dict[str, tuple[list[dict], list[dict]]] = {"dev": ([], []), "heldout": ([], [])}
    for t in load_targets(source):
        spec = V2[t.market.id[:10]].spec
        seen = {h.id: h for h in positive_candidates(t, spec, headlines)}
        seen |= {h.id: h for h in negative_candidates(t, spec, headlines)}
        mine = [
            labelled_row(t, h, check[key(t, h)])
            for h in sorted(seen.values(), key=lambda h: h.id)
            if not check.get(key(t, h), "drop").startswith("drop")
        ]
        rows, markets = parts[part_of(t.market.id)]
        rows += mine
        markets += [{**market_row(t), "cluster": V2[t.market.id[:10]].cluster}] if mine else []
    for name, (rows, markets) in parts.items():
        (OUT / name).mkdir(parents=True, exist_ok=True)
        write_jsonl(OUT / name / "leakset.jsonl", rows)
        write_jsonl(OUT / name / "markets.jsonl", markets)
        pos = sum(r["label"] == "positive" for r in rows)
        print(
            f"{name}: {len(rows)} rows, {pos} positives, {len(rows) - pos} negatives, "
            f"{len(markets)} markets"
        )


def candidates(headlines: list[Headline], source: Path) -> None:
    for t in load_targets(source):
        entry = V2[t.market.id[:10]]
        print(
            f"\n## {t.market.id[:10]} [{t.status}] {part_of(t.market.id)}/{entry.cluster} "
            f"t0={t.t0:%Y-%m-%d} {t.market.question}"
        )
        for h in positive_candidates(t, entry.spec, headlines)[:SHOW_POS]:
            print(f"  + {key(t, h)}  {h.created_at:%m-%d}  {h.text}")
        for h in negative_candidates(t, entry.spec, headlines)[:SHOW_NEG]:
            print(f"  - {key(t, h)}  {h.created_at:%m-%d}  {h.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared/data")
    parser.add_argument(
        "--candidates", action="store_true", help="print what to read, write nothing"
    )
    args = parser.parse_args()
    if not (args.shared / "news/headlines").is_dir() or not (args.shared / "polymarket").is_dir():
        sys.exit(
            f"build_leakset_v2: shared data not found at {args.shared} (needs news/headlines/ "
            "and polymarket/); the set is built from ../shared/data"
        )
    headlines = load_headlines(args.shared / "news/headlines")
    if args.candidates:
        candidates(headlines, args.shared / "polymarket")
    else:
        build(headlines, args.shared / "polymarket")


if __name__ == "__main__":
    main()
