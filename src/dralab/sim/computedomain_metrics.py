"""What a run says about its ComputeDomain jobs (``computeDomain: true``, issue 36).

Per job: when its last pod was first placed (arrival -> the last replica's first start
is the job's wait: a multi-node job's work starts only once every pod has a node; the
pods placed before hold their nodes meanwhile, ``held`` GPUs) and how many
NVLink domains (``nvidia.com/gpu.clique`` values) its pods landed in. Upstream
(kube-scheduler and NVIDIA's driver as they are) may split a job across domains; the
count says how often it did.

NVLink fragmentation, sampled: the free GPUs of NVLink domains that cannot hold a whole
job of the smallest multi-node ComputeDomain kind, i.e. fewer of their nodes than that
job has pods offer a free channel (one per node) and the GPUs one of its pods asks for.
That capacity is stranded for one-domain jobs (the definition the NVLinkScenario report
uses, with partly used nodes counted by their free GPUs). Nodes without the clique label
are in no NVLink domain and are not counted.

Plain frozen dataclasses (standard library only, as ``results``); the run fills them
through ``computedomains.ComputeDomainSampler`` and ``computedomains.cd_jobs``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .stats import percentile

__all__ = ["CdJob", "ComputeDomainMetrics"]


@dataclass(frozen=True, slots=True)
class CdJob:
    """One ComputeDomain job: ``placed`` is the simulated time its last pod was first
    placed (None: never all placed); ``domains`` the NVLink domains its pods' first
    placements used (0 when none was placed)."""

    name: str
    kind: str
    pods: int
    arrival: float
    placed: float | None
    domains: int

    @property
    def wait(self) -> float | None:
        return None if self.placed is None else self.placed - self.arrival

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "pods": self.pods,
                "arrival": self.arrival, "placed": self.placed, "domains": self.domains}


@dataclass(frozen=True, slots=True)
class ComputeDomainMetrics:
    """A run's ComputeDomain jobs (arrival order) and its NVLink fragmentation samples
    ``(t, free GPUs in NVLink domains, stranded free GPUs, GPUs held by placed pods of
    jobs not all placed)``; ``smallest`` is the pods of the smallest multi-node kind the
    stranded measure is for (0: no multi-node kind)."""

    jobs: tuple[CdJob, ...]
    samples: tuple[tuple[float, int, int, int], ...] = ()
    smallest: int = 0
    # "NVLinkDomainGang" when the scenario's profile enables it; "default, clique pod
    # affinity" when the kinds' pods carry it (computedomains.placement_label)
    profile: str = "default"

    @property
    def multi_node(self) -> list[CdJob]:
        return [j for j in self.jobs if j.pods > 1]

    def summary(self) -> dict[str, float | int | None]:
        """Multi-node jobs: arrived, started (every pod placed), spanning more than one
        NVLink domain, never started; their waits p50/p90 (seconds, None without one);
        the stranded GPUs' mean over the samples and their share of free GPUs (mean over
        samples with any free GPU); the mean GPUs held by placed pods waiting for their
        job's other pods."""
        jobs = self.multi_node
        started = [j for j in jobs if j.placed is not None]
        waits = sorted(j.wait for j in started if j.wait is not None)
        shares = [s / f for _, f, s, _ in self.samples if f > 0]
        return {
            "jobs": len(jobs),
            "started": len(started),
            "spanning": sum(1 for j in started if j.domains > 1),
            "never_started": len(jobs) - len(started),
            "wait_p50": _percentile(waits, 50),
            "wait_p90": _percentile(waits, 90),
            "stranded_mean": (math.fsum(s for _, _, s, _ in self.samples) / len(self.samples)
                              if self.samples else None),
            "stranded_share": math.fsum(shares) / len(shares) if shares else None,
            "held_mean": (math.fsum(h for *_, h in self.samples) / len(self.samples)
                          if self.samples else None),
        }

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "smallest_multi_node_job": self.smallest,
                "summary": self.summary(), "jobs": [j.to_json() for j in self.jobs],
                "samples": [list(s) for s in self.samples]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ComputeDomainMetrics:
        return cls(jobs=tuple(CdJob(**j) for j in data["jobs"]),
                   samples=tuple((float(t), int(f), int(s), int(h))
                                 for t, f, s, h in data["samples"]),
                   smallest=int(data["smallest_multi_node_job"]),
                   profile=str(data.get("profile", "default")))


def _percentile(values: Sequence[float], q: float) -> float | None:
    """``stats.percentile`` (as the run's other waits); None when empty."""
    return percentile(values, q) if values else None
