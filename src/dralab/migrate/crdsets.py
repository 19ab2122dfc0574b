"""Pod sets of the custom resources people run GPU work with, one reader per kind.

* JobSet: ``spec.replicatedJobs[*]`` (replicas x parallelism pods each);
* LeaderWorkerSet: leader and workers (``replicas`` groups of ``size`` pods);
* Kubeflow training-operator jobs (PyTorchJob, TFJob, MPIJob, ...): ``spec.*ReplicaSpecs``;
* KServe InferenceService: each component (predictor, transformer, explainer) is a pod
  spec; its framework key (``predictor.pytorch``, ``.tensorflow``, ``.sklearn``,
  ``.xgboost``, ``.triton``, ``.onnx``, ``.huggingface``, ``.model``, ...; the
  explainer's ``art``) is one more container, the ``kserve-container`` of the pod;
  ``minReplicas`` pods (KServe's default 1); a multi-node predictor (``workerSpec``) adds
  ``pipelineParallelSize - 1`` worker pods per replica and is read, not converted (KServe
  sets those pods' GPUs from ``tensorParallelSize``);
* KServe LLMInferenceService: ``spec.template`` (and ``spec.prefill.template``), ``replicas``
  pods; read, not converted (the controller merges the template with an
  LLMInferenceServiceConfig dralab does not see);
* KubeRay RayCluster, RayJob (``spec.rayClusterSpec``), RayService
  (``spec.rayClusterConfig``): the head (one pod) and every worker group: ``replicas``
  held between ``minReplicas`` and ``maxReplicas`` (KubeRay's defaults 0, 0, 2^31-1),
  times ``numOfHosts``; none while the group is suspended. Converting a group writes
  ``rayStartParams.num-gpus`` when missing (KubeRay took it from the limit removed);
* Kubeflow trainer v2: TrainingRuntime and ClusterTrainingRuntime carry a JobSet template
  (``spec.template.spec``) whose trainer job (``node``) runs ``mlPolicy.numNodes`` pods
  -- a template for TrainJobs, it makes no pods itself; a TrainJob names its runtime
  and may override the trainer's resources (``spec.trainer.resourcesPerNode``, for
  ``numNodes`` pods): read, not converted.

Pure: plain documents in, pod sets out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .podsetcore import ManifestWorkload, PathKey, PodSet, at_path, count_of, labels_at

__all__ = ["CRD_KINDS", "KSERVE_CONTAINER_KEYS", "RAY_KINDS", "crd_workload"]

# KServe v1beta1: the predictor's framework specs (each a container) and the explainer's.
KSERVE_CONTAINER_KEYS = {
    "predictor": ("model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
                  "huggingface", "pmml", "lightgbm", "paddle"),
    "transformer": (),
    "explainer": ("art",),
}
RAY_KINDS = {"RayCluster": ("spec",), "RayJob": ("spec", "rayClusterSpec"),
             "RayService": ("spec", "rayClusterConfig")}
_TRAINING_JOBS = ("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob")
_RUNTIMES = ("TrainingRuntime", "ClusterTrainingRuntime")
CRD_KINDS = ("JobSet", "LeaderWorkerSet", "InferenceService", "LLMInferenceService",
             *RAY_KINDS, "TrainJob", *_RUNTIMES, *_TRAINING_JOBS)
_MAX_INT32 = 2**31 - 1
# KubeRay passes `ray start --num-gpus` from rayStartParams, else from the first
# container's nvidia.com/gpu limit: once the limit becomes a claim, the count must be
# written, or Ray sees no GPU on the pod.
_RAY_GPUS = "num-gpus"
# The replicated job of a trainer runtime that runs the training nodes (trainer's
# constants.Node) and the label the runtimes put on its template.
_TRAINER_JOB = "node"
_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"

KSERVE_MULTINODE_WHY = (
    "multi-node serving (predictor.workerSpec): KServe sets the GPUs of the head and "
    "worker pods from workerSpec.tensorParallelSize; dralab counts the GPUs as written "
    "and does not convert it; convert by hand")
LLMISVC_WHY = ("the KServe controller builds its pods from spec.template merged with an "
               "LLMInferenceServiceConfig dralab does not see; convert by hand (claims in "
               "spec.template.resourceClaims and the main container's resources.claims)")


def _trainjob_why(runtime: str) -> str:
    return (f"its pods come from the runtime {runtime or '(none named)'}: convert that "
            "TrainingRuntime or ClusterTrainingRuntime, then remove the GPUs of "
            "spec.trainer.resourcesPerNode (they override the runtime's trainer container)")


def _replicated_jobs(data: Mapping[str, Any], base: tuple[PathKey, ...],
                     trainer_nodes: int | None = None) -> list[PodSet]:
    """A JobSet spec's replicated jobs at ``base``; ``trainer_nodes``: the pods of a trainer
    runtime's training job (``mlPolicy.numNodes``), which replace its replicas x parallelism."""
    out = []
    jobs = at_path(data, (*base, "replicatedJobs"))
    for i, job in enumerate(jobs if isinstance(jobs, list) else []):
        if not isinstance(job, Mapping):
            continue
        template = (*base, "replicatedJobs", i, "template", "spec", "template")
        pods = count_of(job.get("replicas"), 1) * count_of(
            at_path(job, ("template", "spec", "parallelism")), 1)
        ancestor = labels_at(data, (*base, "replicatedJobs", i, "template")).get(_ANCESTOR)
        if trainer_nodes is not None and (job.get("name") == _TRAINER_JOB
                                          or ancestor == "trainer"):
            pods = trainer_nodes
        out.append(PodSet(str(job.get("name", i)), (*template, "spec"), pods,
                          labels_at(data, template)))
    return out


def _leader_worker_set(data: Mapping[str, Any]) -> list[PodSet]:
    lwt = at_path(data, ("spec", "leaderWorkerTemplate"))
    if not isinstance(lwt, Mapping):
        return []
    groups = count_of(at_path(data, ("spec", "replicas")), 1)
    size = max(1, count_of(lwt.get("size"), 1))
    base: tuple[PathKey, ...] = ("spec", "leaderWorkerTemplate")
    out = []
    if isinstance(lwt.get("leaderTemplate"), Mapping):
        out.append(PodSet("leader", (*base, "leaderTemplate", "spec"), groups,
                          labels_at(data, (*base, "leaderTemplate"))))
        workers = groups * (size - 1)
    else:  # without a leader template the leader is made from the worker template
        workers = groups * size
    if isinstance(lwt.get("workerTemplate"), Mapping):
        out.append(PodSet("worker", (*base, "workerTemplate", "spec"), workers,
                          labels_at(data, (*base, "workerTemplate"))))
    return out


def _training_job(data: Mapping[str, Any]) -> list[PodSet]:
    spec = at_path(data, ("spec",))
    out = []
    for key, replica_specs in (spec.items() if isinstance(spec, Mapping) else ()):
        if not (isinstance(key, str) and key.endswith("ReplicaSpecs")
                and isinstance(replica_specs, Mapping)):
            continue
        for role, role_spec in replica_specs.items():
            if not isinstance(role_spec, Mapping):
                continue
            base = ("spec", key, role, "template")
            out.append(PodSet(str(role), (*base, "spec"), count_of(role_spec.get("replicas"), 1),
                              labels_at(data, base)))
    return out


def _inference_service(data: Mapping[str, Any]) -> list[PodSet]:
    out = []
    for component, keys in KSERVE_CONTAINER_KEYS.items():
        spec = at_path(data, ("spec", component))
        if not isinstance(spec, Mapping):
            continue
        extra = tuple((k,) for k in keys if isinstance(spec.get(k), Mapping))
        labels = spec.get("labels")
        replicas = count_of(spec.get("minReplicas"), 1)
        out.append(PodSet(component, ("spec", component), replicas,
                          labels if isinstance(labels, Mapping) else {}, extra))
        worker = spec.get("workerSpec")
        if component == "predictor" and isinstance(worker, Mapping):
            # Multi-node serving: a head pod and pipelineParallelSize - 1 workers per
            # replica (the ServingRuntime's default size is 1: no worker).
            workers = max(count_of(worker.get("pipelineParallelSize"), 1) - 1, 0)
            out.append(PodSet("predictor-worker", ("spec", component, "workerSpec"),
                              replicas * workers, {}))
    return out


def _llm_inference_service(data: Mapping[str, Any]) -> list[PodSet]:
    out = []
    for role, base in (("main", ("spec",)), ("prefill", ("spec", "prefill"))):
        replicas = count_of(at_path(data, (*base, "replicas")), 1)
        # A worker template (multi-node) makes at least one more pod per replica: counted
        # as one, the least it can be (its size comes from the parallelism dralab does
        # not model).
        for key, name in (("template", role), ("worker", f"{role}-worker")):
            if isinstance(at_path(data, (*base, key)), Mapping):
                out.append(PodSet(name, (*base, key), replicas, {}))
    return out


def _ray(data: Mapping[str, Any], base: tuple[PathKey, ...]) -> list[PodSet]:
    out = []
    head = (*base, "headGroupSpec", "template")
    if isinstance(at_path(data, head), Mapping):
        out.append(PodSet("head", (*head, "spec"), 1, labels_at(data, head),
                          gpu_count_param=((*base, "headGroupSpec", "rayStartParams"),
                                           _RAY_GPUS)))
    groups = at_path(data, (*base, "workerGroupSpecs"))
    for i, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, Mapping):
            continue
        template = (*base, "workerGroupSpecs", i, "template")
        low = count_of(group.get("minReplicas"), 0)
        high = count_of(group.get("maxReplicas"), _MAX_INT32)
        replicas = min(max(count_of(group.get("replicas"), 0), low), high)
        pods = 0 if group.get("suspend") is True else \
            replicas * max(1, count_of(group.get("numOfHosts"), 1))
        params = ((*base, "workerGroupSpecs", i, "rayStartParams"), _RAY_GPUS)
        out.append(PodSet(str(group.get("groupName", f"worker-{i}")), (*template, "spec"), pods,
                          labels_at(data, template), gpu_count_param=params))
    return out


def crd_workload(data: Mapping[str, Any], kind: str, namespace: str | None, name: str
                 ) -> ManifestWorkload | None:
    """The workload of a document of one of ``CRD_KINDS`` (None for other kinds)."""
    sets: list[PodSet]
    why = ""
    if kind == "JobSet":
        sets = _replicated_jobs(data, ("spec",))
    elif kind == "LeaderWorkerSet":
        sets = _leader_worker_set(data)
        size = count_of(at_path(data, ("spec", "leaderWorkerTemplate", "size")), 1)
        return ManifestWorkload(kind, namespace, name, tuple(sets), size > 1)
    elif kind == "InferenceService":
        sets = _inference_service(data)
        multinode = any(p.role == "predictor-worker" for p in sets)
        return ManifestWorkload(kind, namespace, name, tuple(sets), multinode,
                                KSERVE_MULTINODE_WHY if multinode else "")
    elif kind == "LLMInferenceService":
        return ManifestWorkload(kind, namespace, name, tuple(_llm_inference_service(data)),
                                False, LLMISVC_WHY)
    elif kind in RAY_KINDS:
        # A Ray cluster's workers join as they come: no gang (Ray schedules its tasks).
        return ManifestWorkload(kind, namespace, name, tuple(_ray(data, RAY_KINDS[kind])), False)
    elif kind == "TrainJob":
        trainer = at_path(data, ("spec", "trainer"))
        nodes = count_of(at_path(trainer, ("numNodes",)), 1)
        sets = [PodSet("trainer", ("spec",), nodes, {}, (("trainer",),), "resourcesPerNode")] \
            if isinstance(trainer, Mapping) else []
        runtime = at_path(data, ("spec", "runtimeRef", "name"))
        why = _trainjob_why(runtime if isinstance(runtime, str) else "")
    elif kind in _RUNTIMES:
        nodes = count_of(at_path(data, ("spec", "mlPolicy", "numNodes")), 1)
        sets = _replicated_jobs(data, ("spec", "template", "spec"), nodes)
        # The initializers run before the training nodes (dependsOn): only the nodes
        # must start together.
        return ManifestWorkload(kind, namespace, name, tuple(sets), nodes > 1,
                                template_only=True)
    elif kind in _TRAINING_JOBS:
        sets = _training_job(data)
    else:
        return None
    # Several pods of a JobSet or a training job start and fail together.
    gang = sum(p.pods or 0 for p in sets) > 1
    return ManifestWorkload(kind, namespace, name, tuple(sets), gang, why)
