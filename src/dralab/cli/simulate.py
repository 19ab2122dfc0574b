"""``dralab simulate``: the main job — a what-if of a fleet and workload over time."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from dralab.report import render_summary_table
from dralab.report.nvlink import render_nvlink, render_nvlink_seeds, samples_csv
from dralab.report.nvlink_page import render_nvlink_page
from dralab.report.outdir import keep_previous, writing
from dralab.report.spread import seed_runs
from dralab.report.terminal import render_kai_queues
from dralab.report.verdict import alone_decision, render_verdict_text, verdict
from dralab.report.writer import render_report, write_files
from dralab.sim.default import default_scenario
from dralab.sim.limits import MAX_SEEDS
from dralab.sim.nvlink import POLICIES, is_nvlink_scenario, load_nvlink_scenario
from dralab.sim.nvlink_run import run_nvlink
from dralab.sim.scenario import MODES, Scenario, load_scenario
from dralab.sim.simulate import simulate

from .common import (
    AsciiInt,
    AsciiIntRange,
    check_output_dir,
    one_line_errors,
    private_matplotlib_dir,
    signals_deferred,
)

F = TypeVar("F", bound=Callable[..., Any])

# Five seeds: one sign in all of them happens by chance 2 times in 32 (see report.spread);
# each seed costs one more run (0.6 CPU s for the built-in scenario on the machine the
# tests run on; the plots are drawn once, for the first seed).
DEFAULT_SEEDS = 5


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    for m in modes:
        if m not in MODES:
            raise click.BadParameter(f"unknown mode {m!r}: use {', '.join(MODES)}",
                                     param_hint="--compare")
    if not modes:
        raise click.BadParameter("name at least one mode", param_hint="--compare")
    return modes


def _simulate_nvlink(path: str, seed: int | None, seed_count: int, out_dir: str,
                     compare: str | None) -> None:
    """An NVLinkScenario (issue 36): its placement policies over the seeds; the section
    is printed and written to DIR/nvlink.txt, the first seed's samples over time to
    DIR/nvlink-samples.csv."""
    sc = load_nvlink_scenario(path)
    if seed is not None:
        sc = dataclasses.replace(sc, seed=seed)
    if compare is not None:   # here --compare names placement policies
        policies = tuple(p.strip() for p in compare.split(",") if p.strip())
        bad = [p for p in policies if p not in POLICIES] or ([] if policies else [""])
        if bad:
            raise click.BadParameter(f"unknown placement policy {bad[0]!r}: use "
                                     f"{', '.join(POLICIES)}", param_hint="--compare")
        sc = dataclasses.replace(sc, compare=policies)
    check_output_dir("--out", out_dir, [path])
    seeds = [dataclasses.replace(sc, seed=sc.seed + i) for i in range(seed_count)]
    runs = [[run_nvlink(one, p) for p in one.compare] for one in seeds]
    text = "\n".join(t for t in (render_nvlink(runs[0]), render_nvlink_seeds(runs)) if t)
    private_matplotlib_dir()
    # Rendered before anything touches the disk; index.html goes last, as the main report.
    files = {"nvlink.txt": text + "\n", "nvlink-samples.csv": samples_csv(runs[0]),
             "index.html": render_nvlink_page(sc.name, sc.duration, runs,
                                              [one.seed for one in seeds])}
    with writing(out_dir), signals_deferred():
        kept = keep_previous(out_dir)
        index = write_files(files, Path(out_dir))
    if kept is not None:
        click.echo(f"the previous report is kept in {kept}", err=True)
    click.echo(text)
    click.echo(f"report: {index}")


def scenario_inputs(path: str, scenario: Scenario) -> list[str]:
    """The files a scenario read: itself, its manifest templates, its fleet file and its
    Kueue objects (a file or a directory)."""
    refs = [k.template for k in scenario.workload if k.template]
    if scenario.fleet.file:
        refs.append(scenario.fleet.file)
    if scenario.kueue_file:
        refs.append(scenario.kueue_file)
    return [path, *(os.path.join(scenario.base_dir, r) for r in refs)]


def allow_outside_option(func: F) -> F:
    return click.option(
        "--allow-outside-files", "allow_outside", is_flag=True,
        help="Let a scenario's template: and fleet.file name files outside the scenario's "
             "directory (absolute paths, .., links); refused by default.")(func)


@click.command("simulate")
@click.option("--scenario", "scenario_path", metavar="FILE", default=None,
              help="A Scenario file (default: the built-in scenario).")
@click.option("--seed", type=AsciiInt(), default=None,
              help="Override the scenario's seed (the first of --seeds).")
@click.option("--seeds", "seed_count", type=AsciiIntRange(min=1, max=MAX_SEEDS),
              default=DEFAULT_SEEDS, show_default=True, metavar="N",
              help="Run N seeds (the seed, seed+1, ...): the verdict and comparison give "
                   "mean ± sd over them; plots and detail tables show the first.")
@click.option("--out", "out_dir", default="dralab-report", show_default=True, metavar="DIR",
              help="Where the HTML report, metrics.json and CSV files go.")
@click.option("--compare", "compare", default=None, metavar="MODE,MODE",
              help="Modes to compare, in order: device-plugin, dra, kai (KAI Scheduler "
                   "places the pods; needs spec.queueing.kai). For an NVLinkScenario: "
                   "placement policies first-fit, pod-affinity, domain-packing.")
@click.option("--quiet", is_flag=True, help="No progress bar and no summary table.")
@click.option("--timings-on-page", is_flag=True,
              help="Also show on the page what the run cost on this machine: each "
                   "scheduling cycle's compute time (p50/p90/p99) and each mode's wall "
                   "time. The page then differs run to run (timings.json always has them).")
@allow_outside_option
@one_line_errors
def simulate_cmd(scenario_path: str | None, seed: int | None, seed_count: int, out_dir: str,
                 compare: str | None, quiet: bool, timings_on_page: bool,
                 allow_outside: bool) -> None:
    """Simulate a fleet and workload over time, DRA against the device-plugin model.

    Without --scenario, runs the built-in scenario: the default mixed fleet (H100,
    A100 with MIG, shared L4) under training, notebooks on MIG slices, shared-GPU
    inference and batch work. Writes DIR/index.html (plots), metrics.json and CSV
    (the same bytes for the same scenario and seeds) and timings.json (wall times).
    A report already in DIR moves to DIR/previous/ (the one there before is replaced).
    Exit 2, before running, for a bad scenario, a scenario asking for more work
    than the documented limits, or an --out that cannot be written.
    """
    if scenario_path is not None and is_nvlink_scenario(scenario_path):
        _simulate_nvlink(scenario_path, seed, seed_count, out_dir, compare)
        return
    modes = _modes(compare) if compare is not None else None
    # The modes go in with the file: a kind that only DRA can run is fine with --compare dra.
    scenario = load_scenario(scenario_path, modes, allow_outside=allow_outside) \
        if scenario_path is not None else default_scenario()
    if seed is not None:
        scenario = scenario.with_seed(seed)
    if modes is not None:
        scenario = scenario.with_compare(modes)
    _warn_tas_not_modelled(scenario)
    check_output_dir("--out", out_dir,
                     scenario_inputs(scenario_path, scenario) if scenario_path else [])
    scenarios = [scenario.with_seed(scenario.seed + i) for i in range(seed_count)]
    if quiet:
        results = [simulate(s, timer=time.perf_counter) for s in scenarios]
    else:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as progress:
            tasks = {m: progress.add_task(f"simulating {m}", total=float(seed_count))
                     for m in scenario.compare}
            results = []
            for i, one in enumerate(scenarios):
                def report(mode: str, done: float, i: int = i) -> None:
                    progress.update(tasks[mode], completed=i + done)

                results.append(simulate(one, report, timer=time.perf_counter))
    private_matplotlib_dir()
    files = render_report(results[0], results, timings_on_page=timings_on_page)
    with writing(out_dir), signals_deferred():
        kept = keep_previous(out_dir)
        index = write_files(files, Path(out_dir))
    if kept is not None:
        click.echo(f"the previous report is kept in {kept}", err=True)
    if not quiet:
        from rich.console import Console

        runs = seed_runs(results)
        console = Console()
        console.print(render_summary_table(results[0], runs))
        kai_queues = render_kai_queues(results[0])
        if kai_queues is not None:
            console.print(kai_queues)
        compute_domains = files.get("computedomains.txt")
        if compute_domains is not None:
            click.echo(compute_domains, nl=False)
        click.echo(render_verdict_text(verdict(runs, alone=alone_decision(results[0]))))
        click.echo(f"report: {index}")


def _warn_tas_not_modelled(scenario: Scenario) -> None:
    """Kueue's Topology Aware Scheduling is not in the simulator (its admission has no TAS
    cache and the pods of an admitted workload are not pinned to assigned nodes): say so
    rather than let a topology request pass silently."""
    import warnings

    from dralab.api.errors import DralabWarning
    from dralab.queueing.configured import configuration
    from dralab.queueing.tas_cache import tas_flavors, tas_on

    objects = scenario.kueue_objects
    if not objects or not tas_on(configuration(objects)):
        return
    found = tas_flavors(objects)
    if found:
        flavor, topology = found[0]
        warnings.warn(DralabWarning(
            f"dralab simulate does not model Kueue's Topology Aware Scheduling: "
            f"ResourceFlavor {flavor} names Topology {topology}, but workloads are admitted "
            "by quota and their pods placed without the topology; dralab admit on a "
            "snapshot gives Kueue's topologyAssignment"), stacklevel=2)
