"""A fake of Manifold's public read API (v0), in the shapes of manifold-api.md.

Ship it in your own tests: `FakeManifold.generate(...)` builds a seeded set of markets;
`mock_transport(fake)` serves it to an `httpx.Client` in process, `serve(fake)` over real
sockets on 127.0.0.1 (`with serve(fake) as url: … --manifold-url url`).

What it serves, as the API does (each a trap a loader must handle):
- times are integer milliseconds; unknown query parameters are a 400
  (`{"message": "Error validating request.", "details": [...]}`), so is a `limit` above the
  route's maximum (1000 on `/search-markets`, 10,000 on `/bets`) or an `offset` above 1000;
- `GET /search-markets`: `filter=resolved` lists every market with a resolution time —
  CANCEL and MKT included, every outcome type unless `contractType` says otherwise;
  `sort=newest` orders by `createdTime` descending (the default sort is `score`: another
  order); `beforeTime` is a strict `createdTime <` bound, so markets sharing the boundary
  millisecond are skipped by a walk that passes the oldest time itself. Lite markets: no
  `description`, no `answers`;
- `GET /market/{id}`: the full market (`description` as a tiptap document or a string,
  `textDescription` sometimes `""`, `answers` on multiple-choice markets); 404
  `Contract not found`;
- every resolved binary market carries `resolutionProbability` (the price before resolving,
  except for MKT, where it is the outcome), `probability` stays at the last traded level, and
  `closeTime` is `min(close, resolutionTime)` — after the creator may have moved it;
- `GET /bets?contractId=`: newest first, bets of one millisecond in an order that is not their
  creation order, `before=<bet id>` (404 when unknown) and `beforeTime` both strict; an unknown
  contract answers `[]`; resting limit orders (probBefore == probAfter, `isFilled` false or
  absent) and redemptions sharing a trade's millisecond.

`faults[path]` (e.g. "/bets") is a list of `Reply` served in order before the real answer;
`requests` records every request as (path, sorted query items).
"""

from __future__ import annotations

import hashlib
import random
import string
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from hindcast.markets import fake_http
from hindcast.markets.fake_http import Reply, json_reply

__all__ = ["FakeManifold", "FakeMarket", "Reply", "json_reply", "mock_transport", "serve"]

SEARCH_KEYS = frozenset(
    "term filter contractType sort limit offset beforeTime topicSlug creatorId liquidity token "
    "isPrizeMarket hasBets forYou gids includeLiteAnswers".split()
)
BETS_KEYS = frozenset(
    "contractId contractSlug userId username answerId limit before after beforeTime afterTime "
    "order kinds minAmount filterRedemptions includeZeroShareRedemptions excludeApi count "
    "points".split()
)
LITE_DROP = ("description", "textDescription", "answers", "coverImageUrl")
START_MS = 1_700_000_000_000  # 2023-11-14
HOUR = 3_600_000


@dataclass
class FakeMarket:
    """One market: its full object and its bets, oldest first (the fake's true order)."""

    raw: dict
    bets: list[dict] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.raw["id"]

    def price_before(self, t0_ms: int) -> float | None:
        """What a loader must find at t0: probAfter of the last bet created strictly before t0
        in true creation order; the first bet's probBefore from the market's creation on."""
        bets = [b for b in self.bets if not b.get("answerId")]
        before = [b for b in bets if b["createdTime"] < t0_ms]
        if before:
            return before[-1]["probAfter"]
        if self.raw["createdTime"] >= t0_ms:
            return None
        return bets[0]["probBefore"] if bets else self.raw.get("probability")


class FakeManifold:
    """Answers Manifold read requests from `markets`."""

    def __init__(self, markets: list[FakeMarket]):
        self.markets = list(markets)
        self.faults: dict[str, list[Reply]] = {}
        self.requests: list[tuple[str, tuple]] = []
        self._lock = threading.Lock()

    @classmethod
    def generate(cls, binary: int = 300, seed: int = 41, bets: int = 60) -> FakeManifold:
        """`binary` resolved binary markets (YES, NO, MKT and CANCEL; some edited, some with a
        moved close; listing ties on createdTime), up to `bets` bets each with millisecond ties,
        plus resolved multiple-choice and numeric markets and unresolved ones."""
        rng, markets, created = random.Random(seed), [], START_MS
        for n in range(binary):
            created += 0 if n % 7 == 3 else rng.randrange(HOUR, 30 * HOUR)  # listing ties
            markets.append(_binary(rng, n, created, rng.randrange(0, bets + 1)))
        for n, kind in enumerate(("MULTIPLE_CHOICE", "PSEUDO_NUMERIC", "NUMBER", "POLL") * 3):
            markets.append(_other(rng, n, START_MS + n * 13 * HOUR + 1, kind))
        markets += [
            _binary(rng, binary + n, START_MS + n * HOUR + 7, 5, open_=True) for n in (1, 2)
        ]
        return cls(markets)

    def market(self, market_id: str) -> FakeMarket:
        return next(m for m in self.markets if m.id == market_id)

    def binary_resolved(self) -> list[FakeMarket]:
        return [
            m
            for m in self.markets
            if m.raw["outcomeType"] == "BINARY" and m.raw.get("resolution") in ("YES", "NO", "MKT")
        ]

    # -- serving ------------------------------------------------------------------------------
    def answer(self, path: str, query: list[tuple[str, str]]) -> Reply:
        with self._lock:
            self.requests.append((path, tuple(sorted(query))))
            queued = self.faults.get(path)
            if queued:
                return queued.pop(0)
            return self._route(path, query)

    def _route(self, path: str, query: list[tuple[str, str]]) -> Reply:
        if path == "/search-markets":
            return _checked(query, SEARCH_KEYS, 1000) or self._search(dict(query))
        if path == "/bets":
            return _checked(query, BETS_KEYS, 10_000) or self._bets(query)
        if path.startswith("/market/") and path.count("/") == 2:
            found = [m for m in self.markets if m.id == path.removeprefix("/market/")]
            return json_reply(found[0].raw) if found else _error(404, "Contract not found")
        return _error(404, "Not found")

    def _search(self, q: dict) -> Reply:
        if int(q.get("offset", 0)) > 1000:
            return _error(
                400,
                "offset must be <= 1000. Use sort=newest with the beforeTime "
                "parameter to page through contracts to see our entire market list.",
            )
        items = [m.raw for m in self.markets if _matches(m.raw, q)]
        if q.get("sort", "score") == "newest":
            items.sort(key=lambda r: (-r["createdTime"], _scramble(r["id"])))
        else:
            items.sort(key=lambda r: _scramble(r["id"]))
        if "beforeTime" in q:
            items = [r for r in items if r["createdTime"] < int(q["beforeTime"])]
        limit = int(q.get("limit", 100))
        return json_reply([_lite(r) for r in items[:limit]])

    def _bets(self, query: list[tuple[str, str]]) -> Reply:
        q = dict(query)
        ids = {v for k, v in query if k == "contractId"}
        bets = [b for m in self.markets if m.id in ids for b in m.bets]
        bound = int(q["beforeTime"]) if "beforeTime" in q else None
        if "before" in q:
            found = [b for m in self.markets for b in m.bets if b["id"] == q["before"]]
            if not found:
                return _error(404, "Bet specified in before parameter not found")
            t = found[0]["createdTime"]
            bound = t if bound is None else min(bound, t)
        if bound is not None:
            bets = [b for b in bets if b["createdTime"] < bound]
        ascending = q.get("order") == "asc"
        bets.sort(key=lambda b: (b["createdTime"] * (1 if ascending else -1), _scramble(b["id"])))
        return json_reply(bets[: int(q.get("limit", 10_000))])


def _checked(query: list[tuple[str, str]], allowed: frozenset, most: int) -> Reply | None:
    unknown = sorted({k for k, _ in query} - allowed)
    if unknown:
        quoted = ", ".join(f"'{k}'" for k in unknown)
        return _invalid(None, f"Unrecognized key(s) in object: {quoted}")
    limit = dict(query).get("limit")
    if limit is not None and (not limit.isdigit() or not 0 < int(limit) <= most):
        if most == 10_000 and limit.isdigit():
            return _error(400, "Non-points limit must be less than or equal to 10000")
        return _invalid("limit", f"Number must be less than or equal to {most}")
    return None


def _matches(raw: dict, q: dict) -> bool:
    kind, wanted = raw["outcomeType"], q.get("contractType", "ALL")
    numeric = {"PSEUDO_NUMERIC", "NUMBER", "MULTI_NUMERIC"}
    if wanted != "ALL" and not (kind == wanted or (wanted == "PSEUDO_NUMERIC" and kind in numeric)):
        return False
    return q.get("filter", "all") != "resolved" or raw.get("resolutionTime") is not None


def _lite(raw: dict) -> dict:
    return {k: v for k, v in raw.items() if k not in LITE_DROP}


def _scramble(text: str) -> str:
    """An order unrelated to creation (ties come back in arbitrary order)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _error(status: int, message: str) -> Reply:
    return json_reply({"message": message}, status)


def _invalid(name: str | None, error: str) -> Reply:
    return json_reply(
        {"message": "Error validating request.", "details": [{"field": name, "error": error}]}, 400
    )


# -- generation ---------------------------------------------------------------------------------
def _id(rng: random.Random, n: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(rng.choice(alphabet) for _ in range(20 if n % 2 else 10))


def _binary(
    rng: random.Random, n: int, created: int, count: int, open_: bool = False
) -> FakeMarket:
    mid = _id(rng, n)
    bets, p, t = [], round(rng.uniform(0.2, 0.8), 4), created + rng.randrange(1, HOUR)
    for k in range(count):
        t += 0 if k and rng.random() < 0.3 else rng.randrange(1, 6 * HOUR)  # same-ms ties
        bet = _bet(rng, mid, t, p, k)
        bets.append(bet)
        p = bet["probAfter"]
        if rng.random() < 0.08:  # a redemption in the same millisecond: it trades nothing
            bets.append(_bet(rng, mid, t, p, k, redemption=True))
    last = bets[-1]["createdTime"] if bets else created
    close = last + rng.randrange(48 * HOUR, 120 * HOUR)
    resolved = close + rng.randrange(0, 48 * HOUR) - (rng.randrange(HOUR) if n % 5 == 0 else 0)
    resolution = ("YES", "NO", "YES", "NO", "MKT", "YES", "NO", "CANCEL")[n % 8]
    raw = _base(rng, mid, n, created, "BINARY")
    raw.update(
        mechanism="cpmm-1",
        probability=p,
        pool={"NO": rng.uniform(10, 900), "YES": rng.uniform(10, 900)},
        p=rng.uniform(0.2, 0.8),
        closeTime=close if open_ else min(close + (30 * HOUR if n % 9 == 0 else 0), resolved),
        lastBetTime=last,
    )
    if not open_:
        raw.update(
            isResolved=True,
            resolution=resolution,
            resolutionTime=resolved,
            resolutionProbability=round(rng.uniform(0.05, 0.95), 2)
            if resolution == "MKT"
            else round(p, 2),
            resolverId="r" + mid,
            lastUpdatedTime=resolved + rng.randrange(0, 5 * HOUR),
        )
    return FakeMarket(raw, bets)


def _bet(rng: random.Random, mid: str, t: int, p: float, k: int, redemption=False) -> dict:
    resting = not redemption and rng.random() < 0.1
    after = p if redemption or resting else min(0.99, max(0.01, round(p + rng.gauss(0, 0.06), 6)))
    bet = {
        "id": "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12)),
        "contractId": mid,
        "userId": f"u{rng.randrange(40)}",
        "createdTime": t,
        "outcome": "YES" if after >= p else "NO",
        "amount": 0 if redemption else round(rng.uniform(-20, 80), 3),
        "shares": round(rng.uniform(-30, 120), 3),
        "probBefore": p,
        "probAfter": after,
        "fees": {"creatorFee": 0, "liquidityFee": 0, "platformFee": 0},
        "isRedemption": redemption,
        "loanAmount": 0,
    }
    if resting:  # a limit order resting at placement; filled later inside a taker's bet
        bet.update(limitProb=round(p, 2), orderAmount=50, isCancelled=False, fills=[])
        bet.update({} if k % 2 else {"isFilled": False})  # absent on old bets
    return bet


def _base(rng: random.Random, mid: str, n: int, created: int, kind: str) -> dict:
    question = f"Will event {n} happen ({kind.lower()})?"
    text = "" if n % 6 == 0 else f"Resolves YES if event {n} happens. Edited: {n % 4 == 0}."
    slug = f"will-event-{n}-happen"
    return {
        "id": mid,
        "creatorId": f"c{n % 9}",
        "creatorUsername": f"user{n % 9}",
        "creatorName": f"User {n % 9}",
        "createdTime": created,
        "question": question,
        "slug": slug,
        "url": f"https://manifold.markets/user{n % 9}/{slug}",
        "outcomeType": kind,
        "volume": round(rng.uniform(0, 5000), 2),
        "volume24Hours": 0,
        "totalLiquidity": 100,
        "uniqueBettorCount": rng.randrange(0, 60),
        "isResolved": False,
        "token": "MANA",
        "lastUpdatedTime": created,
        "description": {
            "type": "doc",
            "content": [{"type": "paragraph", "content": [{"type": "text", "text": text}]}],
        }
        if n % 3
        else text,
        "textDescription": text if n % 5 else "",
        "groupSlugs": ["politics"] if n % 2 else None,
    }


def _other(rng: random.Random, n: int, created: int, kind: str) -> FakeMarket:
    raw = _base(rng, _id(rng, 1000 + n), 1000 + n, created, kind)
    resolved = created + 400 * HOUR
    raw.update(isResolved=True, resolutionTime=resolved, closeTime=resolved)
    if kind in ("MULTIPLE_CHOICE", "POLL"):
        answers = [
            {
                "id": f"a{n}{i}",
                "index": i,
                "contractId": raw["id"],
                "text": f"option {i}",
                "createdTime": created,
                "probability": 0.25,
                "pool": {"YES": 1, "NO": 3},
            }
            for i in range(4)
        ]
        raw.update(
            mechanism="cpmm-multi-1",
            answers=answers,
            shouldAnswersSumToOne=True,
            addAnswersMode="ONLY_CREATOR",
            resolution=answers[1]["id"],
        )
    else:
        raw.update(
            mechanism="cpmm-1" if kind == "PSEUDO_NUMERIC" else "cpmm-multi-1",
            min=0,
            max=100,
            isLogScale=False,
            value=42.0,
            resolution="MKT",
            resolutionProbability=0.42,
            **({"probability": 0.42} if kind == "PSEUDO_NUMERIC" else {}),
        )
    return FakeMarket(raw, [])


# -- transports -------------------------------------------------------------------------------
def mock_transport(fake: FakeManifold, prefix: str = "/v0"):
    """An `httpx.MockTransport` answering from `fake` (requests under `prefix`, any host)."""
    return fake_http.mock_transport(fake.answer, prefix)


def serve(fake: FakeManifold, prefix: str = "/v0") -> AbstractContextManager[str]:
    """`fake` over HTTP on 127.0.0.1 (a free port); yields the base URL (…/v0)."""
    return fake_http.serve(fake.answer, prefix)
