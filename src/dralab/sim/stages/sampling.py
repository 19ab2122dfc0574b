"""Sampling: metrics at every sample interval, after everything else at that instant."""

from __future__ import annotations

from collections.abc import Callable

from ..engine import Environment, Stage
from ..observe import Observer
from .pods import PodBook

__all__ = ["Progress", "Sampling"]

Progress = Callable[[str, float], None]  # (mode, fraction of simulated time done)


class Sampling(Stage):
    name = "sampling"
    order = 40

    def __init__(self, env: Environment, observer: Observer, book: PodBook, mode: str,
                 duration: float, progress: Progress | None = None) -> None:
        super().__init__(env)
        self.observer = observer
        self.book = book
        self.mode = mode
        self.duration = duration
        self.progress = progress
        self.also: list[Callable[[], None]] = []  # other stages' samplers (admission)

    def sample(self) -> None:
        for sampler in self.also:
            sampler()
        counts = self.book.counts
        self.observer.sample(self.env.now, counts["pending"], counts["running"],
                             counts["completed"])
        if self.progress is not None:
            self.progress(self.mode, min(1.0, self.env.now / self.duration))
