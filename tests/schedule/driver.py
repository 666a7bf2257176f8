"""Runs the schedule CLI in a real process; with HINDCAST_TEST_DIE="module:Class.method:N" the
process dies (os._exit, no cleanup at all — as under SIGKILL) at the N-th call of that function."""

from __future__ import annotations

import importlib
import os
import sys


def die_at(target: str) -> None:
    where, attribute, count = target.rsplit(":", 2)
    owner = importlib.import_module(where)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original, calls = getattr(owner, name), [0]

    def dying(*args, **kwargs):
        calls[0] += 1
        if calls[0] >= int(count):
            os._exit(137)
        return original(*args, **kwargs)

    setattr(owner, name, dying)


if __name__ == "__main__":
    if os.environ.get("HINDCAST_TEST_DIE"):
        die_at(os.environ["HINDCAST_TEST_DIE"])
    from hindcast.cli.schedule import app

    sys.exit(app(sys.argv[1:], prog_name="hindcast schedule"))
