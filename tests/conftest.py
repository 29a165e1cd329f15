"""Hypothesis profiles for the whole suite.

* ``default``: ~100 examples per property (a local run).
* ``ci``: 400 examples per property, derandomized (the same examples every run, so a merge is never
  blocked by a rare input found by chance; new inputs are explored by the other profiles, and anything
  they find is added with ``@example``); selected automatically when the environment has ``CI=true``.
* ``dev``: 20 examples, for a quick edit-test loop.
* ``hunt``: 3000 examples, for an occasional bug hunt (minutes per property; never in CI).

Pick one explicitly with ``HYPOTHESIS_PROFILE=dev|default|ci``. Every profile has ``deadline=None``:
timings on shared CI machines are noise, and the properties check behaviour, not speed.
Expensive tests scale their own ``max_examples`` with ``strategies.scaled(n)``.
"""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))  # `import strategies` from test modules

_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
settings.register_profile("default", max_examples=100, **_COMMON)
settings.register_profile("ci", max_examples=400, derandomize=True, **_COMMON)
settings.register_profile("dev", max_examples=20, **_COMMON)
settings.register_profile("hunt", max_examples=3000, **_COMMON)

_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _ci else "default")
settings.load_profile(PROFILE)

