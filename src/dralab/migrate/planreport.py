"""The pilot plan on paper: a terminal summary, a Markdown report, and the files of ``--out``.

``--out DIR`` gets ``deviceclasses.yaml`` (the pilot's platform classes),
``resourceclaimtemplates.yaml``, ``01-smoke-test.yaml``, one converted manifest
per pilot workload in order (``02-...``), ``migration-summary.txt``,
``pilot-report.md`` and ``simulation/`` (fleet, scenario and templates:
``dralab simulate --scenario simulation/scenario.yaml`` reruns the prediction).
"""

from __future__ import annotations

import os
from typing import Any

from dralab.api.io import dumps, to_list

from .convert import write_conversion
from .plan import ModeEffect, PilotPlan
from .pools import GpuPool

__all__ = ["pilot_report", "render_plan", "write_plan"]

SMOKE_FILE = "01-smoke-test.yaml"
REPORT_FILE = "pilot-report.md"
PLATFORM_CLASSES_NOTE = (
    "# Platform DeviceClasses of the pilot, named by use. Apply before the claim templates.\n")


def _pool_line(pool: GpuPool) -> tuple[str, ...]:
    flags = [f for f, on in (("dedicated", pool.dedicated),
                             ("DOUBLE-ADVERTISED", pool.double_advertised)) if on]
    return (pool.name, str(len(pool.nodes)), pool.product_label or "-", str(pool.gpus),
            str(len(pool.workloads)), str(pool.pods), str(pool.risk), ",".join(flags) or "-")


def _pool_name(pool: GpuPool) -> str:
    """The pool's name, and the node label it comes from when that is not the name itself
    (a GPU product or instance type made a DNS label)."""
    if pool.label_value == pool.name:
        return pool.name
    return f"{pool.name} (nodes {pool.label})" if pool.label_key else \
        f"{pool.name} (nodes without a pool label)"


def _columns(lines: list[tuple[str, ...]]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "".join("   ".join(c.ljust(widths[i]) for i, c in enumerate(line)).rstrip() + "\n"
                   for line in lines)


def _effect_lines(effect: list[ModeEffect]) -> list[tuple[str, ...]]:
    lines: list[tuple[str, ...]] = [
        ("MODEL", "PODS", "STARTED", "NOT-STARTED", "MEAN-WAIT", "MAX-WAIT",
         "CLAIMS-ALLOCATED", "CLAIMS-PENDING", "GPU-ALLOCATED", "GPU-REQUESTED")]
    for e in effect:
        claims = (str(e.claims_allocated), str(e.claims_pending)) if e.mode == "dra" \
            else ("-", "-")
        lines.append((e.mode, str(e.pods), str(e.started), str(e.not_started),
                      f"{e.mean_wait:.0f}s", f"{e.max_wait:.0f}s", *claims,
                      f"{e.allocated:.1%}", f"{e.requested:.1%}"))
    return lines


_WAIT_NOTE = ("waits are over the pods that started; a pod not started waited the whole run "
              "and more")
_UNCONVERTIBLE = ("dralab cannot convert (moving the pool to DRA leaves them without GPUs; "
                  "keep the device plugin there or convert them by hand first)")


def _checks_lines(plan: PilotPlan) -> list[str]:
    """The plan's warnings: workloads that cannot move, workloads no pool serves."""
    out = [f"pool {pool}: {len(names)} workload(s) {_UNCONVERTIBLE}: {', '.join(names)}"
           for pool, names in plan.unconvertible.items()]
    if plan.unserved:
        out.append(f"not served by any pool: {len(plan.unserved)} GPU workload(s)")
        out += [f"  {what}: {why}" for what, why in plan.unserved]
    return out


def render_plan(plan: PilotPlan) -> str:
    """The summary printed by ``dralab migrate plan``."""
    text = _columns([("POOL", "NODES", "GPU", "GPUS", "WORKLOADS", "PODS", "RISK", "FLAGS")]
                    + [_pool_line(p) for p in plan.pools])
    text += "".join(line + "\n" for line in _checks_lines(plan))
    text += f"\npilot pool: {_pool_name(plan.pilot)}\n"
    for short in plan.shortfall:
        text += f"capacity SHORT: {short} (pods beyond it wait in both models)\n"
    for blocker in plan.blockers:
        text += f"blocker: {blocker}\n"
    text += "device classes: " + ", ".join(c.name for c in plan.classes.all()) + "\n"
    text += "order:\n" + "".join(f"  {i}. {what}: {why}\n"
                                 for i, (what, why) in enumerate(plan.order, start=1))
    if plan.effect:
        text += "\npredicted effect on the pilot pool (dralab simulate, " \
                f"{plan.duration}):\n" + _columns(_effect_lines(plan.effect))
        if any(e.not_started for e in plan.effect):
            text += f"({_WAIT_NOTE})\n"
    return text


def _expected(plan: PilotPlan) -> list[tuple[str, str, str]]:
    dra = next((e for e in plan.effect if e.mode == "dra"), None)
    plugin = next((e for e in plan.effect if e.mode == "device-plugin"), None)
    started = f"{dra.started} of {dra.pods} pods started" if dra else "every pilot pod started"
    if dra and dra.not_started:
        started += f"; {dra.not_started} not started within {plan.duration} (device plugin: " \
                   f"{plugin.not_started if plugin else '-'})"
    wait = f"mean {dra.mean_wait:.0f}s, max {dra.max_wait:.0f}s (device plugin: " \
           f"{plugin.mean_wait:.0f}s / {plugin.max_wait:.0f}s)" if dra and plugin else "unchanged"
    if dra and dra.not_started:
        wait += f", over the {dra.started} pods that started ({_WAIT_NOTE})"
    util = (f"allocated {dra.allocated:.1%} of the pool's GPU capacity for {dra.requested:.1%} "
            f"requested (device plugin: {plugin.allocated:.1%} for {plugin.requested:.1%})"
            if dra and plugin else "allocated equals requested")
    if dra is None:
        claims = "every claim (one per GPU container of each pilot pod, smoke test included) " \
                 "allocated and reserved within seconds"
    elif dra.claims_pending:
        claims = f"{dra.claims_allocated} claim(s) allocated (those of the started pods), " \
                 f"{dra.claims_pending} pending with their pods"
    else:
        claims = f"all {dra.claims_allocated} claim(s) (one per GPU container of each pilot " \
                 "pod, smoke test included) allocated and reserved within seconds"
    return [
        ("Scheduling latency (pod created -> PodScheduled; scheduler_pod_scheduling_sli_"
         "duration_seconds)", wait, "a rise means claim allocation is slow or retries"),
        ("Pods started", started, "compare with the same workloads before the move"),
        ("Claim allocation status (kubectl get resourceclaims -A)", claims,
         "a claim pending with 'cannot allocate all claims' means the class or CEL matches "
         "no free device"),
        ("GPU utilisation (DCGM_FI_DEV_GPU_UTIL, allocated vs requested capacity)", util,
         "shares and MIG devices should close the gap between allocated and requested"),
        ("Failure modes", "none: no NodePrepareResources errors in kubelet events, no DRA "
         "kubelet-plugin restarts, `dralab migrate check` exits 0",
         "double advertising, driver crash loops, stale ResourceSlices after node drains"),
        ("Autoscaler behaviour (cluster_autoscaler_unschedulable_pods_count, scale-up events)",
         "no scale-up caused by pilot pods at steady state",
         "a Cluster Autoscaler without DRA support cannot simulate claims: pending DRA pods "
         "then never trigger a scale-up"),
    ]


def pilot_report(plan: PilotPlan) -> str:
    """The Markdown report written to ``pilot-report.md``."""
    p = plan.pilot
    out = ["# DRA migration pilot", "",
           f"Generated by `dralab migrate plan` from `{plan.source}`.", "",
           "## Pools", "", "| pool | nodes | GPU | GPUs | workloads | pods | risk | flags |",
           "|---|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(_pool_line(pool)) + " |" for pool in plan.pools]
    out += ["", f"## Pilot pool: `{p.name}`", "",
            ("" if p.label_value == p.name else f"The nodes labelled `{p.label}`. "
             if p.label_key else "The GPU nodes without a pool label. ")
            + f"{len(p.nodes)} node(s), {p.gpus} GPU(s) ({p.product_label or 'unknown model'}); "
            f"its riskiest workload is of risk {p.risk} (whole-gpu/shared 1, mig 2, "
            "multi-gpu 3, multi-node 5). Chosen as the lowest-risk pool with work to move, "
            "then the smallest." + (" Its nodes are tainted: only workloads that tolerate "
                                    "the taint land there (isolated)." if p.dedicated else ""),
            ""]
    if plan.shortfall:
        out += ["**Capacity short of the pilot's demand** (all pods at once; pods beyond it "
                "wait in both models):", ""] + [f"- {s}" for s in plan.shortfall] + [""]
    if plan.blockers:
        out += ["**Blockers (fix first):**", ""] + [f"- {b}" for b in plan.blockers] + [""]
    checks = _checks_lines(plan)
    if checks:
        out += ["**Workloads the pilot leaves behind:**", ""] + \
            [f"- {line.strip()}" for line in checks] + [""]
    out += ["Moving the pool: label its nodes so the GPU operator stops the device plugin "
            "there, install the NVIDIA DRA driver on them, then run `dralab migrate check` "
            "on a fresh dump: it must exit 0 (no node advertises GPUs both ways).", "",
            "## Platform DeviceClasses", "", "| class | CEL |", "|---|---|"]
    for cls in plan.classes.all():
        cel = " && ".join(s.cel.expression for s in cls.spec.selectors if s.cel)
        out.append(f"| `{cls.name}` | `{cel}` |")
    out += ["", "## Order", ""]
    out += [f"{i}. **{what}**: {why}" for i, (what, why) in enumerate(plan.order, start=1)]
    out += ["", "Files: `deviceclasses.yaml`, `resourceclaimtemplates.yaml`, "
            f"`{SMOKE_FILE}`, then "
            + ", ".join(f"`{f.output}`" for f in plan.conversion.files) + ".", ""]
    if plan.effect:
        out += [f"## Predicted effect (simulated, {plan.duration}, both models)", "",
                "| model | pods | started | not started | mean wait | max wait | claims "
                "allocated | claims pending | GPU allocated | GPU requested |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(line) + " |" for line in _effect_lines(plan.effect)[1:]]
        if any(e.not_started for e in plan.effect):
            out += ["", f"({_WAIT_NOTE}.)"]
        out += ["", "Rerun: `dralab simulate --scenario simulation/scenario.yaml "
                "--out pilot-sim`.", ""]
    out += ["## Pilot metrics to watch", "", "| metric | expected | if not |", "|---|---|---|"]
    out += [f"| {m} | {e} | {n} |" for m, e, n in _expected(plan)]
    out += ["", "## Rollback", "",
            "Delete the converted workloads, re-apply the originals, remove the DRA driver "
            "from the pool and let the device plugin run there again.", ""]
    return "\n".join(out)


def write_plan(plan: PilotPlan, out_dir: str, inputs: list[str]) -> list[str]:
    """Write the plan's files under ``out_dir`` (see the module doc)."""
    extra: dict[str, Any] = {SMOKE_FILE: dumps(to_list(plan.smoke)),
                             REPORT_FILE: pilot_report(plan),
                             os.path.join("simulation", "fleet.yaml"): dumps(plan.fleet),
                             os.path.join("simulation", "scenario.yaml"): dumps(plan.scenario)}
    for name, text in plan.sim_templates.items():
        extra[os.path.join("simulation", name)] = text
    return write_conversion(plan.conversion, out_dir, inputs, extra, PLATFORM_CLASSES_NOTE)
