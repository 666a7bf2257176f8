"""A seeded generator of Pushshift / Arctic Shift-shaped monthly Reddit dumps, for benchmarks.

    python benchmarks/pushshift_dumps.py --docs 1000000 --months 12 --out /tmp/hindcast-bench/dumps

Writes `RS_YYYY-MM.zst` (submissions) and `RC_YYYY-MM.zst` (comments) per month plus
`manifest.json` (arguments, rows, malformed lines, bytes and sha256 of each file). The same
arguments give the same bytes, every time: one seeded numpy generator drawn in a fixed
order, `json.dumps(sort_keys=True)`, single-threaded zstd. Memory stays constant in
`--docs`: records are made and written ten minutes of creation time at a time, and the
only state carried along is a fixed ring of the most recent submissions (the threads new
comments can join) and the zstd window (≤ 2 GiB, bounded by the size of one file).

Shape (as `/work/shared/docs/pushshift-format.md` describes the 2023-11+ dumps, and as
`hindcast.archive.pushshift` reads them): NDJSON with sorted keys, objects sorted by
`created_utc` then `id`, 7-character base-36 ids increasing with creation time, a `_meta`
object (`retrieved_2nd_on` ≈ 36 h later, `is_edited`, `removal_type`, …), counters as
measured at the second retrieval, compressed with a 2 GiB window declared in the frame and
long-distance matching (decompress with `max_window_size=2**31`), no content size.

Distributions (all seeded):
* volume: `--docs` split evenly over `--months` calendar months from `--start`; within a
  month, ten-minute slots weighted by a daily cycle (peak ≈ 17:00 UTC, trough ≈ 05:00, ratio
  ≈ 4) and a weekly one (weekends −15%); `--submission-share` (default 0.14) submissions.
* subreddits: Zipf (s = 1.1) over 20,000 names (real big ones first); comments inherit their
  thread's subreddit. Authors Zipf over a pool of 2% of `--docs` names.
* threads: a comment joins a recent submission chosen with weight heat × (1 + age/2 h)^−1.6
  (heat heavy-tailed, lognormal), so it always points at a real, earlier submission (also
  across months); it replies to the submission (`parent_id` t3_…) or to one of the last
  comments of that thread (t1_…, a real earlier comment).
* score: lognormal × heat for submissions (heavy tail to 10⁵), lognormal with ~7% negative
  for comments; `num_comments` = the thread's heat; `upvote_ratio` in [0.3, 1].
* edits: 5% of submissions and 3% of comments `edited` at an instant 30 s–36 h after
  creation (lognormal, median ≈ 11 min; the text gets an "EDIT:" line); 0.2% with
  `_meta.is_edited` true but `edited: false` (an unknown edit time).
* deletions: 3.5% `[deleted]` (author too), 3.5% `[removed]` (`removed_by_category`
  "moderator" / `_meta.removal_type`).
* text: submission titles are the real headlines shipped in `archive/sample` (the one
  chosen is a hash of the submission id, `anchor_of`: benchmarks anchor vectors on the same
  headline's MiniLM embedding); bodies are words drawn by their frequency in those
  headlines plus common words, lengths lognormal (median ≈ 18 words for comments).
* `--malformed F`: that share of lines is cut in half (invalid JSON, one reject each);
  the valid rows are the same as with F = 0.
"""

from __future__ import annotations

import argparse
import calendar
import hashlib
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "archive" / "sample"
FORMAT = "hindcast-bench-pushshift/1"
SLOT = 600  # seconds of creation time made and written at a time
RING = 1 << 16  # recent submissions new comments may join
REPLY_MEMORY = 8  # last comments of a thread a reply may answer
SUB_BASE, COM_BASE = int("18h0000", 36), int("kf00000", 36)
SECOND_FETCH = 36 * 3600
BIG = [
    "AskReddit",
    "politics",
    "worldnews",
    "news",
    "funny",
    "gaming",
    "pics",
    "todayilearned",
    "movies",
    "nba",
    "soccer",
    "wallstreetbets",
    "technology",
    "science",
    "europe",
    "nfl",
    "unitedkingdom",
    "canada",
    "Economics",
    "PoliticalDiscussion",
    "CryptoCurrency",
    "stocks",
    "ukraine",
    "geopolitics",
]
DOMAINS = [
    "i.redd.it",
    "youtube.com",
    "v.redd.it",
    "reuters.com",
    "apnews.com",
    "theguardian.com",
    "nytimes.com",
    "bbc.com",
    "cnn.com",
    "washingtonpost.com",
    "bloomberg.com",
    "imgur.com",
    "politico.com",
    "axios.com",
    "foxnews.com",
    "nbcnews.com",
    "x.com",
    "cnbc.com",
    "ft.com",
    "wsj.com",
]
COMMON = [
    "i",
    "you",
    "the",
    "a",
    "to",
    "and",
    "of",
    "is",
    "it",
    "that",
    "this",
    "in",
    "not",
    "for",
    "they",
    "just",
    "be",
    "have",
    "was",
    "are",
    "but",
    "with",
    "on",
    "so",
    "like",
    "people",
    "what",
    "think",
    "would",
    "if",
    "do",
    "my",
    "all",
    "about",
    "your",
    "more",
    "at",
    "can",
    "no",
    "one",
    "will",
    "get",
    "don't",
    "it's",
    "I'm",
    "yeah",
    "really",
    "even",
    "because",
    "how",
    "there",
    "than",
    "their",
    "who",
    "also",
    "only",
    "them",
    "know",
    "why",
    "going",
    "right",
    "good",
]


@dataclass(frozen=True)
class Config:
    docs: int
    months: int
    start: str = "2024-01"
    seed: int = 0
    submission_share: float = 0.14
    malformed: float = 0.0
    level: int = 3
    window_log: int = 31


# ---- deterministic helpers shared with the benchmarks ---------------------------------------
def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer on uint64 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def anchor_of(numbers: np.ndarray, count: int, salt: int = 0) -> np.ndarray:
    """The headline (0 ≤ i < count) that anchors the document with base-36 id number `numbers`."""
    mixed = np.asarray(numbers, dtype=np.uint64) ^ np.uint64((salt * 0x2545F4914F6CDD1D) % 2**64)
    return (splitmix64(mixed) % np.uint64(count)).astype(np.int64)


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]


def base36(number: int, width: int = 7) -> str:
    """`number` in base 36, zero-padded to `width` digits (so text order is number order)."""
    out = ""
    for _ in range(width // 2):
        number, rest = divmod(number, 1296)
        out = _PAIRS[rest] + out
    return _DIGITS[number % 36] + out if width % 2 else out


def headlines(sample: Path = SAMPLE) -> list[str]:
    """The shipped real headlines in index order (month, then (created_us, id)), i.e. row i
    here is row i of the concatenated month vectors of `archive/sample`'s index."""
    import pyarrow.parquet as pq

    snapshot = sample / "snapshots" / (sample / "LATEST").read_text().strip()
    titles = []
    for part in sorted(
        snapshot.glob("source=*/month=*/*.parquet"), key=lambda p: (p.parent.name, str(p))
    ):
        rows = pq.read_table(part, columns=["created_us", "id", "title"]).to_pylist()
        titles.extend(r["title"] for r in sorted(rows, key=lambda r: (r["created_us"], r["id"])))
    return titles


def month_starts(cfg: Config) -> list[tuple[str, int, int]]:
    """(YYYY-MM, first second, first second of the next month) of each generated month."""
    year, month = (int(x) for x in cfg.start.split("-"))
    out = []
    for _ in range(cfg.months):
        start = calendar.timegm((year, month, 1, 0, 0, 0))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        out.append(
            (
                datetime.fromtimestamp(start, UTC).strftime("%Y-%m"),
                start,
                calendar.timegm((year, month, 1, 0, 0, 0)),
            )
        )
    return out


# ---- the world the records are drawn from ---------------------------------------------------
class World:
    """Vocabulary, subreddits, authors, titles: fixed tables built once from the seed."""

    def __init__(self, cfg: Config, titles: list[str]):
        self.titles = titles
        counts = Counter(w for t in titles for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", t))
        counts.update({w: 40_000 // (i + 1) for i, w in enumerate(COMMON)})
        words = sorted(counts, key=lambda w: (-counts[w], w))
        self.words = np.array(words, dtype=object)
        self.word_cdf = _cdf(np.array([counts[w] for w in words], dtype=np.float64))
        self.subreddits = names = _subreddit_names(words, 20_000)
        self.sub_ids = [
            f"t5_{base36(h % 36**6, 6)}" for h in splitmix64(np.arange(len(names)) + 7).tolist()
        ]
        self.sub_cdf = _cdf(1.0 / np.arange(1, len(names) + 1) ** 1.1)
        self.authors = max(100, cfg.docs // 50)
        self.author_cdf = _cdf(1.0 / np.arange(1, self.authors + 1) ** 1.05)
        self.domain_cdf = _cdf(1.0 / np.arange(1, len(DOMAINS) + 1))

    def text(self, rng: np.random.Generator, lengths: np.ndarray) -> list[str]:
        """Bodies of the given word counts: words by frequency, a sentence every ~12 words."""
        picks = self.words[
            np.searchsorted(self.word_cdf, rng.random(int(lengths.sum())), side="right")
        ]
        out, at = [], 0
        for n in lengths.tolist():
            chunk = picks[at : at + n].tolist()
            at += n
            out.append(_sentences(chunk))
        return out


def _subreddit_names(words: list[str], count: int) -> list[str]:
    """The big real names, then names made of frequent words (`Tariff`, `TariffNews`, …)."""
    names, seen = list(BIG), {n.lower() for n in BIG}
    for suffix in (
        "",
        "News",
        "Talk",
        "Fans",
        "Memes",
        "Discussion",
        "Hub",
        "Circlejerk",
        "Pics",
        "Help",
    ):
        for word in words:
            name = re.sub(r"[^A-Za-z0-9]", "", word.capitalize()) + suffix
            if len(names) == count:
                return names
            if len(name) > 2 and name.lower() not in seen:
                seen.add(name.lower())
                names.append(name)
    return names


def _sentences(words: list[str]) -> str:
    parts = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return ". ".join(p[:1].upper() + p[1:] for p in parts) + ("." if parts else "")


def _cdf(weights: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    return cdf


def _draw(rng, cdf: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), cdf.size - 1)


# ---- threads ----------------------------------------------------------------------------------
class Threads:
    """A fixed ring of the most recent submissions: what new comments can join."""

    def __init__(self):
        self.number = np.zeros(RING, dtype=np.int64)
        self.created = np.zeros(RING, dtype=np.int64)
        self.heat = np.zeros(RING, dtype=np.float64)
        self.sub = np.zeros(RING, dtype=np.int64)
        self.recent: list[list[int]] = [[] for _ in range(RING)]
        self.next = 0

    def add(self, number: int, created: int, heat: float, sub: int) -> None:
        slot = self.next % RING
        self.number[slot], self.created[slot], self.heat[slot], self.sub[slot] = (
            number,
            created,
            heat,
            sub,
        )
        self.recent[slot] = []
        self.next += 1

    def pick(self, rng, now: int, count: int) -> np.ndarray | None:
        """Ring slots of `count` comments at `now`: heat × (1 + age/2 h)^−1.6 (None: no thread with
        any heat yet, the slot then holds only submissions)."""
        filled = min(self.next, RING)
        if filled == 0 or count == 0:
            return None if filled == 0 else np.zeros(0, dtype=np.int64)
        age_h = (now - self.created[:filled]) / 3600.0
        weight = self.heat[:filled] * (1.0 + age_h / 2.0) ** -1.6
        return _draw(rng, _cdf(weight), count) if weight.sum() > 0 else None

    def parent(self, slot: int, u: float, depth: float) -> str:
        recent = self.recent[slot]
        if not recent or u < 0.35:
            return f"t3_{base36(int(self.number[slot]))}"
        return f"t1_{base36(recent[max(0, len(recent) - 1 - int(depth))])}"

    def remember(self, slot: int, number: int) -> None:
        recent = self.recent[slot]
        recent.append(number)
        if len(recent) > REPLY_MEMORY:
            del recent[0]


# ---- records --------------------------------------------------------------------------------
class Generator:
    """Record lines of every month, in creation order, ten minutes at a time."""

    def __init__(self, cfg: Config, titles: list[str]):
        self.cfg, self.world, self.threads = cfg, World(cfg, titles), Threads()
        self.rng = np.random.default_rng(cfg.seed)
        self.next_sub, self.next_com = SUB_BASE, COM_BASE

    def month(self, index: int, start: int, end: int):
        """(submission lines, comment lines, malformed among them, malformed among them) of
        every ten-minute slot of one month, in creation order."""
        cfg = self.cfg
        n = cfg.docs * (index + 1) // cfg.months - cfg.docs * index // cfg.months
        slots = np.arange(start, end, SLOT)
        counts = self.rng.multinomial(n, _cycle(slots) / _cycle(slots).sum())
        for slot_start, count in zip(slots.tolist(), counts.tolist()):
            if count:
                yield self._slot(slot_start, count)

    def _slot(self, start: int, count: int) -> tuple[list[str], list[str], int, int]:
        rng = self.rng
        created = np.sort(rng.integers(start, start + SLOT, count))
        is_sub = rng.random(count) < self.cfg.submission_share
        picks = self.threads.pick(rng, start, int((~is_sub).sum()))
        if picks is None:
            is_sub[:] = True
            picks = np.zeros(0, dtype=np.int64)
        draws = _Draws(rng, self.world, count, int(is_sub.sum()))
        numbers = self.next_sub + np.cumsum(is_sub) - 1
        draws.title = anchor_of(numbers, len(self.world.titles), self.cfg.seed).tolist()
        subs, coms, bad_s, bad_c = [], [], 0, 0
        new = []
        pick_at = 0
        for i in range(count):
            if is_sub[i]:
                row = self._submission(int(created[i]), draws, i, new)
                line, bad = _line(row, draws.malformed[i] < self.cfg.malformed)
                subs.append(line)
                bad_s += bad
            else:
                row = self._comment(int(created[i]), draws, i, int(picks[pick_at]))
                pick_at += 1
                line, bad = _line(row, draws.malformed[i] < self.cfg.malformed)
                coms.append(line)
                bad_c += bad
        for args in new:
            self.threads.add(*args)
        return subs, coms, bad_s, bad_c

    def _submission(self, created: int, d: _Draws, i: int, new: list) -> dict:
        number = self.next_sub
        self.next_sub += 1
        sid, w = base36(number), self.world
        sub = int(d.sub[i])
        name = w.subreddits[sub]
        heat = float(d.heat[i])
        is_self = bool(d.is_self[i])
        title = w.titles[int(d.title[i])]
        selftext = d.body(i, long=True) if is_self and d.u_text[i] > 0.3 else ""
        state = _state(d, i, created, 0.05)
        selftext, author = _apply_state(state, selftext, "u_" + base36(d.author[i], 8))
        permalink = f"/r/{name}/comments/{sid}/{_slug(title)}/"
        domain = f"self.{name}" if is_self else DOMAINS[int(d.domain[i])]
        new.append((number, created, heat, sub))
        return {
            "_meta": _meta(created, d, i, state),
            "author": author,
            "created_utc": created,
            "domain": domain,
            "edited": state["edited"],
            "gilded": 0,
            "id": sid,
            "is_self": is_self,
            "link_flair_text": None,
            "locked": False,
            "name": f"t3_{sid}",
            "num_comments": int(heat),
            "num_crossposts": 0,
            "over_18": bool(d.u_nsfw[i] < 0.02),
            "permalink": permalink,
            "removed_by_category": state["removed_by"],
            "retrieved_on": created + int(d.lag[i]),
            "score": int(heat * d.score[i]),
            "selftext": selftext,
            "stickied": False,
            "subreddit": name,
            "subreddit_id": w.sub_ids[sub],
            "thumbnail": "self" if is_self else "default",
            "title": title,
            "upvote_ratio": round(float(d.ratio[i]), 2),
            "url": f"https://www.reddit.com{permalink}" if is_self else f"https://{domain}/{sid}",
        }

    def _comment(self, created: int, d: _Draws, i: int, slot: int) -> dict:
        number = self.next_com
        self.next_com += 1
        cid, t, w = base36(number), self.threads, self.world
        link = base36(int(t.number[slot]))
        parent = t.parent(slot, float(d.u_reply[i]), float(d.depth[i]))
        t.remember(slot, number)
        sub = int(t.sub[slot])
        name = w.subreddits[sub]
        state = _state(d, i, created, 0.03)
        body, author = _apply_state(state, d.body(i, long=False), "u_" + base36(d.author[i], 8))
        score = int(d.cscore[i])
        return {
            "_meta": _meta(created, d, i, state),
            "author": author,
            "author_flair_text": None,
            "body": body,
            "controversiality": int(score < 0 and d.u_nsfw[i] < 0.5),
            "created_utc": created,
            "distinguished": None,
            "edited": state["edited"],
            "gilded": 0,
            "id": cid,
            "is_submitter": bool(d.u_nsfw[i] > 0.9),
            "link_id": f"t3_{link}",
            "name": f"t1_{cid}",
            "parent_id": parent,
            "permalink": f"/r/{name}/comments/{link}/comment/{cid}/",
            "retrieved_on": created + int(d.lag[i]),
            "score": score,
            "score_hidden": False,
            "stickied": False,
            "subreddit": name,
            "subreddit_id": w.sub_ids[sub],
        }


class _Draws:
    """Every random number one slot needs, drawn at once and always in the same order."""

    def __init__(self, rng, world: World, count: int, subs: int):
        self.world, self.rng = world, rng
        self.sub = _draw(rng, world.sub_cdf, count)
        self.author = (splitmix64(_draw(rng, world.author_cdf, count)) % np.uint64(36**8)).tolist()
        self.domain = _draw(rng, world.domain_cdf, count)
        self.heat = np.floor(np.exp(rng.normal(0.9, 1.6, count)))
        self.score = np.exp(rng.normal(1.0, 1.0, count))
        self.cscore = np.floor(np.exp(rng.normal(0.4, 1.4, count))) - (
            rng.random(count) < 0.07
        ) * np.floor(np.exp(rng.normal(1.0, 1.0, count)))
        self.ratio = np.clip(1.0 - rng.exponential(0.12, count), 0.3, 1.0)
        self.is_self = rng.random(count) < 0.35
        self.u_text, self.u_nsfw, self.u_reply = (
            rng.random(count),
            rng.random(count),
            rng.random(count),
        )
        self.depth = rng.geometric(0.5, count) - 1
        self.u_edit, self.u_del = rng.random(count), rng.random(count)
        self.edit_delay = np.clip(
            np.exp(rng.normal(6.5, 2.0, count)), 30, SECOND_FETCH - 60
        ).astype(np.int64)
        self.lag = rng.integers(20, 3600, count)
        self.second = rng.integers(-3600, 3600, count)
        self.length = np.clip(np.exp(rng.normal(2.9, 0.9, count)), 1, 400).astype(np.int64)
        self.bodies = world.text(rng, self.length)
        self.malformed = rng.random(count)
        for name, value in list(vars(self).items()):
            if isinstance(value, np.ndarray):
                setattr(
                    self, name, value.tolist()
                )  # Python scalars: JSON-ready and faster to index

    def body(self, i: int, long: bool) -> str:
        return self.bodies[i] + (" " + self.bodies[i] if long else "")


def _state(d: _Draws, i: int, created: int, edit_share: float) -> dict:
    """Deleted / removed / edited (at a time or at an unknown time) / untouched."""
    u_del, u_edit = float(d.u_del[i]), float(d.u_edit[i])
    deleted, removed = u_del < 0.035, 0.035 <= u_del < 0.07
    edited = (not (deleted or removed)) and u_edit < edit_share
    unknown = (not (deleted or removed)) and edit_share <= u_edit < edit_share + 0.002
    return {
        "deleted": deleted,
        "removed": removed,
        "is_edited": edited or unknown,
        "edited": created + int(d.edit_delay[i]) if edited else False,
        "removed_by": "deleted" if deleted else "moderator" if removed else None,
    }


def _apply_state(state: dict, text: str, author: str) -> tuple[str, str]:
    if state["deleted"]:
        return "[deleted]", "[deleted]"
    if state["removed"]:
        return "[removed]", "[deleted]"
    if state["edited"] is not False:
        return text + "\n\nEDIT: thanks for the replies", author
    return text, author


def _meta(created: int, d: _Draws, i: int, state: dict) -> dict:
    return {
        "is_edited": state["is_edited"],
        "note": None,
        "removal_type": {"deleted": "deleted", "moderator": "moderator"}.get(state["removed_by"]),
        "retrieved_2nd_on": created + SECOND_FETCH + int(d.second[i]),
        "was_deleted_later": bool(state["deleted"] or state["removed"]) and d.u_text[i] < 0.5,
        "was_initially_deleted": False,
    }


def _slug(title: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", title.lower())[:8]) or "post"


def _line(row: dict, malformed: bool) -> tuple[str, int]:
    line = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return (line[: len(line) // 2], 1) if malformed else (line, 0)


def _cycle(slots: np.ndarray) -> np.ndarray:
    """Relative volume of each ten-minute slot: daily cycle (peak 17:00 UTC) × weekly dip."""
    hours = (slots % 86_400) / 3600.0
    weekday = (slots // 86_400 + 3) % 7  # 0 = Monday (1970-01-01 was a Thursday)
    return (1.0 + 0.6 * np.cos(2 * np.pi * (hours - 17.0) / 24.0)) * np.where(
        weekday >= 5, 0.85, 1.0
    )


# ---- files -----------------------------------------------------------------------------------
class _Sink:
    """One .zst file written through a long-window compressor, hashed as it is written."""

    def __init__(self, path: Path, cfg: Config):
        import zstandard

        params = zstandard.ZstdCompressionParameters.from_level(
            cfg.level,
            window_log=cfg.window_log,
            enable_ldm=True,
            write_content_size=False,
            write_checksum=True,
            threads=0,
        )
        self.path, self.tmp = path, path.with_name(path.name + ".tmp")
        self.handle = self.tmp.open("wb")
        self.hash, self.rows, self.malformed = hashlib.sha256(), 0, 0
        self.writer = zstandard.ZstdCompressor(compression_params=params).stream_writer(
            _Hashing(self.handle, self.hash), closefd=False
        )

    def write(self, lines: list[str], bad: int) -> None:
        if lines:
            self.writer.write(("\n".join(lines) + "\n").encode("utf-8"))
            self.rows += len(lines)
            self.malformed += bad

    def close(self) -> dict:
        self.writer.close()
        self.handle.close()
        self.tmp.replace(self.path)
        return {
            "rows": self.rows,
            "malformed": self.malformed,
            "bytes": self.path.stat().st_size,
            "sha256": self.hash.hexdigest(),
        }


class _Hashing:
    def __init__(self, handle, hasher):
        self.handle, self.hasher = handle, hasher

    def write(self, data) -> int:
        self.hasher.update(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()


def generate(cfg: Config, out: Path, titles: list[str] | None = None, log=print) -> dict:
    """Write every month's RS_/RC_ dump and `manifest.json` into `out`; return the manifest.
    A complete earlier run with the same arguments is reused as it is."""
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if old.get("config") == asdict(cfg) and all((out / f).exists() for f in old["files"]):
            return old
    manifest_path.unlink(missing_ok=True)
    gen = Generator(cfg, titles if titles is not None else headlines())
    files = {}
    for index, (label, start, end) in enumerate(month_starts(cfg)):
        sinks = {kind: _Sink(out / f"{kind}_{label}.zst", cfg) for kind in ("RS", "RC")}
        for subs, coms, bad_s, bad_c in gen.month(index, start, end):
            sinks["RS"].write(subs, bad_s)
            sinks["RC"].write(coms, bad_c)
        for sink in sinks.values():
            files[sink.path.name] = sink.close()
        log(
            f"{label}: {files[f'RS_{label}.zst']['rows']:,} submissions, "
            f"{files[f'RC_{label}.zst']['rows']:,} comments"
        )
    manifest = {
        "format": FORMAT,
        "config": asdict(cfg),
        "files": files,
        "headlines": len(gen.world.titles),
    }
    tmp = manifest_path.with_name("manifest.json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    tmp.replace(manifest_path)
    return manifest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--docs", type=int, required=True, help="documents in all (submissions + comments)"
    )
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--start", default="2024-01", help="first month, YYYY-MM")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--submission-share", type=float, default=0.14)
    parser.add_argument(
        "--malformed", type=float, default=0.0, help="share of lines cut in half (rejects)"
    )
    parser.add_argument(
        "--level",
        type=int,
        default=3,
        help="zstd level (the real dumps use high levels; 19 is ~50x slower)",
    )
    parser.add_argument("--window-log", type=int, default=31)
    args = parser.parse_args(argv)
    cfg = Config(
        args.docs,
        args.months,
        args.start,
        args.seed,
        args.submission_share,
        args.malformed,
        args.level,
        args.window_log,
    )
    manifest = generate(cfg, args.out)
    total = sum(f["bytes"] for f in manifest["files"].values())
    print(
        f"{sum(f['rows'] for f in manifest['files'].values()):,} rows in "
        f"{len(manifest['files'])} files, {total / 1e6:,.1f} MB compressed → {args.out}"
    )


if __name__ == "__main__":
    main()
