"""The vocabulary the model-free leak detectors read text with (`lexical` and `lexical2`):
the word pattern, month names, stop words and generic words, the outcome-verb, hedge, past-tense,
date and deadline patterns, the past forms of outcome verbs, aliases of common entities, and
`plain_number` (a figure as written → its plain value). Chosen on real headlines with the constants
of `lexical` (see its REVEAL_THRESHOLD)."""

from __future__ import annotations

import re

WORD = re.compile(
    r"\$?\d+(?:,\d{3})*(?:\.\d+)?[kmb%+]*(?!\w)|[\w$%+'’.-]+", re.UNICODE | re.IGNORECASE
)
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "by",
        "to",
        "for",
        "from",
        "with",
        "and",
        "or",
        "x",
        "vs",
        "vs.",
        "be",
        "is",
        "are",
        "was",
        "were",
        "will",
        "would",
        "does",
        "did",
        "do",
        "has",
        "have",
        "had",
        "can",
        "could",
        "should",
        "before",
        "after",
        "during",
        "this",
        "that",
        "next",
        "any",
        "no",
        "not",
        "yes",
        "than",
        "more",
        "less",
        "most",
        "least",
        "above",
        "below",
        "over",
        "under",
        "between",
        "following",
        "end",
        "year",
        "week",
        "month",
        "day",
        "new",
        "first",
        "second",
        "third",
        "its",
        "his",
        "her",
        "their",
        "who",
        "what",
        "which",
        "when",
        "where",
        "how",
        "win",
        "wins",
        "won",
        "become",
        "becomes",
        "reach",
        "hit",
        "happen",
    ]
)
GENERIC = frozenset(
    [
        "will",
        "the",
        "by",
        "before",
        "in",
        "after",
        "on",
        "of",
        "for",
        "and",
        "x",
        "2024",
        "2025",
        "2026",
        "2027",
        "election",
        "elections",
        "president",
        "presidential",
        "prime",
        "minister",
        "party",
        "seat",
        "seats",
        "most",
        "top",
        "best",
        "award",
        "awards",
        "championship",
        "champion",
        "league",
        "cup",
        "series",
        "world",
        "national",
        "game",
        "games",
        "season",
        "model",
        "market",
        "rate",
        "rates",
        "interest",
        "american",
        "mayor",
        "governor",
        "chancellor",
        "minister",
        "parliamentary",
        "parliament",
        "chamber",
        "deputies",
        "division",
        "central",
        "west",
        "east",
        "north",
        "south",
        "city",
        "state",
        "states",
        "united",
        "us",
        "u.s",
        "new",
        "next",
        "ai",
        "company",
        "largest",
    ]
)
# headline verbs that state an outcome (a headline's present tense reports a past event)
OUTCOME = re.compile(
    r"""\b(?:wins?|won(?!['’]t)|winners?|triumph(?:s|ed)?|awarded|recipient|laureate|elects|elected|
    re-?elected|\w+-elect|sworn\s+in|heads?\s+to\s+(?:\S+\s+){0,3}run-?off|run-?off\s+between|
    captur(?:es|ed)|seiz(?:es|ed)|took|takes?\s+(?:control|over)|fell\s+to|falls\s+to|
    signs?\s+(?:into\s+law|(?:\w+\s+)?(?:deal|bill|order|agreement|treaty))|signed|
    pass(?:es|ed)|approv(?:es|ed)|announc(?:es|ed)|
    (?:cuts?|lowers?|lowered|rais(?:es|ed)|hikes?|hiked)\s+(?:(?:its|key|benchmark|interest|the|
    us|u\.s\.)\s+){0,3}
    (?:rates?|interest)|
    holds?\s+(?:\w+\s+){0,2}steady|leaves?\s+(?:\w+\s+){0,2}unchanged|
    keeps?\s+(?:\w+\s+){0,2}unchanged|
    clinch(?:es|ed)|beats?|defeats?|defeated|loses?|lost|concedes?|conceded|resigns?|resigned|
    ousted|
    out\s+as|steps?\s+down|named|declar(?:es|ed)|victory|victorious|crowned|sweeps?|swept|
    eliminated|
    knocked\s+out|fails?\s+to|failed\s+to|recogni[sz](?:es|ed)|strikes?|struck|attack(?:s|ed)?|
    launch(?:es|ed)?\s+(?:an?\s+)?(?:\w+\s+)?(?:attacks?|strikes?)|lash(?:es)?\s+out|retaliat\w*|
    rates?\s+steady|
    bomb(?:s|ed)|invad(?:es|ed)|guilty|convicted|acquitted|landslide)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# a word before an outcome word that makes it a noun or an infinitive ('a rate cut', "Fed's win",
# 'to win')
NOUN_BEFORE = re.compile(
    r"""(?:\b(?:a|an|the|its|his|her|their|our|any|another|latest|new|first|second|
    third|fourth|rate|rates|interest-rate|rate-cut|of|for|on|in|to|at|by|from|december|october|
    september|
    november|march|january|boat|military|ground|drone|missile|air|aerial|deadly|possible|
    potential|help|
    u\.s\.|us|american|israeli|russian|iranian|ukrainian|chinese))\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
# a word after an outcome word that makes it a noun ('rate-cut signals', 'cut expectations')
NOUN_AFTER = re.compile(
    r"""^\W*(?:expectations?|hopes?|bets?|odds|signals?|chances?|decision|path|talks?|fears?|
    outlook|speculation|cycle|plans?|threats?|risks?)\b""",
    re.IGNORECASE | re.VERBOSE,
)
# a price or count moving past a number ('dips below $90,000', 'tops 4 million'): a cue only when
# the number is one the question names
NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?(?:k|m|bn|b)?(?!\w)", re.IGNORECASE)
PRICE_MOVE = re.compile(
    r"""\b(?:dips?|dipped|falls?|fell|drops?|dropped|sinks?|sank|slides?|slid|plunges?|
    plunged|tumbles?|rises?|rose|climbs?|climbed|surges?|surged|jumps?|jumped|tops?|topped|hits?|
    cross(?:es|ed)|breaks?|broke|reach(?:es|ed)|pass(?:es|ed)|exceeds?|exceeded)
    \s+(?:\w+\s+){0,2}?(?:below|under|above|over|past|
    through|to)?\s*(?P<number>\$?\d[\d,.]*(?:k|m|bn|b)?)(?![\w-])""",
    re.IGNORECASE | re.VERBOSE,
)
# a noun that reports a past outcome whatever precedes it ('soar to victory', "Milei's triumph")
OUTCOME_NOUN = re.compile(r"^(?:victory|victories|victorious|triumph\w*|landslide)$", re.IGNORECASE)
# an outcome noun after 'after', 'following' or 'since' reports a past event ('after the Fed's
# December rate cut')
AFTER_EVENT = re.compile(
    r"\b(?:after|following|since|latest)\s+(?:\S+\s+){0,4}?"
    r"(?:cuts?|hikes?|win|wins|victory|strikes?|attacks?|"
    r"elections?|vote|decision)\b",
    re.IGNORECASE,
)
HEDGE = re.compile(
    r"""(?:\b(?:will|would|could|may|might|can|poised|set\s+to|expected|expects?|
    favou?red|favorites?|likely|unlikely|odds|polls?|polling|forecasts?|predicts?|predictions?|
    ahead\s+of|
    preview|what\s+to\s+know|how\s+to\s+watch|bids?\s+to|help(?:s|ed)?|seeks?|seeking|hopes?|
    eyes|vows?|threatens?|
    plans?|planning|if|whether|race\s+to|aims?|push(?:es)?\s+(?:for|to)|considers?|weighs?|mulls?|
    could|chance|neck-and-neck|too\s+close|hopes?\s+for|bets?\s+on)\b)""",
    re.IGNORECASE | re.VERBOSE,
)
PAST = re.compile(
    r"\b(?:\w{3,}ed|was|were|had|won|took|fell|held|lost|said|became|struck|swept)\b", re.IGNORECASE
)
YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
MONTH_YEAR = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?\s+"
    r"(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(\d{4})\b",
    re.IGNORECASE,
)
DEADLINE = re.compile(
    r"\s+(?:by|before|in|on|after|during|this)\s+(?:the\s+end\s+of\s+)?"
    r"(?:[A-Z][a-z]+\.?\s+\d{1,2}(?:,?\s*\d{4})?|[A-Z][a-z]+(?:\s+\d{4})?|\d{4}|year|month)\s*$"
)
QUESTION_WORDS = frozenset(
    [
        "will",
        "did",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "can",
        "could",
        "should",
        "would",
        "which",
        "who",
        "what",
        "when",
        "how",
    ]
)
PAST_OF = {
    "win": "won",
    "become": "became",
    "be": "was",
    "hit": "hit",
    "cut": "cut",
    "lead": "led",
    "leave": "left",
    "hold": "held",
    "take": "took",
    "make": "made",
    "have": "had",
    "get": "got",
    "run": "ran",
    "go": "went",
    "rise": "rose",
    "fall": "fell",
    "sell": "sold",
    "buy": "bought",
    "strike": "struck",
    "sign": "signed",
    "say": "said",
    "meet": "met",
    "find": "found",
    "lose": "lost",
}

# a few names headlines spell otherwise (token → phrases that name it)
ALIASES = {
    "nyc": ("new york", "new york city", "new york's"),
    "fed": ("federal reserve", "fomc", "powell"),
    "us": ("u.s", "united states", "american", "america"),
    "uk": ("britain", "british", "u.k"),
    "academy": ("oscar", "oscars"),
    "nfc": ("super bowl",),
    "afc": ("super bowl",),
}


def plain_number(token: str) -> str:
    """'$90,000', '90k', '90000' → '90000'; '4%' → '4'; a non-number → ''."""
    token = token.lower().strip("$+%.,")
    scale = {"k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9}.get(re.sub(r"[\d.,]", "", token), None)
    digits = re.sub(r"[^\d.]", "", token.replace(",", ""))
    if not digits or scale is None and not token.replace(",", "").replace(".", "").isdigit():
        return ""
    try:
        value = float(digits) * (scale or 1)
    except ValueError:
        return ""
    return str(int(value)) if value.is_integer() else f"{value:g}"
