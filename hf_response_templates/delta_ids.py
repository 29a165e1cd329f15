"""Generated ids of a `DeltaStream`: its completion id and tool-call ids, drawn from ``random.Random(id_seed)``
(or `random.SystemRandom` without a seed) as 24 characters each (`delta_state._random_id`).

Seeding a generator (``random.Random(0)`` runs the Mersenne Twister's seeding in C behind ~60 Python opcodes)
and drawing from it cost a 1k character stream about as much as three of its pieces, and every stream with the
same seed draws the same ids. So the draws of a seed are made once and kept (`Draws`): the first `_KEEP` of
each of the last `_MAX_SEEDS` seeds (ints and strings; other seeds get a generator of their own per stream).
A stream reads draw ``i`` from that list; past the kept draws it continues on a private copy of the generator
(`Draws.fork`), so a stream of thousands of calls neither grows the shared list nor re-draws. The ids are the
same, in the same order, as those of one generator per stream.
"""

from __future__ import annotations

import random
import sys
import threading

from hf_response_templates.delta_state import _random_id

__all__ = ["Draws", "draws_for"]

_KEEP = 64  # draws kept per seed
_MAX_SEEDS = 256  # seeds kept (the oldest is dropped)


class Draws:
    """The draws (`_random_id`) of one generator, in order: ``ids[i]`` is draw ``i`` once made (`draw`)."""

    __slots__ = ("ids", "keep", "_rng", "_lock")

    def __init__(self, rng: random.Random, keep: int):
        self.ids: list[str] = []
        self.keep = keep  # at most this many are made (a shared list); `fork` for more
        self._rng = rng
        self._lock = threading.Lock()  # (streams of one seed may draw from several threads)

    def draw(self, i: int) -> str:
        """Draw ``i`` (``i < keep``), made now if it was not (with the draws before it)."""
        ids = self.ids
        if i >= len(ids):
            with self._lock:
                rng = self._rng
                while len(ids) <= i:
                    ids.append(_random_id(rng))
        return ids[i]

    def fork(self) -> Draws:
        """A private copy holding every kept draw, whose generator goes on from there with no limit."""
        self.draw(self.keep - 1)
        with self._lock:
            rng = random.Random()
            rng.setstate(self._rng.getstate())
            mine = Draws(rng, sys.maxsize)
            mine.ids = list(self.ids)
        return mine


_SEEDS: dict[tuple, Draws] = {}


def draws_for(seed: int | str | None) -> Draws:
    """The draws of ``random.Random(seed)``: shared with every stream of that seed (an int or a str); a private
    generator for other seeds, and a `random.SystemRandom` one without a seed."""
    if seed is None:
        return Draws(random.SystemRandom(), sys.maxsize)
    t = type(seed)
    if t is not int and t is not str:
        return Draws(random.Random(seed), sys.maxsize)
    key = (t, seed)
    d = _SEEDS.get(key)
    if d is None:
        d = Draws(random.Random(seed), _KEEP)
        if len(_SEEDS) >= _MAX_SEEDS:
            try:
                del _SEEDS[next(iter(_SEEDS))]
            except (KeyError, StopIteration, RuntimeError):  # (another thread got there first)
                pass
        d = _SEEDS.setdefault(key, d)
    return d
