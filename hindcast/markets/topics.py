"""A fixed keyword rule that labels a market's topic when the source has no category.

The rule is deliberately simple and documented so slices by topic are reproducible: the
first topic whose keywords occur (as whole words, case-insensitive) in the question wins.
"""

from __future__ import annotations

import re

TOPIC_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("economy", ("fed", "rate cut", "rate cuts", "rate hike", "interest rate", "interest rates",
                 "bps", "treasury yield", "inflation", "cpi", "gdp", "recession", "tariff", "tariffs", "unemployment")),
    ("crypto", ("bitcoin", "btc", "ethereum", "eth", "solana", "crypto", "airdrop", "hyperliquid",
                "token", "fdv", "etf", "bnb", "doge", "pepe", "popcat", "stablecoin", "memecoin", "xrp", "dogecoin")),
    ("finance", ("gold", "silver", "oil", "stock", "s&p", "nasdaq", "nvda", "tsla", "market cap", "ipo", "close at", "shares")),
    ("geopolitics", ("russia", "ukraine", "ceasefire", "israel", "gaza", "iran", "taiwan", "venezuela",
                     "military", "nato", "war", "invade", "invasion", "capture", "strike", "troops",
                     "hamas", "houthi", "putin", "zelenskyy", "sanctions", "strikes", "nuke", "nuclear",
                     "peacekeeping", "enrichment", "lebanon", "syria", "north korea")),
    ("sports", ("hockey", "goalscorer", "epl", "baseball", "treble", "champions league", "nfl",
                "head coach", "ncaa", "conference", "trophy", "relegated", "ligue 1", "fa cup",
                "australian open", "division", "champion", "starter", "wooden award", "la liga", "serie a", "bundesliga")),
    ("politics", ("election", "elections", "mayor", "mayoral", "president", "presidential", "governor",
                  "senate", "parliament", "parliamentary", "seats", "party", "vote", "nominee",
                  "cabinet", "trump", "prime minister", "congress", "shutdown", "impeach", "pope",
                  "government", "secretary", "biden", "pardon", "supreme court", "minister")),
    ("sports", ("super bowl", "championship", "world series", "nba", "nfl", "mlb", "nhl", "mvp", "afc",
                "nfc", "fifa", "world cup", "league", "premier league", "grand prix", "f1", "ufc",
                "poker", "finals", "playoffs", "stanley cup", "ballon d'or", "tennis", "golf", "boxing")),
    ("entertainment", ("box office", "gross", "opening weekend", "album", "spotify", "billboard",
                       "oscar", "oscars", "academy", "grammy", "grammys", "movie", "film", "netflix",
                       "person of the year", "song", "emmy", "emmys", "tiktok", "youtube", "eurovision",
                       "james bond", "straight weeks", "taylor swift", "searched")),
    ("science", ("storms", "hurricane", "earthquake", "aliens", "interstellar", "nasa", "measles",
                 "pandemic", "bird flu", "hottest", "temperature", "climate", "weather")),
    ("tech", ("ai", "openai", "anthropic", "google", "apple", "nvidia", "meta", "tesla", "spacex",
              "gpt", "gemini", "grok", "release", "released", "launch", "iphone", "model")),
)

_PATTERNS = tuple(
    (topic, re.compile(r"(?<![\w&])(" + "|".join(re.escape(k) for k in words) + r")(?![\w&])", re.I))
    for topic, words in TOPIC_KEYWORDS
)


def topic_of(question: str) -> str:
    """The first matching topic of TOPIC_KEYWORDS, or 'other'."""
    for topic, pattern in _PATTERNS:
        if pattern.search(question):
            return topic
    return "other"
