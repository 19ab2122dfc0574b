"""``dralab sweep``: grids of runs on worker processes or a Dask cluster, in one table."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import click

from dralab.replay.run import paper_seeds
from dralab.replay.runs import grid
from dralab.report.outdir import writing
from dralab.sim.executor import DaskExecutor, Executor, check_dask_address, make_executor
from dralab.sim.limits import MAX_SEEDS

from .common import (
    AsciiIntRange,
    check_output_dir,
    one_line_errors,
    private_matplotlib_dir,
    signals_deferred,
)
from .replay import check_inputs, emit, parse_policies, run_specs, trace_options
from .simulate import allow_outside_option, scenario_inputs

__all__ = ["sweep_cmd"]

_dask_option = click.option(
    "--dask", "dask", default=None, metavar="ADDRESS",
    help="Run on this Dask scheduler (tcp://host:8786) instead of local worker processes; "
         "needs pip install 'dralab[distributed]'.")


def _names(text: str, hint: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise click.BadParameter("name at least one", param_hint=hint)
    return names


def _close(executor: Executor) -> None:
    if isinstance(executor, DaskExecutor):
        executor.close()


@click.group("sweep")
def sweep_cmd() -> None:
    """Run a grid of experiments in parallel and collect one table and report.

    Local worker processes by default; --dask ADDRESS sends the runs to a Dask
    distributed cluster for grids that outgrow one machine.
    """


@sweep_cmd.command("alibaba-2023")
@click.option("--workloads", default="default", show_default=True, metavar="W,W",
              help="Pod list variants, comma-separated.")
@click.option("--policies", default="all", show_default=True, metavar="P,P|all",
              help="Policies, comma-separated, or all.")
@trace_options
@_dask_option
@one_line_errors
def sweep_trace_cmd(workloads: str, policies: str, seeds: int, trace_dir: str | None,
                    output: str, out_dir: str | None, workers: int | None,
                    limit_nodes: int | None, limit_pods: int | None, dask: str | None) -> None:
    """Workloads x policies x seeds of the Alibaba 2023 trace replay (see dralab replay)."""
    names = _names(workloads, "--workloads")
    chosen = parse_policies(policies)
    if dask:
        check_dask_address(dask)
    check_inputs(names, chosen, trace_dir, out_dir, limit_nodes, limit_pods)
    specs = grid(names, chosen, paper_seeds(seeds), trace_dir, limit_nodes, limit_pods)
    executor = make_executor(workers, dask)
    try:
        results = run_specs(specs, executor)
    finally:
        _close(executor)
    from dralab.report.replay import sweep_document

    emit(results, output, sweep_document(results), out_dir,
         f"dralab sweep alibaba-2023 — {', '.join(names)}")


@sweep_cmd.command("scenarios")
@click.option("-f", "--filename", "filenames", multiple=True, required=True, metavar="FILE",
              help="A Scenario file. Repeatable.")
@click.option("--seeds", type=AsciiIntRange(min=1, max=MAX_SEEDS), default=3, show_default=True,
              help="Seeds per scenario: the scenario's own seed, +1, +2, ...")
@click.option("-o", "--output", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True, help="What to print.")
@click.option("--out", "out_dir", default=None, metavar="DIR",
              help="Also write index.html, results.json and results.csv here.")
@click.option("--workers", type=AsciiIntRange(min=1), default=None, metavar="N",
              help="Worker processes (default: one per CPU; 1 runs in-process).")
@_dask_option
@allow_outside_option
@one_line_errors
def sweep_scenarios_cmd(filenames: tuple[str, ...], seeds: int, output: str,
                        out_dir: str | None, workers: int | None, dask: str | None,
                        allow_outside: bool) -> None:
    """Each scenario x seed through the simulator (every mode it compares), summarised
    per scenario and mode as mean ± sd over seeds."""
    from dralab.report.sweep import (
        render_scenario_csv,
        render_scenario_table,
        scenario_document,
        write_scenario_report,
    )
    from dralab.sim.scenario import load_scenario
    from dralab.sim.scenario_sweep import run_scenario, summarize_scenarios

    # Parse every file before starting anything: a bad file is one line and exit 2.
    if dask:
        check_dask_address(dask)
    scenarios = [load_scenario(f, allow_outside=allow_outside) for f in filenames]
    if out_dir is not None:
        inputs = [p for f, s in zip(filenames, scenarios, strict=True)
                  for p in scenario_inputs(f, s)]
        check_output_dir("--out", out_dir, inputs)
    # Two files may name the same scenario; keep their rows apart by the file name.
    dup = Counter(s.name for s in scenarios)
    labels = [f"{s.name} ({Path(f).name})" if dup[s.name] > 1 else s.name
              for s, f in zip(scenarios, filenames, strict=True)]
    # The same file given twice still gets two rows: number the repeats.
    seen: Counter[str] = Counter()
    for i, label in enumerate(labels):
        seen[label] += 1
        if seen[label] > 1:
            labels[i] = f"{label} #{seen[label]}"
    items = [(label, s, s.seed + i)
             for label, s in zip(labels, scenarios, strict=True) for i in range(seeds)]
    executor = make_executor(workers, dask)
    started = time.perf_counter()
    try:
        runs = executor.map(run_scenario, items)
    finally:
        _close(executor)
    click.echo(f"{len(items)} simulation(s) on {executor.description} in "
               f"{time.perf_counter() - started:.1f} s", err=True)
    rows = summarize_scenarios(runs)
    if output == "json":
        click.echo(json.dumps(scenario_document(rows), indent=2, allow_nan=False))
    elif output == "csv":
        click.echo(render_scenario_csv(rows), nl=False)
    else:
        click.echo(render_scenario_table(rows), nl=False)
    if out_dir is not None:
        private_matplotlib_dir()
        with writing(out_dir), signals_deferred():
            index = write_scenario_report(rows, Path(out_dir), "dralab sweep scenarios")
        click.echo(f"report: {index}", err=True)
