"""Reddit-shaped texts, embedded by the shipped MiniLM: vectors NOT derived from the reference
corpus (the sample's news headlines the fixed codebook is trained on), for
`benchmarks/retrieval.py --doc-vectors`.

    python benchmarks/reddit_texts.py --out $TMPDIR/hindcast-bench/reddit [--seconds 240]

Texts: seeded forum-like posts and comments built from 24 communities (gaming, cooking,
personal finance, programming, fitness, relationships, pets, cars, films, gardening, travel,
parenting, DIY, music, books, science, jobs, housing, health, photography, cycling, coffee,
sports, local news), each with its own nouns, verbs and openers, and generic forum
phrasing (questions, advice, anecdotes, replies, quotes, typos-free slang), 8–40 words. No
text is drawn from the headlines. Embedded in batches by the index's default embedder
(`minilm-bf16` on a native-bf16 CPU, else `minilm`) until `--seconds` have passed; written as
float32 `vectors.npy` (rows × 384, unit) with `texts.txt.gz` and `meta.json` (count, embedder,
seconds, load average). A re-run with the same arguments reuses the file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TOPICS = {
    "gaming": (
        "patch boss raid controller build loadout speedrun server ranked match lag co-op save",
        "grind beat respec queue stream mod unlock",
    ),
    "cooking": (
        "sourdough cast iron skillet recipe garlic broth knife oven marinade dough spice rice",
        "bake sear simmer season ferment burn chop",
    ),
    "personal finance": (
        "budget credit card debt 401k index fund emergency fund mortgage rent paycheck taxes",
        "save refinance invest pay off budget withdraw",
    ),
    "programming": (
        "bug compiler pull request regex database deploy container unit test stack trace API",
        "refactor debug merge deploy rewrite profile",
    ),
    "fitness": (
        "deadlift squat protein cardio rest day knee form program gym bench press calories",
        "lift cut bulk stretch run recover",
    ),
    "relationships": (
        "boyfriend girlfriend roommate in-laws wedding argument texts birthday best friend ex",
        "ghost apologize move out break up trust vent",
    ),
    "pets": (
        "puppy cat litter box vet bill leash crate kibble shelter rescue hamster aquarium",
        "adopt train groom feed walk foster",
    ),
    "cars": (
        "transmission brakes oil change dealership lease mileage tire pressure EV charger clutch",
        "replace tow inspect lease rebuild detail",
    ),
    "movies": (
        "sequel director soundtrack plot twist trailer cinema ending cast streaming remake",
        "rewatch spoil review rank binge cast",
    ),
    "gardening": (
        "tomatoes compost raised bed aphids seedlings mulch pruning shears perennials soil pH",
        "plant prune water transplant harvest weed",
    ),
    "travel": (
        "layover hostel passport itinerary rail pass carry-on jet lag visa airbnb backpack",
        "book pack cancel explore fly hike",
    ),
    "parenting": (
        "toddler daycare bedtime tantrum screen time homework teenager sleep regression diapers",
        "soothe potty train ground negotiate carpool",
    ),
    "DIY": (
        "drywall stud finder grout circuit breaker drill bits caulk deck stain shelf sander",
        "sand patch wire tile insulate mount",
    ),
    "music": (
        "guitar pedal chord progression vinyl setlist drum kit mixing desk tour tickets album",
        "practice record tune gig remix cover",
    ),
    "books": (
        "fantasy series audiobook library hold book club paperback author trilogy chapter",
        "read annotate recommend finish abandon reread",
    ),
    "science": (
        "telescope vaccine trial peer review particle accelerator fossil exoplanet enzyme climate model",
        "measure replicate publish observe simulate",
    ),
    "jobs": (
        "interview recruiter resume salary offer manager layoff remote work promotion PTO",
        "negotiate quit apply onboard network resign",
    ),
    "housing": (
        "landlord lease renewal HOA deposit inspection closing costs noisy neighbors mold",
        "rent evict renovate appraise list sublet",
    ),
    "health": (
        "migraine insurance claim prescription therapist blood test allergy insomnia physio",
        "diagnose schedule refill recover manage",
    ),
    "photography": (
        "prime lens aperture tripod golden hour RAW files mirrorless sensor exposure flash",
        "shoot edit crop frame meter",
    ),
    "cycling": (
        "gravel bike chain derailleur saddle tubeless tires commute helmet cleats peloton",
        "ride climb shift patch commute",
    ),
    "coffee": (
        "espresso grinder pour-over beans roast date milk frother burr setting crema",
        "brew dial in grind tamp steam",
    ),
    "sports": (
        "playoffs trade deadline referee transfer window fantasy league injury report coach",
        "draft bench sign trade score",
    ),
    "local news": (
        "city council bus route zoning vote potholes farmers market property tax school board",
        "protest approve repave petition elect",
    ),
}
OPENERS = [
    "Honestly",
    "PSA:",
    "Update:",
    "Serious question,",
    "Not sure if this is the right sub but",
    "TIL",
    "Long time lurker,",
    "Anyone else think",
    "Hot take:",
    "ELI5:",
    "Quick vent:",
    "Can confirm,",
    "Edit: thanks everyone,",
    "",
    "",
    "",
]
FRAMES = [
    "{o} my {n1} keeps acting up after I tried to {v1} the {n2}, what am I doing wrong?",
    "{o} I finally {v1}ed the {n1} and the {n2} is so much better now.",
    "Is it worth it to {v1} a {n1} or should I just {v2} the {n2} instead?",
    "My {rel} said I should {v1} the {n1} before the {n2}, but that sounds backwards to me.",
    "{o} spent the whole weekend trying to {v1} my {n1}; the {n2} still won't cooperate.",
    "This is why you always {v1} the {n1} first. Learned that the hard way with a {n2}.",
    "Unpopular opinion: {n1} is overrated and nobody wants to {v1} a {n2} anyway.",
    "Does anyone know a cheap way to {v1} a {n1} without messing up the {n2}?",
    "Three years in and I still can't {v1} the {n1} properly. Any tips for the {n2}?",
    "Reply to the guy above: the {n1} only matters if you {v1} the {n2} every {period}.",
    "{o} {num} {period}s later and the {n1} is finally done. Next up: {v1} the {n2}.",
    "Why does nobody talk about how hard it is to {v1} a {n1} with a {n2}?",
    "We tried to {v1} the {n1} together and ended up arguing about the {n2} for {num} hours.",
    "Source: I {v1} {n1}s for a living. The {n2} thing is a myth.",
    "Rant: the {n1} broke again, so now I have to {v1} it and {v2} the {n2}.",
    "Beginner here, how often should I {v1} my {n1}? Every {period} or only when the {n2} fails?",
]
RELATIONS = ["wife", "husband", "dad", "mom", "coworker", "neighbor", "brother", "roommate", "boss"]
PERIODS = ["day", "week", "month", "season", "year"]


def _words(spec: str) -> list[str]:
    return [w.replace("-", " ") for w in spec.split()]


def texts(count: int, seed: int = 0) -> list[str]:
    """`count` seeded forum-like texts: one community's words in one of 16 frames; a third of
    them carry a second sentence from another community (threads wander)."""
    rng = random.Random(seed)
    topics = list(TOPICS.values())
    out = []
    for _ in range(count):
        nouns, verbs = (_words(s) for s in rng.choice(topics))
        text = _sentence(rng, nouns, verbs)
        if rng.random() < 0.33:
            nouns2, verbs2 = (_words(s) for s in rng.choice(topics))
            text += " " + _sentence(rng, nouns2, verbs2)
        out.append(text)
    return out


def _sentence(rng: random.Random, nouns: list[str], verbs: list[str]) -> str:
    n1, n2 = rng.sample(nouns, 2)
    v1, v2 = rng.sample(verbs, 2)
    text = rng.choice(FRAMES).format(
        o=rng.choice(OPENERS),
        n1=n1,
        n2=n2,
        v1=v1,
        v2=v2,
        rel=rng.choice(RELATIONS),
        period=rng.choice(PERIODS),
        num=rng.randint(2, 40),
    )
    return text.strip()


def embed(out: Path, seconds: float, batch: int, seed: int, skip: int = 0) -> dict:
    from hindcast.archive import embed as embed_mod

    name = "minilm-bf16" if embed_mod.native_bf16() else "minilm"
    model = embed_mod.for_index(name)
    pool = texts(400_000, seed)[skip:]
    vectors, start, load = [], time.perf_counter(), [os.getloadavg()[0]]
    while time.perf_counter() - start < seconds and batch * len(vectors) < len(pool):
        chunk = pool[batch * len(vectors) : batch * (len(vectors) + 1)]
        vectors.append(np.asarray(model.embed(chunk), dtype=np.float32))
    took = time.perf_counter() - start
    load.append(os.getloadavg()[0])
    matrix = np.concatenate(vectors)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "vectors.npy", matrix)
    (out / "texts.txt.gz").write_bytes(gzip.compress("\n".join(pool[: len(matrix)]).encode()))
    meta = {
        "count": int(len(matrix)),
        "unique_texts": len(set(pool[: len(matrix)])),
        "embedder": name,
        "seconds": round(took, 1),
        "texts_per_s": round(len(matrix) / took, 1),
        "load_average": load,
        "seed": seed,
        "skip": skip,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def merge(out: Path, runs: list[Path]) -> dict:
    """One table of the runs' vectors, in order (each run's meta kept in the merged meta)."""
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "vectors.npy", np.concatenate([np.load(r / "vectors.npy") for r in runs]))
    metas = [json.loads((r / "meta.json").read_text()) for r in runs]
    meta = {"count": sum(m["count"] for m in metas), "runs": metas}
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=240.0)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", type=int, default=0, help="start at this text (a second run)")
    parser.add_argument("--merge", nargs="*", type=Path, help="concatenate these runs into --out")
    args = parser.parse_args()
    if args.merge:
        print(merge(args.out, args.merge))
        return
    if (args.out / "meta.json").exists():
        print(json.loads((args.out / "meta.json").read_text()))
        return
    print(embed(args.out, args.seconds, args.batch, args.seed, args.skip))


if __name__ == "__main__":
    main()
