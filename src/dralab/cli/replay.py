"""``dralab replay``: the FGD paper's trace experiment, per policy, over seeds."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from dralab.policies import POLICIES
from dralab.replay.run import paper_seeds
from dralab.replay.runs import (
    ReplayResults,
    RunSpec,
    check_names,
    check_traces,
    grid,
    run_cell,
)
from dralab.replay.trace.alibaba import DEFAULT_WORKLOAD
from dralab.sim.executor import Executor, make_executor
from dralab.sim.limits import MAX_SEEDS

from .common import (
    AsciiIntRange,
    check_output_dir,
    one_line_errors,
    private_matplotlib_dir,
    signals_deferred,
)

__all__ = ["TRACES", "check_inputs", "parse_policies", "replay_cmd", "run_specs", "trace_options"]

# Trace names accepted as the first argument; one for now, room for others (Philly...).
TRACES = ("alibaba-2023",)

F = TypeVar("F", bound=Callable[..., Any])


def parse_policies(text: str) -> list[str]:
    """``all`` or comma-separated names (checked later, with the other inputs)."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise click.BadParameter("name at least one policy", param_hint="--policy")
    return list(POLICIES) if names == ["all"] else names


def trace_options(func: F) -> F:
    """Options shared by ``replay`` and ``sweep alibaba-2023``."""
    for option in reversed((
        click.option("--seeds", type=AsciiIntRange(min=1, max=MAX_SEEDS), default=10,
                     show_default=True,
                     help="Seeds per cell: 42, 43, ... as in the paper."),
        click.option("--trace-dir", default=None, metavar="DIR",
                     help="The trace's CSV files (default: $DRALAB_TRACE_DIR or the "
                          "copy shipped with dralab)."),
        click.option("-o", "--output", type=click.Choice(["table", "json", "csv"]),
                     default="table", show_default=True, help="What to print."),
        click.option("--out", "out_dir", default=None, metavar="DIR",
                     help="Also write an HTML report, results.json and CSV files here."),
        click.option("--workers", type=AsciiIntRange(min=1), default=None, metavar="N",
                     help="Worker processes (default: one per CPU; 1 runs in-process)."),
        # Test-only knobs: keep the first rows of the trace files so a CLI test
        # finishes in seconds. The published protocol always uses everything.
        click.option("--limit-nodes", type=AsciiIntRange(min=1), default=None, hidden=True),
        click.option("--limit-pods", type=AsciiIntRange(min=1), default=None, hidden=True),
    )):
        func = option(func)
    return func


def run_specs(specs: Sequence[RunSpec], executor: Executor) -> ReplayResults:
    """Run the cells on ``executor``; a one-line timing note on stderr."""
    started = time.perf_counter()
    results = ReplayResults(executor.map(run_cell, specs))
    click.echo(f"{len(specs)} run(s) on {executor.description} in "
               f"{time.perf_counter() - started:.1f} s "
               f"({results.seconds():.1f} s of run time)", err=True)
    return results


def emit(results: ReplayResults, output: str, document: dict[str, Any],
         out_dir: str | None, title: str) -> None:
    """Print in the chosen form and, with ``out_dir``, write the report."""
    from dralab.report.replay import render_csv, render_table, write_replay_report

    if output == "json":
        click.echo(json.dumps(document, indent=2, allow_nan=False))
    elif output == "csv":
        click.echo(render_csv(results), nl=False)
    else:
        click.echo(render_table(results), nl=False)
    if out_dir is not None:
        from dralab.report.outdir import writing

        private_matplotlib_dir()
        with writing(out_dir), signals_deferred():
            index = write_replay_report(results, Path(out_dir), title, document)
        click.echo(f"report: {index}", err=True)


def check_inputs(workloads: Sequence[str], policies: Sequence[str], trace_dir: str | None,
                 out_dir: str | None, limit_nodes: int | None, limit_pods: int | None) -> None:
    """Everything that can be wrong with the input, before any run: names, the --out
    directory, then the trace files themselves (read once, cached for the runs)."""
    check_names(workloads, policies, trace_dir)
    if out_dir is not None:
        from dralab.replay.trace.alibaba import resolve_trace_dir

        check_output_dir("--out", out_dir, [resolve_trace_dir(trace_dir)])
    check_traces(workloads, trace_dir, limit_nodes, limit_pods)


@click.command("replay")
@click.argument("trace", type=click.Choice(TRACES), metavar="TRACE")
@click.option("--workload", default=DEFAULT_WORKLOAD, show_default=True, metavar="NAME",
              help="Pod list variant: default, gpushare40, multigpu20, gpuspec10, cpu050, ...")
@click.option("--policy", "policy", default="all", show_default=True, metavar="NAME|all",
              help="Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, FGD-FS "
                   "(comma-separated), or all.")
@trace_options
@one_line_errors
def replay_cmd(trace: str, workload: str, policy: str, seeds: int, trace_dir: str | None,
               output: str, out_dir: str | None, workers: int | None,
               limit_nodes: int | None, limit_pods: int | None) -> None:
    """Replay a GPU trace as the FGD paper (ATC '23) does; TRACE is alibaba-2023.

    Pods arrive in a seeded random order until their GPU request reaches 130 % of
    the cluster's GPUs; each goes to the policy's best node or fails; nothing
    departs. Prints, per policy, the unallocated GPU % (mean ± sd over seeds) at
    90, 95, 100, 110 and 130 % arrived. Exit 2 for an unknown workload or policy
    or a missing trace directory, a trace file that cannot be replayed (one line
    naming file, line and column) or an --out that cannot be written, all before
    any run starts.
    """
    policies = parse_policies(policy)
    check_inputs([workload], policies, trace_dir, out_dir, limit_nodes, limit_pods)
    specs = grid([workload], policies, paper_seeds(seeds), trace_dir, limit_nodes, limit_pods)
    results = run_specs(specs, make_executor(workers))
    from dralab.report.replay import replay_document

    emit(results, output, replay_document(results, workload), out_dir,
         f"dralab replay {trace} — workload {workload}")
