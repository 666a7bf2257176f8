"""One simulated market of the fake Polymarket (SimMarket): its life over the test's clock,
and the Gamma, CLOB and Data API items and the YES history it serves at any instant."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from hindcast.timeutil import iso, to_unix

NO_END_DATE = "none"  # SimMarket.end: the item has no endDate at all


@dataclass(frozen=True)
class SimMarket:
    """One binary market: opens, (scheduled end), resolves; YES or NO; its flags."""

    n: int
    opened: datetime
    resolves: datetime
    yes: bool = True
    end: datetime | str | None = (
        None  # endDate: None = the resolution instant; NO_END_DATE = absent
    )
    step: int = 3 * 3600  # seconds between the fake's raw price points
    data_api: bool = True  # the Data API serves its history
    fidelity_trap: bool = False  # the CLOB answers only fidelity >= 720 for it
    disputed: bool = False
    rules_updated_at: datetime | None = None
    outcomes: tuple[str, ...] = ("Yes", "No")
    settles: datetime | None = (
        None  # when UMA resolves it (default: at close); closed before: "proposed"
    )
    first_price: datetime | None = None  # the first raw price point (default: the opening)

    @property
    def end_date(self) -> datetime | None:
        if isinstance(self.end, str):  # NO_END_DATE
            return None
        return self.end or self.resolves

    @property
    def condition_id(self) -> str:
        return "0x" + hashlib.sha256(f"market-{self.n}".encode()).hexdigest()

    @property
    def yes_token(self) -> str:
        return str(10**70 + self.n * 2)

    def raw(self, now: datetime) -> dict:
        """The Gamma market object as of `now` (resolved only from `resolves` on)."""
        closed = self.resolves <= now
        settled = closed and (self.settles or self.resolves) <= now
        prices = (["1", "0"] if self.yes else ["0", "1"]) if closed else ["0.5", "0.5"]
        end = {"endDate": iso(self.end_date)} if self.end_date else {}
        statuses = (
            ["proposed", "disputed", "proposed", "resolved"]
            if self.disputed
            else ["proposed", "resolved"]
        )
        rules = (
            {"questionRulesUpdated": True, "questionRulesUpdatedAt": iso(self.rules_updated_at)}
            if self.rules_updated_at
            else {}
        )
        return (
            end
            | rules
            | {
                "id": str(1000 + self.n),
                "conditionId": self.condition_id,
                "questionID": f"0xq{self.n}",
                "question": f"Will thing {self.n} happen?",
                "slug": f"thing-{self.n}",
                "description": f"Resolves Yes if thing {self.n} happens.",
                "startDate": iso(self.opened),
                "createdAt": iso(self.opened),
                **(
                    {
                        "closedTime": self.resolves.strftime("%Y-%m-%d %H:%M:%S+00"),
                        "umaResolutionStatus": "resolved" if settled else "proposed",
                        "umaResolutionStatuses": json.dumps(statuses if settled else ["proposed"]),
                        "umaEndDate": iso(self.settles or self.resolves),
                    }
                    if closed
                    else {}
                ),
                "closed": closed,
                "active": True,
                "wasDisputed": self.disputed,
                "outcomes": json.dumps(list(self.outcomes)),
                "outcomePrices": json.dumps(prices),
                "clobTokenIds": json.dumps([self.yes_token, str(10**70 + self.n * 2 + 1)]),
                "volume": "1000.5",
                "volumeNum": 1000.5,
                "negRisk": False,
                "feesEnabled": False,
                "events": [
                    {
                        "id": str(self.n),
                        "slug": f"event-{self.n}",
                        "category": "Politics",
                        "tags": [],
                    }
                ],
            }
        )

    def points(self) -> list[tuple[int, float]]:
        """The raw YES history (unix seconds, price) from opening to close, every `step`."""
        start, stop = to_unix(self.first_price or self.opened), to_unix(self.resolves)
        return list(_points(start, stop, self.step, self.n, self.yes))

    def series(
        self, bucket: int, start: int | None = None, end: int | None = None, terminal: bool = False
    ) -> list[tuple[int, float]]:
        """The points on multiples of `bucket` in [start, end) — what the fake serves; with
        `terminal`, the last raw tick of the window too (off-grid, as the Data API does)."""
        raw = [
            (t, p)
            for t, p in self.points()
            if (start is None or t >= start) and (end is None or t < end)
        ]
        served = [(t, p) for t, p in raw if t % bucket == 0]
        if terminal and raw and (not served or served[-1] != raw[-1]):
            served.append(raw[-1])
        return served


@lru_cache(maxsize=1024)
def _points(start: int, stop: int, step: int, n: int, yes: bool) -> tuple[tuple[int, float], ...]:
    """Computed once per market: every history request of the fake reads them."""
    first = -(-start // step) * step
    return tuple((t, _price(n, k, yes)) for k, t in enumerate(range(first, stop, step)))


def _price(n: int, k: int, yes: bool) -> float:
    drift = (0.002 if yes else -0.002) * k
    wobble = ((n * 7919 + k * 104729) % 21 - 10) / 1000
    return round(min(0.99, max(0.01, 0.5 + drift + wobble)), 4)
