"""Progress for a stderr that is no terminal (a log file, CI, a pipe): a plain line every ~10 seconds with the
counts, the rate and the time left, and no bars or control sequences. On a terminal the commands draw rich bars
instead (``sift.cli.ingest``, ``sift.cli.eval``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

INTERVAL_S = 10.0


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: a time for people."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


class ProgressLines:
    """``update(step, done, total, unit)`` prints ``label: step done/total unit, rate unit/s, about T left`` at most
    once every ``interval`` seconds (the first after ``interval``: a run that short needs none). The rate and the
    time left are those of the current step, counted from when it began."""

    def __init__(self, label: str, interval: float = INTERVAL_S, out: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.interval, self.clock = label, interval, clock
        self.out = out
        self._last = clock()
        self._step: str | None = None
        self._step_start = self._last
        self._step_done = 0

    def update(self, step: str, done: int, total: int | None, unit: str) -> None:
        now = self.clock()
        if step != self._step:
            self._step, self._step_start, self._step_done = step, now, done
        if now - self._last < self.interval:
            return
        self._last = now
        line = f"{self.label}: {step} {done}" + (f"/{total}" if total else "") + (f" {unit}" if unit else "")
        elapsed = now - self._step_start
        rate = (done - self._step_done) / elapsed if elapsed > 0 else 0.0
        if rate > 0 and unit:
            line += f", {rate:.1f} {unit}/s" if rate < 10 else f", {rate:.0f} {unit}/s"
            if total and total > done:
                line += f", about {duration((total - done) / rate)} left"
        line += f" ({duration(elapsed)} in this step)" if step != self.label else f" ({duration(elapsed)} so far)"
        print(line, file=self.out or sys.stderr, flush=True)
