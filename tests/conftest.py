"""Session-wide test settings.

Hypothesis by default fails an example that takes more than 200 ms of wall time
(``deadline``) and a test whose data generation is slow in wall time
(``HealthCheck.too_slow``): wall-clock bounds against fixed numbers, which a loaded
machine breaks (issue 29; CI shares its cores). The "dralab" profile turns both off for
every property test. What must be fast is bounded in CPU seconds where it matters
(``cputime.cpu_budget``); a property test that hangs is still a failure, of the whole run.
A test's own ``@settings`` keeps everything it sets and inherits the rest from here.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("dralab", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dralab")
