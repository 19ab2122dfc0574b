"""``dralab simulate``: the main job — a what-if of a fleet and workload over time."""

from __future__ import annotations

import time
from pathlib import Path

import click

from dralab.report import render_summary_table, write_report
from dralab.sim.default import default_scenario
from dralab.sim.scenario import MODES, load_scenario
from dralab.sim.simulate import simulate

from .common import one_line_errors


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    for m in modes:
        if m not in MODES:
            raise click.BadParameter(f"unknown mode {m!r}: use {', '.join(MODES)}",
                                     param_hint="--compare")
    if not modes:
        raise click.BadParameter("name at least one mode", param_hint="--compare")
    return modes


@click.command("simulate")
@click.option("--scenario", "scenario_path", metavar="FILE", default=None,
              help="A Scenario file (default: the built-in scenario).")
@click.option("--seed", type=int, default=None, help="Override the scenario's seed.")
@click.option("--out", "out_dir", default="dralab-report", show_default=True, metavar="DIR",
              help="Where the HTML report, metrics.json and CSV files go.")
@click.option("--compare", "compare", default=None, metavar="MODE,MODE",
              help="Modes to compare, in order: device-plugin, dra.")
@click.option("--quiet", is_flag=True, help="No progress bar and no summary table.")
@one_line_errors
def simulate_cmd(scenario_path: str | None, seed: int | None, out_dir: str,
                 compare: str | None, quiet: bool) -> None:
    """Simulate a fleet and workload over time, DRA against the device-plugin model.

    Without --scenario, runs the built-in scenario: the default mixed fleet (H100,
    A100 with MIG, shared L4) under training, notebooks on MIG slices, shared-GPU
    inference and batch work. Writes DIR/index.html (plots), metrics.json and CSV.
    """
    modes = _modes(compare) if compare is not None else None
    # The modes go in with the file: a kind that only DRA can run is fine with --compare dra.
    scenario = load_scenario(scenario_path, modes) if scenario_path else default_scenario()
    if seed is not None:
        scenario = scenario.with_seed(seed)
    if modes is not None:
        scenario = scenario.with_compare(modes)
    if quiet:
        result = simulate(scenario, timer=time.perf_counter)
    else:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as progress:
            tasks = {m: progress.add_task(f"simulating {m}", total=1.0) for m in scenario.compare}

            def report(mode: str, done: float) -> None:
                progress.update(tasks[mode], completed=done)

            result = simulate(scenario, report, timer=time.perf_counter)
    index = write_report(result, Path(out_dir))
    if not quiet:
        from rich.console import Console

        Console().print(render_summary_table(result))
        click.echo(f"report: {index}")
