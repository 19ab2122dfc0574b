"""The Scenario spec: our own kind (``apiVersion: dralab.dev/v1alpha1``, ``kind: Scenario``).

A scenario names a fleet, a workload mix, a scheduler profile, the modes to
compare, a duration and a seed. Example (every field; defaults in comments)::

    apiVersion: dralab.dev/v1alpha1
    kind: Scenario
    metadata: {name: mixed}
    spec:
      seed: 1                      # default 0; `dralab simulate --seed` overrides
      duration: 8h                 # simulated time; s, m, h, d suffixes or seconds
      sampleInterval: 5m           # metrics sampling period (default duration / 200)
      compare: [device-plugin, dra]   # modes, in report order (default these two; also
                                   # kai: KAI Scheduler places the pods, see sim.kai)
      fleet:                       # exactly one of default / file / spec
        default: true              # the built-in mixed fleet (`dralab fleet --default`)
        file: fleet.yaml           # a Fleet file (relative to the scenario file)
        spec: {pools: [...]}       # an inline Fleet spec
      scheduler: {}                # KubeSchedulerConfiguration-shaped (default profile)
      featureGates: DRAPreemption=true   # --feature-gates syntax (default: 1.37's defaults;
                                   # DRAPreemption frees DRA devices held by victims)
      events:                      # node events, e.g. maintenance (default none)
      - {at: 2h, node: h100-node-01, action: taint,
         taint: {key: maintenance, value: "true", effect: NoSchedule}}
      - {at: 3h, node: h100-node-01, action: remove}   # its pods are re-created elsewhere
      - {at: 5h, node: h100-node-01, action: add}      # back, untainted, with its devices
      - {at: 6h, pool: h100, action: add}    # one more node of a Fleet pool: the next name
                                             # (h100-node-05), its labels, taints and
                                             # ResourceSlices as `dralab fleet` would
                                             # publish them for a pool one node larger
      queueing:                    # a queue in front of scheduling (default none)
        kueue: kueue.yaml          # Kueue objects (file or directory): Kueue admits the
                                   # jobs of kinds with `queue` before kube-scheduler
        kai: kai.yaml              # KAI Scheduler objects: Queues (parents and leaves),
                                   # SchedulingShard, Config; the kai mode's queues
      autoscaling:                 # only with fleet pools that carry `autoscaling`
        model: cluster-autoscaler  # or karpenter (default cluster-autoscaler)
        expander: least-waste      # random | most-pods | least-waste | price | priority
        scanInterval: 10s          # the loop's period (CA's --scan-interval)
        scaleDownUnneededTime: 10m
        scaleDownDelayAfterAdd: 10m
        scaleDownUtilizationThreshold: 0.5
        ignoreDRARequests: true    # karpenter: its --ignore-dra-requests (false: pods'
                                   # claims placed on the template nodes' slices)
        nodePool: nodepool.yaml    # karpenter: karpenter.sh/v1 NodePools (one or a list
                                   # inline, or a file of them): disruption, limits,
                                   # weight, template
        preferencePolicy: Respect  # karpenter: its --preference-policy (or Ignore)
      workload:
      - name: training             # job kind name (unique)
        arrivalRate: 2/h           # Poisson arrivals of jobs: N/s, N/m, N/h or N/d
        arrivals: []               # or explicit arrival times (e.g. [0s, 10m]); not both
        duration: {distribution: lognormal, mean: 2h, sigma: 0.5}
                                   # fixed (mean) | exponential (mean) |
                                   # lognormal (mean, sigma) | uniform (min, max)
        podsPerJob: 1
        priority: 0                # pod priority (spec.priority)
        cpu: "8"
        memory: 32Gi
        tolerations: []            # pod tolerations, e.g. for tainted inference nodes
        devices:                   # what each pod asks for; omitted = CPU only
          type: gpu                # gpu | mig | share
          count: 1                 # gpu: whole GPUs per pod
          class: gpu.nvidia.com    # DeviceClass (default per type)
          productName: ""          # gpu: restrict to one GPU model (CEL selector)
          matchAttribute: ""       # gpu, count > 1: e.g. resource.kubernetes.io/pcieRoot
          profile: 1g.5gb          # mig: the MIG profile
          memory: 8Gi              # share: GPU memory taken from a consumable-capacity GPU
          firstAvailable: []       # prioritized list of alternatives (each like `devices`)
        queue: team-a/training     # Kueue LocalQueue (namespace/name); queueing.kueue
        kaiQueue: team-a           # KAI leaf Queue; queueing.kai (every kind, in kai mode)
        minMember: 2               # KAI: the job's gang, pods that start together
                                   # (default podsPerJob)
        computeDomain: false       # each job creates its own ComputeDomain (<job>-cd,
                                   # numNodes podsPerJob) and every pod (a template's too)
                                   # claims a channel (compute-domain-channel) from the
                                   # template NVIDIA's controller writes for it;
                                   # needs a fleet pool with computeDomains: true and the
                                   # dra mode only (see sim.computedomains). Pods may span
                                   # NVLink domains (upstream); the scheduler profile may
                                   # enable dralab's opt-in NVLinkDomainGang
        template: job.yaml         # a real manifest (file or directory, relative to the
                                   # scenario) with one pod template (Pod, Job, Deployment,
                                   # ...) and the ResourceClaimTemplates (and DeviceClasses)
                                   # its claims use; its pod replaces cpu, memory, priority
                                   # and tolerations; with devices, the claim template
                                   # generated from them is named after the kind

Every value is checked when the scenario loads, before anything runs: numbers are
finite and in range, and what becomes a Kubernetes object (pods, the claim template
generated from ``devices``, node taints) is validated as the API server would
(``checks``). An event names a ``node`` or, for ``add`` only, a ``pool`` of the
fleet (not both); a pool listed by ``nodeNames`` cannot grow. Values are parsed
once, into seconds, jobs per second, Quantities and typed device requests
(``model``): nothing downstream parses a scenario field again. The work a
scenario asks for is capped (``limits``: expected pods, samples, nodes, job
kinds, events), the limit named in the error. ``template`` and
``fleet.file`` must stay inside the scenario file's directory unless
``allow_outside`` (``--allow-outside-files``) says otherwise.

In device-plugin mode every built-in device request becomes whole GPUs
(``nvidia.com/gpu``): MIG slices and shares cannot be expressed there, which is
exactly what the comparison measures. A manifest template's claims are
translated by what they select (``devplugin``): whole NVIDIA GPUs become
``nvidia.com/gpu``, MIG devices of one profile ``nvidia.com/mig-<profile>``
(advertised by pools with static MIG); a claim with no such equivalent is an
error when device-plugin mode is compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from dralab.allocator.prepare import MAX_RESULTS
from dralab.api.features import FeatureGates
from dralab.api.quantity import Quantity, QuantityError, parse_quantity
from dralab.autoscale.karpenter_template import nodepools_fleet_document

from .autoscaling import parse_autoscaling, read_nodepools
from .checks import check_event, check_kind
from .computedomains import check_compute_domains, check_template_channels
from .fleets import fleet_path, load_fleet, read_fleet_document
from .growth import grow_pools
from .jobs import templates_for
from .kai import check_min_member, read_kai
from .kinds import metrics_shape, read_templates, translate_templates
from .limits import MAX_EVENTS, MAX_JOB_KINDS, MAX_SCENARIO_PODS, MAX_SIGMA, check_work
from .model import typed_event, typed_kind
from .modes import Mode, check_modes, resolve_modes
from .parsedscenario import ParsedScenario
from .queueing import read_kueue
from .spec import (
    API_VERSION,
    MODES,
    DeviceShape,
    DurationSpec,
    FleetRef,
    JobKind,
    NodeEvent,
    ScenarioDocument,
    ScenarioError,
    parse_duration,
    parse_rate,
    short_repr,
)

__all__ = [
    "MODES",
    "DeviceShape",
    "DurationSpec",
    "FleetRef",
    "JobKind",
    "NodeEvent",
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "parse_duration",
    "parse_rate",
    "parse_scenario",
]

class Scenario(ParsedScenario, frozen=True, kw_only=True):
    """A parsed, checked scenario (the fields: ``parsedscenario.ParsedScenario``) and
    the modes it compares.
    """

    def with_compare(self, modes: tuple[str, ...]) -> Scenario:
        """The scenario comparing ``modes``; ScenarioError if device-plugin mode is among
        them and a template kind has no device-plugin translation."""
        scenario = msgspec.structs.replace(self, compare=modes)
        check_modes(scenario)
        if any(kind.compute_domain for kind in self.kinds):
            check_compute_domains(self.workload, load_fleet(scenario), modes, self.source)
        return scenario

    @property
    def modes(self) -> tuple[Mode, ...]:
        """The compared modes, resolved."""
        return resolve_modes(self.compare)


def _check_shape(shape: DeviceShape, path: str, source: str) -> None:
    if shape.first_available:
        for i, alt in enumerate(shape.first_available):
            if alt.first_available:
                raise ScenarioError(source, f"{path}.firstAvailable[{i}]",
                                    "alternatives cannot nest firstAvailable")
            _check_shape(alt, f"{path}.firstAvailable[{i}]", source)
        return
    if shape.count < 1:
        raise ScenarioError(source, f"{path}.count", "must be at least 1")
    if shape.count > MAX_RESULTS:
        raise ScenarioError(source, f"{path}.count", (
            f"{shape.count:,} devices, more than one claim can be allocated "
            f"({MAX_RESULTS}, AllocationResultsMaxSize): the pod could never start"))
    if shape.type == "mig" and not shape.profile:
        raise ScenarioError(source, f"{path}.profile", "required for type mig (e.g. 1g.5gb)")
    if shape.type == "share":
        shown = short_repr(shape.memory)
        try:
            memory = parse_quantity(shape.memory)
        except QuantityError:
            raise ScenarioError(source, f"{path}.memory",
                                f"type share needs a GPU memory quantity: {shown}") from None
        if memory.sign() <= 0:
            raise ScenarioError(source, f"{path}.memory",
                                f"type share needs a positive GPU memory: {shown}")


def _quantity(value: Any, path: str, source: str) -> Quantity:
    try:
        return parse_quantity(str(value))
    except QuantityError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def _duration(value: Any, path: str, source: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(source, path, str(exc)) from None


def _check_job(job: JobKind, i: int, source: str) -> None:
    path = f"spec.workload[{i}]"
    if job.arrival_rate is None and not job.arrivals:
        raise ScenarioError(source, path, "needs arrivalRate or arrivals")
    if job.arrival_rate is not None and job.arrivals:
        raise ScenarioError(source, path, "arrivalRate and arrivals are exclusive")
    if job.arrival_rate is not None:
        try:
            parse_rate(job.arrival_rate)
        except ValueError as exc:
            raise ScenarioError(source, f"{path}.arrivalRate", str(exc)) from None
    for n, t in enumerate(job.arrivals):
        _duration(t, f"{path}.arrivals[{n}]", source)
    d = job.duration
    if d.distribution == "uniform":
        if d.min is None or d.max is None:
            raise ScenarioError(source, f"{path}.duration", "uniform needs min and max")
        low = _duration(d.min, f"{path}.duration.min", source)
        if low > _duration(d.max, f"{path}.duration.max", source):
            raise ScenarioError(source, f"{path}.duration", "uniform needs min <= max")
    elif d.mean is None or _duration(d.mean, f"{path}.duration.mean", source) <= 0:
        raise ScenarioError(source, f"{path}.duration.mean", "must be a positive duration")
    if not 0 <= d.sigma <= MAX_SIGMA:  # also false for NaN
        raise ScenarioError(source, f"{path}.duration.sigma",
                            f"must be between 0 and {MAX_SIGMA:g} (MAX_SIGMA): {d.sigma!r}")
    if job.pods_per_job < 1:
        raise ScenarioError(source, f"{path}.podsPerJob", "must be at least 1")
    if job.pods_per_job > MAX_SCENARIO_PODS:
        raise ScenarioError(source, f"{path}.podsPerJob", (
            f"{job.pods_per_job:,} is more than {MAX_SCENARIO_PODS:,} (MAX_SCENARIO_PODS)"))
    _quantity(job.cpu, f"{path}.cpu", source)
    _quantity(job.memory, f"{path}.memory", source)
    if job.devices is not None:
        _check_shape(job.devices, f"{path}.devices", source)
    if job.template is not None and not job.template.strip():
        raise ScenarioError(source, f"{path}.template", "must name a manifest file or directory")


def parse_scenario(data: Mapping[str, Any], source: str = "<scenario>",
                   base_dir: str = ".", compare: Sequence[str] | None = None, *,
                   allow_outside: bool = False) -> Scenario:
    """Check and convert one decoded Scenario document; ScenarioError names the field.

    Everything is checked here, before any run: every value (finite, in range,
    valid as the Kubernetes objects it becomes, see ``checks``), the fleet, the
    scheduler configuration, and the work asked for (see ``limits``). Job kinds'
    manifest templates (relative to ``base_dir``, and inside it unless
    ``allow_outside``; the same for ``spec.fleet.file``) are read and translated for
    device-plugin mode here, once. ``compare`` overrides ``spec.compare`` before
    that translation is checked (a kind without one fails only if device-plugin
    mode is compared).
    """
    try:
        doc = msgspec.convert(data, ScenarioDocument)
    except msgspec.ValidationError as exc:
        text = str(exc)
        path = ""
        if " - at `$." in text:
            text, _, path = text.partition(" - at `$.")
            path = path.rstrip("`")
        raise ScenarioError(source, path, text) from None
    if doc.api_version != API_VERSION or doc.kind != "Scenario":
        raise ScenarioError(source, "kind", f"expected {API_VERSION} Scenario, got "
                            f"{doc.api_version} {doc.kind}")
    spec = doc.spec
    duration = _duration(spec.duration, "spec.duration", source)
    if duration <= 0:
        raise ScenarioError(source, "spec.duration", "must be positive")
    sample = _duration(spec.sample_interval, "spec.sampleInterval", source) \
        if spec.sample_interval is not None else duration / 200
    if sample <= 0:
        raise ScenarioError(source, "spec.sampleInterval", "must be positive")
    for i, mode in enumerate(spec.compare):
        if mode not in MODES:
            raise ScenarioError(source, f"spec.compare[{i}]",
                                f"unknown mode {mode!r}: use {' or '.join(MODES)}")
    if not spec.compare:
        raise ScenarioError(source, "spec.compare", "name at least one mode")
    chosen = sum([spec.fleet.default, spec.fleet.file is not None, spec.fleet.spec is not None])
    if chosen != 1:
        raise ScenarioError(source, "spec.fleet", "set exactly one of default, file, spec")
    if len(spec.workload) > MAX_JOB_KINDS:
        raise ScenarioError(source, "spec.workload", (
            f"{len(spec.workload):,} job kinds, more than {MAX_JOB_KINDS} (MAX_JOB_KINDS)"))
    if len(spec.events) > MAX_EVENTS:
        raise ScenarioError(source, "spec.events", (
            f"{len(spec.events):,} events, more than {MAX_EVENTS:,} (MAX_EVENTS)"))
    names: set[str] = set()
    for i, job in enumerate(spec.workload):
        if job.name in names:
            raise ScenarioError(source, f"spec.workload[{i}].name", f"duplicate {job.name!r}")
        names.add(job.name)
        _check_job(job, i, source)
    if not spec.workload:
        raise ScenarioError(source, "spec.workload", "name at least one job kind")
    for i, event in enumerate(spec.events):
        _duration(event.at, f"spec.events[{i}].at", source)
        _check_target(event, i, source)
        if event.action == "taint" and (not event.taint or "key" not in event.taint
                                        or "effect" not in event.taint):
            raise ScenarioError(source, f"spec.events[{i}].taint",
                                "a taint needs key and effect")
        check_event(event, i, source)
    _check_scheduler(spec.scheduler, spec.seed, source)
    try:
        features = FeatureGates.parse(spec.feature_gates)
    except ValueError as exc:
        raise ScenarioError(source, "spec.featureGates", str(exc)) from None
    name = _name(doc.metadata, source)
    scenario = Scenario(name=name, seed=spec.seed, duration=duration, sample_interval=sample,
                        compare=tuple(spec.compare), fleet=spec.fleet, scheduler=spec.scheduler,
                        workload=tuple(spec.workload), events=tuple(spec.events),
                        base_dir=base_dir, source=source, features=features)
    if spec.fleet.file is not None:
        fleet_path(scenario, allow_outside)
    scenario = msgspec.structs.replace(scenario, fleet_data=read_fleet_document(scenario))
    nodepools = read_nodepools(spec.autoscaling, source, base_dir, allow_outside)
    nodepool = nodepools[0] if nodepools else None
    if nodepools and scenario.fleet_data is not None:
        # The NodePools' template labels and taints on the autoscaled pools' nodes (with
        # several, each autoscaled pool copied per NodePool: NODEPOOL-POOL).
        scenario = msgspec.structs.replace(scenario, fleet_data=nodepools_fleet_document(
            scenario.fleet_data, nodepools))
    fleet = load_fleet(scenario)
    autoscaling = parse_autoscaling(spec.autoscaling, fleet, source, nodepool, nodepools)
    check_compute_domains(spec.workload, fleet, compare if compare is not None
                          else spec.compare, source)
    gpu_pools = {p.name for p in fleet.spec.pools if p.gpu.count > 0}
    # An autoscaled pool may reach its max: the limits count that many nodes.
    gpu_nodes = sum(p.autoscaling.max if p.autoscaling is not None else p.size
                    for p in fleet.spec.pools if p.name in gpu_pools) + sum(
        1 for e in spec.events if e.pool in gpu_pools)
    check_work(spec.workload, duration, sample, gpu_nodes, source)
    templates = read_templates(spec.workload, base_dir, source, allow_outside)
    check_template_channels(spec.workload, {k: t.pod for k, t in templates.items()}, source)
    scenario = msgspec.structs.replace(scenario, templates=templates)
    scenario = msgspec.structs.replace(scenario, device_plugin=translate_templates(scenario))
    kinds = tuple(typed_kind(job, metrics_shape(scenario, job)) for job in spec.workload)
    for i, (job, kind) in enumerate(zip(spec.workload, kinds, strict=True)):
        template = templates.get(job.name)
        check_kind(job, kind, i, source, template.pod if template is not None else None)
    queueing = spec.queueing
    # Kueue's objects, KAI's, or both (an empty kueue with no kai is read to say so).
    kueue = read_kueue(queueing, spec.workload, base_dir, source, allow_outside) \
        if queueing is not None and (queueing.kueue.strip() or not queueing.kai.strip()) \
        else None
    kai = read_kai(queueing, spec.workload, base_dir, source, allow_outside) \
        if queueing is not None and queueing.kai.strip() else None
    for i, job in enumerate(spec.workload):
        if kueue is None and job.queue is not None:
            raise ScenarioError(source, f"spec.workload[{i}].queue",
                                "a queue needs spec.queueing.kueue (the Kueue objects)")
        if kai is None and job.kai_queue is not None:
            raise ScenarioError(source, f"spec.workload[{i}].kaiQueue",
                                "a KAI queue needs spec.queueing.kai (the KAI objects)")
    check_min_member(spec.workload, source)
    scenario = msgspec.structs.replace(
        scenario, kueue_objects=kueue, kai_objects=kai,
        kueue_file=queueing.kueue if queueing is not None else "")
    pool_nodes, event_nodes = grow_pools(scenario, fleet)
    scenario = msgspec.structs.replace(
        scenario, kinds=kinds, claim_templates=tuple(templates_for(spec.workload)),
        timeline=tuple(typed_event(e, event_nodes.get(i) or e.node or "")
                       for i, e in enumerate(spec.events)),
        pool_nodes=pool_nodes, autoscaling=autoscaling)
    if compare is not None:
        return scenario.with_compare(tuple(compare))
    check_modes(scenario)
    return scenario


def _check_target(event: NodeEvent, i: int, source: str) -> None:
    """An event names a node, or (add only) a pool; not both."""
    path = f"spec.events[{i}]"
    if event.node is not None and event.pool is not None:
        raise ScenarioError(source, f"{path}.pool", "node and pool are exclusive")
    if event.pool is not None and event.action != "add":
        raise ScenarioError(source, f"{path}.pool",
                            f"only an add event can name a pool, not {event.action}")
    if event.node is None and event.pool is None:
        raise ScenarioError(source, f"{path}.node",
                            "required (or, for add, a pool to grow by one node)")


def _name(metadata: Mapping[str, Any], source: str) -> str:
    name = metadata.get("name")
    if name is None or name == "":
        return Path(source).stem or "scenario"
    if not isinstance(name, str) or len(name) > 253 or not name.isprintable():
        raise ScenarioError(source, "metadata.name",
                            "must be a printable string of at most 253 characters")
    return name


def _check_scheduler(config: Mapping[str, Any] | None, seed: int, source: str) -> None:
    """ScenarioError for a scheduler configuration the runs would refuse: parsed and
    its profiles built once on an empty cluster (the plugins do not depend on nodes)."""
    from dralab.scheduler import ConfigError, Scheduler, build_cluster

    try:
        cluster, _ = build_cluster([], None, seed)
        Scheduler.build(cluster, config, seed)
    except ConfigError as exc:
        raise ScenarioError(source, "spec.scheduler", str(exc)) from None


def load_scenario(path: str, compare: Sequence[str] | None = None, *,
                  allow_outside: bool = False) -> Scenario:
    """Read a Scenario file (YAML or JSON); ``compare`` and ``allow_outside`` as in
    ``parse_scenario``."""
    from dralab.api.io import read_documents

    docs = read_documents([path])
    if len(docs) != 1:
        raise ScenarioError(path, "", f"expected one Scenario document, found {len(docs)}")
    data = docs[0].data
    if not isinstance(data, Mapping):
        raise ScenarioError(path, "", f"a Scenario must be a mapping, not {type(data).__name__}")
    return parse_scenario(data, path, str(Path(path).parent), compare,
                          allow_outside=allow_outside)
