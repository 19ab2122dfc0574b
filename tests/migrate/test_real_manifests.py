"""The 24 public GPU manifests of tests/data/real-manifests through inventory, convert and verify.

Expected counts come from reading each manifest (its replicas, parallelism, groups
and per-container ``nvidia.com/gpu`` / ``nvidia.com/mig-*``), written here file by
file. Checked: every GPU counted, every workload whose pod template dralab knows
converted (the two whose pods another controller builds are not, with why), the
unrendered Helm template skipped with its hint, the converted pods valid, and the
converted workloads scheduling on a Fleet in the repository as before.
"""

from __future__ import annotations

import pytest

from dralab.api.codec import encode
from dralab.api.features import FeatureGates
from dralab.api.io import Document, read_documents, to_list
from dralab.migrate import inventory
from dralab.migrate.convert import Conversion, convert_files
from dralab.migrate.pods import workload_pods
from dralab.migrate.podsets import workload_of
from dralab.migrate.verify import verify
from dralab.validation.check import validate_documents

from .conftest import ROOT, check_golden, run

CORPUS = ROOT / "tests" / "data" / "real-manifests"
FLEET = ROOT / "tests" / "data" / "migrate" / "corpus-fleet.yaml"
TEMPLATE = "vllm-project+production-stack/helm/templates/deployment-vllm-multi.yaml"

# (file, kind, namespace/name, pods, whole GPUs, MIG devices, convert result)
EXPECTED = [
    # JobSet: one replicated job, parallelism 2, 2 GPUs per pod
    ("GoogleCloudPlatform+ai-on-gke/best-practices/gke-batch-refarch/jobset/workloads/team-a/"
     "team-a-jobset-0.yaml", "JobSet", "team-a/team-a-jobset-0", 2, 4, 0, "converted"),
    ("GoogleCloudPlatform+ai-on-gke/tutorials-and-examples/genAI-LLM/finetuning-gemma-2b-on-l4/"
     "finetune.yaml", "Job", "default/finetune-job", 1, 8, 0, "converted"),
    ("GoogleCloudPlatform+ai-on-gke/tutorials-and-examples/genAI-LLM/"
     "serving-llama2-70b-on-l4-gpus/text-generation-interface.yaml", "Deployment",
     "llama-2-70b", 1, 2, 0, "converted"),
    ("NVIDIA+dcgm-exporter/tests/gpu-pod.yaml", "Pod", "nbody-pod", 1, 1, 0, "converted"),
    ("NVIDIA+gpu-operator/tests/gpu-pod.yaml", "Pod", "gpu-operator-test", 1, 1, 0,
     "converted"),
    ("NVIDIA+k8s-device-plugin/testdata/job-1.yaml", "Job", "j-e2e-1", 1, 1, 0, "converted"),
    # replicas 3 x spec.template's main container (1 GPU); the controller builds the pods
    ("kserve+kserve/docs/samples/llmisvc/single-node-gpu/"
     "llm-inference-service-qwen2-7b-gpu-no-scheduler.yaml", "LLMInferenceService",
     "qwen2-7b-instruct-single-no-scheduler", 3, 3, 0, "not converted"),
    ("kserve+kserve/docs/samples/storage/hf/hf_isvc.yaml", "InferenceService",
     "huggingface-llama2", 1, 1, 0, "converted"),
    # framework predictors: predictor.tensorflow / predictor.pytorch are the container
    ("kserve+kserve/docs/samples/v1beta1/tensorflow/gpu.yaml", "InferenceService",
     "tensorflow-gpu", 1, 1, 0, "converted"),
    ("kserve+kserve/docs/samples/v1beta1/torchserve/v1/gpu.yaml", "InferenceService",
     "torchserve-gpu", 1, 1, 0, "converted"),
    # Launcher 1 (no GPU) + Worker 2 x 1 GPU
    ("kubeflow+mpi-operator/examples/v2beta1/tensorflow-benchmarks/tensorflow-benchmarks.yaml",
     "MPIJob", "tensorflow-benchmarks", 3, 2, 0, "converted"),
    # trainer.numNodes 2 x resourcesPerNode 1 GPU; its pods come from the runtime
    ("kubeflow+trainer/examples/flux/lammps-train-gpus.yaml", "TrainJob", "lammps-flux", 2, 2,
     0, "not converted"),
    # two initializers + the node job (mlPolicy.numNodes 1) with 2 GPUs
    ("kubeflow+trainer/manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml",
     "ClusterTrainingRuntime", "torchtune-llama3.2-1b", 3, 2, 0, "converted"),
    ("kubeflow+training-operator/examples/pytorch/deepspeed-demo/pytorch_deepspeed_demo.yaml",
     "PyTorchJob", "pytorch-deepspeed-demo", 2, 2, 0, "converted"),
    # 2 groups of size 2 (leader + worker), 8 GPUs each
    ("kubernetes-sigs+lws/docs/examples/vllm/GPU/lws.yaml", "LeaderWorkerSet", "vllm", 4, 32, 0,
     "converted"),
    ("openshift+instaslice-operator/samples/test-pod.yaml", "Pod", "cuda-vectoradd-1", 1, 0, 1,
     "converted"),
    ("openshift+instaslice-operator/samples/test-statefulset.yaml", "StatefulSet",
     "cuda-vectoradd-1", 1, 0, 1, "converted"),
    ("openshift+instaslice-operator/samples/vllm_job.yaml", "Job", "vllm-job", 1, 0, 1,
     "converted"),
    # two containers, one 1g.5gb each
    ("openshift+instaslice-operator/test/test-deployment-mig-uuid-verification-multicontainer"
     ".yaml", "Deployment", "default/mig-uuid-verification-multicontainer", 1, 0, 2,
     "converted"),
    # head (no GPU) + gpu-group replicas 4 (min 4, max 4) x 1 GPU
    ("ray-project+kuberay/ray-operator/config/samples/pytorch-resnet-image-classifier/"
     "ray-job.pytorch-image-classifier.yaml", "RayJob", "pytorch-image-classifier-*", 5, 4, 0,
     "converted"),
    # head (num-gpus 0) + gpu-group 1 x 4 GPUs
    ("ray-project+kuberay/ray-operator/config/samples/ray-service.llm-serve.yaml", "RayService",
     "ray-serve-llm", 2, 4, 0, "converted"),
    ("ray-project+ray/doc/source/cluster/kubernetes/configs/ray-cluster.gpu.yaml", "RayCluster",
     "raycluster", 2, 1, 0, "converted"),
    ("vllm-project+production-stack/src/gateway_inference_extension/configs/vllm/"
     "gpu-deployment.yaml", "Deployment", "vllm-llama3-1b-instruct", 2, 2, 0, "converted"),
]


def test_the_corpus_is_the_24_files() -> None:
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.yaml"))
    assert files == sorted([e[0] for e in EXPECTED] + [TEMPLATE])


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda e: e[0].rsplit("/", 1)[-1])
def test_every_gpu_counted(expected: tuple[str, str, str, int, int, int, str]) -> None:
    path, kind, ref, pods, gpus, mig, _ = expected
    [entry] = inventory(read_documents([str(CORPUS / path)]))
    sets = list(entry.pod_sets())
    assert (entry.workload.kind, entry.workload.ref) == (kind, ref)
    assert sum(p.pods or 0 for p, _ in sets) == pods
    assert sum((p.pods or 0) * d.per_pod("gpus") for p, d in sets) == gpus
    assert sum((p.pods or 0) * d.per_pod("mig") for p, d in sets) == mig


@pytest.fixture(scope="module")
def conversion() -> Conversion:
    return convert_files([str(CORPUS)])


def test_known_templates_converted(conversion: Conversion) -> None:
    results = {(f["input"], w["kind"], w["name"]): w["result"]
               for f in conversion.summary()["files"] for w in f.get("workloads", [])}
    assert results == {(str(CORPUS / e[0]), e[1], e[2]): e[6] for e in EXPECTED}
    assert [s.path for s in conversion.skipped] == [str(CORPUS / TEMPLATE)]
    why = {w["kind"]: w["why"][0] for f in conversion.summary()["files"]
           for w in f.get("workloads", []) if w["result"] == "not converted"}
    assert why["TrainJob"].startswith("its pods come from the runtime flux-distributed")
    assert why["LLMInferenceService"].startswith("the KServe controller builds its pods")


def test_converted_workloads_hold_no_device_plugin_gpus(conversion: Conversion) -> None:
    for f in conversion.files:
        for doc, plan, data in zip(f.documents, f.plans, f.converted, strict=True):
            if not plan.changes:
                continue
            [entry] = inventory([Document(doc.source, doc.index, data)])
            assert all(d.per_pod("gpus") == d.per_pod("mig") == 0 for _, d in entry.pod_sets()),\
                doc.describe()


def test_ray_groups_keep_their_gpu_count_for_ray(conversion: Conversion) -> None:
    # KubeRay took num-gpus from the nvidia.com/gpu limit the conversion removes.
    job = next(f for f in conversion.files if f.source.endswith("pytorch-image-classifier.yaml"))
    group = job.converted[0]["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    assert group["rayStartParams"]["num-gpus"] == "1"
    service = next(f for f in conversion.files if f.source.endswith("llm-serve.yaml"))
    assert service.converted[0]["spec"]["rayClusterConfig"]["workerGroupSpecs"][0][
        "rayStartParams"]["num-gpus"] == "4"  # already there: kept


def test_converted_pods_validate(conversion: Conversion) -> None:
    # dralab validate checks built-in kinds only: the custom resources' pod templates are
    # checked as the Pods they make, with the claim templates and classes they use.
    docs: list[Document] = []
    for f in conversion.files:
        for plan, data in zip(f.plans, f.converted, strict=True):
            workload = workload_of(data)
            if plan.changes and workload is not None:
                docs += [Document(f.source, i, p)
                         for i, p in enumerate(workload_pods(data, workload), start=1)]
    extra = to_list([*conversion.templates, *conversion.classes])["items"]
    docs += [Document("<generated>", i, encode(o) if not isinstance(o, dict) else o)
             for i, o in enumerate(extra, start=1)]
    assert len(docs) > 40
    assert validate_documents(docs, FeatureGates()) == []


def test_converted_workloads_schedule_on_the_corpus_fleet(conversion: Conversion) -> None:
    report = verify(conversion, str(FLEET))
    assert report.changed == []
    # Every pod placed in both models, the LWS pods (800Gi of ephemeral-storage each) on
    # H100 nodes, which report 7Ti (100Gi reserved).
    assert [p.pod for p in report.pods if not (p.placed_before and p.placed_after)] == []
    lws = {p.pod: (p.before, p.after) for p in report.pods if p.workload == "LeaderWorkerSet vllm"}
    assert sorted(lws) == ["default/vllm-leader-0", "default/vllm-leader-1",
                           "default/vllm-worker-0", "default/vllm-worker-1"]
    assert all(a.startswith("h100-node-") and b.startswith("h100-node-")
               for a, b in lws.values())
    # One LWS pod per node: each takes a whole node's 8 GPUs.
    assert len({a for a, _ in lws.values()}) == len({b for _, b in lws.values()}) == 4
    assert len(report.pods) == 37


def test_inventory_golden(in_root: None) -> None:
    code, out, err = run("migrate", "inventory", "-f", "tests/data/real-manifests")
    assert code == 1  # the unrendered Helm template is skipped; everything else listed
    check_golden("real-manifests/inventory.table", out)
    check_golden("real-manifests/inventory.stderr", err)
