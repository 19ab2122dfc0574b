"""The verdict's wording rules (report.verdict) and the spread rule (report.spread),
on hand-built seed numbers."""

from __future__ import annotations

import math

import pytest

from dralab.report.metrics import METRICS
from dralab.report.numbers import NUMBER_KEYS
from dralab.report.spread import MIN_SEEDS, SeedRuns, Spread, seed_runs
from dralab.report.verdict import VERDICT_KEYS, render_verdict_text, verdict

from .fixtures import comparison_result

MODES = (("device-plugin", "Device plugin"), ("dra", "DRA"))


def runs(**per_key: list[tuple[float, float]]) -> SeedRuns:
    """Seeds 1..n; ``key=[(device plugin, dra) per seed]``; other numbers equal (1.0),
    queueing and autoscaling numbers undefined."""
    n = len(next(iter(per_key.values())))
    rows = []
    for i in range(n):
        row = []
        for j in range(2):
            numbers = {k: (math.nan if k.startswith(("admission_", "kueue_", "autoscaled_",
                                                     "nodes_", "node_")) else 1.0)
                       for k in NUMBER_KEYS}
            numbers.update({k: v[i][j] for k, v in per_key.items()})
            row.append(numbers)
        rows.append(tuple(row))
    return SeedRuns("s", tuple(range(1, n + 1)), MODES, tuple(rows))


def test_a_difference_every_seed_agrees_on_is_a_finding_with_unit_sign_and_spread() -> None:
    v = verdict(runs(mean_gpus_busy=[(50, 34), (48, 33), (52, 35), (49, 33), (51, 34)]))
    assert v.headline == ("DRA against Device plugin, over 5 seeds: mean GPUs busy 16.20 ± "
                          "0.84 fewer (50.00 → 33.80); no other difference beyond the seeds' "
                          "spread.")
    assert v.findings == ("Mean GPUs busy: 16.20 ± 0.84 fewer (50.00 → 33.80; every seed "
                          "agrees): the same work held fewer GPUs (compare pods started and "
                          "throughput).",)
    assert v.gains == ("mean_gpus_busy",) and v.losses == ()
    assert v.decision.startswith("DRA is better on mean GPUs busy and worse on nothing")


def test_a_difference_within_the_spread_is_never_a_finding() -> None:
    # DRA starts more pods on average, but one seed says otherwise: noise, said so.
    v = verdict(runs(pods_started=[(500, 510), (500, 490), (500, 530), (500, 505),
                                   (500, 515)]))
    assert v.findings == () and v.gains == () and v.losses == ()
    assert v.within.startswith("Within the seeds' spread (not a difference): pods started "
                               "(+10 ± 14.6). The same in every seed: mean GPUs busy, ")
    assert v.headline.endswith("no difference beyond the seeds' spread.")
    assert v.decision.startswith("No measurable difference on this workload")


def test_one_sign_is_not_enough_when_one_seed_carries_the_mean() -> None:
    v = verdict(runs(wait_p90=[(10, 11), (10, 11), (10, 11), (10, 11), (10, 200)]))
    assert v.findings == ()
    assert "scheduling wait p90 (+38.8 s ± 1.41 min)" in v.within


@pytest.mark.parametrize("seeds", [1, MIN_SEEDS - 1])
def test_too_few_seeds_give_no_finding_and_say_so(seeds: int) -> None:
    v = verdict(runs(mean_gpus_busy=[(50, 30)] * seeds))
    assert v.findings == ()
    plural = "s" if seeds > 1 else ""
    assert v.note.startswith(f"Only {seeds} seed{plural} (")
    assert "Run with --seeds 5" in v.note
    assert v.decision.startswith("Not yet:")
    assert v.headline.endswith("too few seeds to tell a difference from noise.")
    assert v.within.startswith("Differences not told from noise yet: mean GPUs busy (−20")


def test_gains_and_losses_make_a_trade_off() -> None:
    v = verdict(runs(mean_gpus_busy=[(50, 30), (51, 31), (49, 29)],
                     wait_p90=[(10, 70), (12, 75), (11, 72)]))
    assert v.gains == ("mean_gpus_busy",) and v.losses == ("wait_p90",)
    # A loss says who is worse, not the better side's meaning.
    assert v.findings[1] == ("Scheduling wait p90: 1.02 min ± 1.53 s longer (11 s → 1.21 min; "
                             "every seed agrees): worse for DRA.")
    assert v.decision.startswith("A trade-off: DRA is better on mean GPUs busy but worse on "
                                 "scheduling wait p90")


def test_losses_alone_say_keep_the_base() -> None:
    v = verdict(runs(pods_never_started=[(0, 3), (0, 4), (0, 3)]))
    assert v.losses == ("pods_never_started",)
    assert v.decision.startswith("DRA is worse on pods never started and better on nothing "
                                 "measured: keep Device plugin")


def test_numbers_undefined_in_the_run_are_left_out() -> None:
    v = verdict(runs(mean_gpus_busy=[(2, 1)] * 3))
    assert "admission" not in v.within and "cost" not in v.within


def test_one_mode_has_nothing_to_compare() -> None:
    one = SeedRuns("s", (1,), MODES[:1], (({k: 1.0 for k in NUMBER_KEYS},),))
    v = verdict(one)
    assert v.headline == "Device plugin only: there is nothing to compare."
    assert v.findings == ()


def test_spread_and_text() -> None:
    s = Spread.of([1.0, 2.0, math.nan, 3.0])
    assert (s.mean, s.sd, s.low, s.high, s.n) == (2.0, 1.0, 1.0, 3.0, 3)
    assert math.isnan(Spread.of([]).mean)
    text = render_verdict_text(verdict(runs(mean_gpus_busy=[(50, 30), (51, 31), (49, 29)])))
    assert text.startswith("Verdict: DRA against Device plugin, over 3 seeds:")
    assert "\nDecide: " in text


def test_seed_runs_of_results_every_verdict_key_is_a_number() -> None:
    results = [comparison_result(seed=s) for s in (7, 8)]
    r = seed_runs(results)
    assert r.seeds == (7, 8) and [m for m, _ in r.modes] == ["device-plugin", "dra"]
    assert set(VERDICT_KEYS) <= set(NUMBER_KEYS)
    # The verdict weighs exactly the rows a table may highlight: they never disagree.
    assert set(VERDICT_KEYS) == {m.key for m in METRICS if m.better is not None}
    assert len(VERDICT_KEYS) == len(set(VERDICT_KEYS))
    with pytest.raises(ValueError, match="no simulation result"):
        seed_runs([])


def test_costs_carry_their_unit() -> None:
    r = runs(autoscaled_cost=[(100, 80), (110, 85), (105, 84)])
    r = SeedRuns(r.scenario, r.seeds, r.modes, r.numbers, "USD")
    v = verdict(r)
    assert v.findings[0] == ("Cost of autoscaled pools: 22.00 ± 2.65 USD lower (105.00 → "
                             "83.00; every seed agrees): the autoscaled nodes cost less.")
