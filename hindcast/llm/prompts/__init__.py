"""Prompt templates kept as files; each is identified in the run record by its sha256.

A template file has a `### system` section and a `### user` section; placeholders are
`$name` (string.Template), so JSON braces in the text need no escaping. No template holds
an example probability: a small model copies any number it is shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from string import Template

from hindcast.records import Question
from hindcast.timeutil import iso

DESCRIPTION_CHARS = 1500


@dataclass(frozen=True)
class Prompt:
    """A template's name, text and the sha256 of that text."""

    name: str
    text: str
    sha256: str

    def messages(self, **values: object) -> list[dict]:
        """The chat messages with every placeholder filled (a missing one is a KeyError)."""
        system, user = _sections(self.name, self.text)
        return [
            {"role": "system", "content": Template(system).substitute(values).strip()},
            {"role": "user", "content": Template(user).substitute(values).strip()},
        ]

    @property
    def record(self) -> dict:
        return {"prompt": self.name, "prompt_sha256": self.sha256}


def load(name: str) -> Prompt:
    """The template `name` (file `name.txt` in this package)."""
    try:
        text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"no prompt template {name!r} (known: {', '.join(names())})") from None
    return Prompt(name, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


def names() -> list[str]:
    return sorted(
        p.name[:-4] for p in resources.files(__package__).iterdir() if p.name.endswith(".txt")
    )


def _sections(name: str, text: str) -> tuple[str, str]:
    head, sep, user = text.partition("### user")
    if not sep or "### system" not in head:
        raise ValueError(f"prompt template {name!r} needs a '### system' and a '### user' section")
    return head.split("### system", 1)[1], user


def question_fields(question: Question) -> dict:
    """The question as the templates show it: text, resolution details, dates (no outcome)."""
    description = " ".join(question.description.split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[:DESCRIPTION_CHARS] + " …"
    close = iso(question.scheduled_close)[:10] if question.scheduled_close else "not stated"
    return {
        "today": iso(question.t0)[:10],
        "question": question.question.strip(),
        "description": description or "(none)",
        "close": close,
    }
