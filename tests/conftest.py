"""Suite-wide hypothesis profiles.

``ci`` (the default) draws the same examples on every run (``derandomize``): a failure in
CI is a failure on any machine, and the main suite stays a few minutes long. New examples are
explored on purpose: ``HYPOTHESIS_PROFILE=explore bash .ci/test`` draws fresh random ones on
each run, ``HYPOTHESIS_PROFILE=thorough`` 5000 per test. ``mutation`` draws 20 per test, for
mutation runs (``fuzz/mutation.py --profile mutation``) that run a package's tests once per
mutant: the rule tests there are exact, and a property test is a second net, not the first.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", parent=settings.get_profile("ci"), derandomize=False)
settings.register_profile("thorough", parent=settings.get_profile("explore"), max_examples=5000)
settings.register_profile("mutation", parent=settings.get_profile("ci"), max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
