"""Reddit monthly dumps (Pushshift / Arctic Shift `RS_YYYY-MM.zst`, `RC_YYYY-MM.zst`) → Documents.

Ids become Reddit fullnames (`t3_…` submissions, `t1_…` comments) so both kinds share one
id space; a comment's `thread_id` is its submission (`link_id`), a submission's its own id.
`edited`: false/0 → never edited, true → edited at an unknown time, a number → edited at
that instant; `_meta.is_edited` without a time also means unknown. Counters were measured
at the (second) retrieval, recorded as `retrieved_at`. Missing and extra keys are tolerated.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from hindcast.archive.fields import text_field, unix_field
from hindcast.errors import BadRow
from hindcast.records import Document

DELETED_MARKERS = frozenset({"[deleted]", "[removed]"})


def parser_for(path: Path) -> Callable[[dict], Document]:
    name = path.name.upper()
    if name.startswith("RS_"):
        return parse_submission
    if name.startswith("RC_"):
        return parse_comment
    return lambda row: (parse_comment if "link_id" in row else parse_submission)(row)


def parse_submission(row: dict) -> Document:
    base = "t3_" + text_field(row, "id", required=True)
    text, deleted = _body(text_field(row, "selftext"))
    return Document(
        id=base,
        source=_subreddit(row),
        created_at=unix_field(row, "created_utc"),
        title=text_field(row, "title", required=True),
        text=text,
        url=_url(row),
        kind="reddit_submission",
        deleted=deleted,
        thread_id=base,
        num_comments=_count(row, "num_comments"),
        **_common(row),
    )


def parse_comment(row: dict) -> Document:
    link_id = _fullname(row, "link_id", ("t3_",))
    text, deleted = _body(text_field(row, "body", required=True))
    return Document(
        id="t1_" + text_field(row, "id", required=True),
        source=_subreddit(row),
        created_at=unix_field(row, "created_utc"),
        title="",
        text=text,
        url=_url(row),
        kind="reddit_comment",
        deleted=deleted,
        thread_id=link_id,
        parent_id=_fullname(row, "parent_id", ("t1_", "t3_")),
        **_common(row),
    )


def _common(row: dict) -> dict:
    state, edited_at = edit_of(row)
    return {
        "edit_state": state,
        "edited_at": edited_at,
        "retrieved_at": _retrieved(row),
        "score": _count(row, "score"),
    }


def edit_of(row: dict) -> tuple[str, datetime | None]:
    edited = row.get("edited", False)
    meta = _meta(row)
    if edited is None or edited is False or (not isinstance(edited, bool) and edited == 0):
        return ("unknown", None) if meta.get("is_edited") is True else ("never", None)
    if edited is True:
        return "unknown", None
    return "at", unix_field(row, "edited")


def _retrieved(row: dict) -> datetime | None:
    meta = _meta(row)
    if meta.get("retrieved_2nd_on") is not None:
        return unix_field(meta, "retrieved_2nd_on")
    for name in ("retrieved_on", "retrieved_utc"):
        if row.get(name) is not None:
            return unix_field(row, name)
    return None


def _meta(row: dict) -> dict:
    meta = row.get("_meta")
    return meta if isinstance(meta, dict) else {}


def _body(text: str) -> tuple[str, bool]:
    return ("", True) if text.strip() in DELETED_MARKERS else (text, False)


def _subreddit(row: dict) -> str:
    name = text_field(row, "subreddit")
    return f"r/{name}" if name else "reddit"


def _url(row: dict) -> str:
    permalink = text_field(row, "permalink")
    return (
        "https://www.reddit.com" + permalink
        if permalink.startswith("/")
        else text_field(row, "url")
    )


def _fullname(row: dict, name: str, prefixes: tuple[str, ...]) -> str:
    value = text_field(row, name, required=True)
    if not value.startswith(prefixes):
        raise BadRow(f"{name} {value!r} does not start with {' or '.join(prefixes)}")
    return value


def _count(row: dict, name: str) -> int | None:
    value = row.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise BadRow(f"{name} is {value!r}, expected an integer")
    return int(value)
