"""Rich rendering for the terminal (stdout for results, stderr for progress)."""

from __future__ import annotations

import sys
import time

from hindcast import leaderboard

COLUMNS = (
    "forecaster",
    "n forecasts",
    "failed",
    "n markets",
    "Brier [95% CI]",
    "market Brier",
    "Brier − market [95% CI]",
    "skill vs market",
    "tokens in / out",
    "cost (USD)",
)


def out_console():
    from rich.console import Console

    return Console(file=sys.stdout, width=None if sys.stdout.isatty() else 200)


def err_console():
    from rich.console import Console

    return Console(file=sys.stderr)


def number(value, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:.3g}" if abs(value) >= 100 else f"{value:.{digits}f}"


def with_interval(value, low, high, n_markets: int | None = None, fmt=number) -> str:
    if value is None:
        return "—"

    if low is None:
        too_small = n_markets is not None and leaderboard.display.too_few(n_markets)
        return f"{fmt(value)} ({leaderboard.display.TOO_SMALL})" if too_small else fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def cells(row) -> tuple[str, ...]:
    """The terminal row; missing intervals and costs read as in the exports,
    notes go below the table."""
    return (
        _name(row),
        str(row.n_forecasts),
        str(row.n_failed),
        f"{row.n_markets} (subset)" if row.subset else str(row.n_markets),
        with_interval(row.brier, row.brier_ci_low, row.brier_ci_high, row.n_markets),
        number(row.market_brier),
        with_interval(
            row.brier_diff_vs_market,
            row.diff_ci_low,
            row.diff_ci_high,
            row.n_markets_paired,
            leaderboard.display.signed,
        ),
        number(row.skill_vs_market),
        leaderboard.display.tokens(row),
        leaderboard.display.cost(row),
    )


def _name(row) -> str:
    return row.forecaster if row.slice == "all" else f"{row.forecaster} ({row.slice})"


def notes(board) -> list[str]:
    """One line per row that has a subset mark, a missing interval or skill, or an unknown cost."""
    lines = []
    for row in board:
        text = "; ".join(n for n in (row.subset, leaderboard.display.notes(row)) if n)
        if text:
            lines.append(f"{_name(row)}: {text}")
    return lines


def leaderboard_table(
    board,
    title: str = "leaderboard (lower Brier is better; Brier − market < 0 beats the market; "
    "CIs: bootstrap over markets, none under 5)",
):
    from rich.table import Table

    table = Table(title=title, caption="\n".join(notes(board)) or None, caption_justify="left")
    for column in COLUMNS:
        if column == "forecaster":
            table.add_column(column, overflow="fold", min_width=20)
        else:
            table.add_column(column, justify="right", no_wrap=column == "skill vs market")
    for row in board:
        table.add_row(*cells(row))
    return table


class Ticker:
    """Progress on stderr: a rich bar on a terminal; anywhere else (a log file, CI) one plain line
    every `every` seconds and a last one at the end, so a long job is never silent."""

    def __init__(
        self, label: str, unit: str, every: float = 5.0, clock=time.monotonic, quiet: bool = False
    ) -> None:
        self.label, self.unit, self.every, self.clock = label, unit, every, clock
        self.done, self.total, self.started, self._last, self._start = 0, None, False, None, None
        self._mark: tuple[float, int] | None = None  # (when, done): the first unit, then each line
        self.console = err_console()
        self.quiet = quiet  # -q: neither a bar nor lines
        self.bar = self._bar() if self.console.is_terminal and not quiet else None

    def _bar(self):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        bar = Progress(
            TextColumn(self.label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = bar.add_task(self.label, total=None)
        return bar

    def update(self, done: int, total: int | None = None) -> None:
        if not self.started:
            self.started, self._start = True, self.clock()
            self._last = self._start
            if self.bar is not None:
                self.bar.start()
        self.done, self.total = done, total if total is not None else self.total
        if self._mark is None and done > 0:
            self._mark = (self.clock(), done)
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=self.total)
        elif not self.quiet and self.clock() - self._last >= self.every:
            self._line()

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def _line(self) -> None:
        self._last = self.clock()
        elapsed = self._last - self._start
        of = f"/{self.total:,}" if self.total else ""
        rate = f", {self.done / elapsed:.1f} {self.unit}/s" if elapsed > 0 and self.done else ""
        print(
            f"{self.label}: {self.done:,}{of} {self.unit}{rate}{self._left()} "
            f"({_duration(elapsed)} so far)",
            file=sys.stderr,
            flush=True,
        )
        if self.done:
            self._mark = (self._last, self.done)

    def _left(self) -> str:
        """What is left at the pace since the previous line, or since the first unit done before
        any line: a start-up (a model loading, an index opening) is not a pace, and the pace of a
        batch of quick units is not that of the slow ones after it. Nothing is said where no unit
        was done since then."""
        if self._mark is None or not self.total or self.done >= self.total:
            return ""
        since, before = self._last - self._mark[0], self._mark[1]
        if self.done <= before or since <= 0:
            return ""
        return f", about {_duration((self.total - self.done) * since / (self.done - before))} left"

    def stop(self, last_line: bool = True) -> None:
        """The bar closed, or the last line said (`last_line` False: a job that failed, whose
        error is the one line to print)."""
        if not self.started or self.quiet:  # never started: prints nothing (not even an empty line)
            return
        if self.bar is not None:
            self.bar.stop()
        elif last_line:
            self._line()


class Steps:
    """Progress of a job in steps run one after the other, as a (step, done, total) callback:
    a Ticker a step (labelled `label: step`), each stopped (its last line said) when it reaches
    its total, the next begins or the job ends — not when the job fails: its error is the one
    line then."""

    def __init__(self, label: str, unit: str, quiet: bool = False) -> None:
        self.label, self.unit, self.quiet = label, unit, quiet
        self.current: Ticker | None = None
        self.step = ""

    def __enter__(self):
        return self.update

    def update(self, step: str, done: int, total: int | None) -> None:
        if step != self.step or self.current is None:
            self.__exit__(None)
            label = f"{self.label}: {step}"
            self.step, self.current = step, Ticker(label, self.unit, quiet=self.quiet)
        self.current.update(done, total)
        if total is not None and done >= total:  # the step's end: said now
            self.__exit__(None)

    def __exit__(self, failed, *exc) -> None:
        if self.current is not None:
            self.current.stop(last_line=failed is None)
            self.current = None


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def say(text: str) -> None:
    """One line of what the command is doing, on stderr (stdout keeps the results)."""
    print(f"hindcast: {text}", file=sys.stderr, flush=True)
