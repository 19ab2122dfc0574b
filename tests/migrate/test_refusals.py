"""`dralab migrate` refuses workloads the API server refuses, and shares of no memory.

Expected messages are the API server's (kubernetes/kubernetes
pkg/apis/core/validation/validation.go: ValidateResourceRequirements,
ValidateResourceQuantityValue, ValidateNonnegativeQuantity; wording checked against
commit 009801d930e2e3c8b3671a3ec28e31a2f64865ac of the upstream tree as indexed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.errors import ValidationFailed
from dralab.api.io import Document
from dralab.migrate import inventory
from dralab.migrate.refusals import share_memory_amount, workload_problems

from .conftest import DATA, EXAMPLE, MANIFESTS, run

GPU = "nvidia.com/gpu"


def _pod(resources: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}}


# resources of the Pod's container -> problems ("" when the API server accepts it)
POD_TABLE: list[tuple[str, dict[str, Any], list[str]]] = [
    ("issue 29 badpod: -1", {"limits": {GPU: -1}},
     [f'spec.containers[0].resources.limits[{GPU}]: Invalid value: "-1": '
      "must be greater than or equal to 0"]),
    ("issue 29 halfpod: 0.5", {"limits": {GPU: 0.5}},
     [f'spec.containers[0].resources.limits[{GPU}]: Invalid value: "500m": must be an integer']),
    ("500m", {"limits": {GPU: "500m"}},
     [f'spec.containers[0].resources.limits[{GPU}]: Invalid value: "500m": must be an integer']),
    ("negative request and limit", {"limits": {GPU: "-2"}, "requests": {GPU: "-2"}},
     [f'spec.containers[0].resources.limits[{GPU}]: Invalid value: "-2": '
      "must be greater than or equal to 0",
      f'spec.containers[0].resources.requests[{GPU}]: Invalid value: "-2": '
      "must be greater than or equal to 0"]),
    ("request below limit", {"limits": {GPU: 2}, "requests": {GPU: 1}},
     [f'spec.containers[0].resources.requests: Invalid value: "1": '
      f"must be equal to {GPU} limit of 2"]),
    ("request without limit", {"requests": {GPU: 1}},
     ["spec.containers[0].resources.limits: Required value: "
      "Limit must be set for non overcommitable resources"]),
    # MilliValue() % 1000 reads the low 64 bits of 2^63 * 1000, which are 0: accepted.
    ("2^63", {"limits": {GPU: str(2**63)}}, []),
    ("one", {"limits": {GPU: 1}}, []),
    ("+1", {"limits": {GPU: "+1"}}, []),
    ("zero", {"limits": {GPU: 0}}, []),
    ("1e3 is a whole 1000", {"limits": {GPU: "1e3"}}, []),
    ("equal request and limit", {"limits": {GPU: 2}, "requests": {GPU: 2}}, []),
    ("cpu request below limit", {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}}, []),
]


@pytest.mark.parametrize(("resources", "expected"), [(r, e) for _, r, e in POD_TABLE],
                         ids=[name for name, _, _ in POD_TABLE])
def test_pod_resource_rules(resources: dict[str, Any], expected: list[str]) -> None:
    problems = workload_problems([Document("p.yaml", None, _pod(resources))])
    assert [str(p) for p in problems] == [f"p.yaml Pod default/p: {e}" for e in expected]
    if expected:
        with pytest.raises(ValidationFailed):
            inventory([Document("p.yaml", None, _pod(resources))])
    else:
        assert len(inventory([Document("p.yaml", None, _pod(resources))])) == 1


def _jobset() -> dict[str, Any]:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "ml"},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {
                "template": {"spec": {"containers": [
                    {"name": "ok", "resources": {"limits": {GPU: 1}}},
                    {"name": "bad", "resources": {"limits": {GPU: -1}}}]}}}}}]}}


def _inference_service() -> dict[str, Any]:
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": "is", "namespace": "ml"},
            "spec": {"predictor": {"model": {"modelFormat": {"name": "x"},
                                             "resources": {"limits": {GPU: "0.5"}}}}}}


@pytest.mark.parametrize(("doc", "expected"), [
    (_jobset(), "ml/js: spec.replicatedJobs[0].template.spec.template.spec.containers[1]"
                f'.resources.limits[{GPU}]: Invalid value: "-1": '
                "must be greater than or equal to 0"),
    (_inference_service(), f'ml/is: spec.predictor.model.resources.limits[{GPU}]: '
                           'Invalid value: "500m": must be an integer'),
])
def test_pod_templates_of_custom_resources(doc: dict[str, Any], expected: str) -> None:
    [problem] = workload_problems([Document("w.yaml", None, doc)])
    assert str(problem) == f"w.yaml {doc['kind']} {expected}"


def _write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize("verb", ["inventory", "convert", "check", "plan"])
def test_every_verb_exits_2_naming_every_problem(tmp_path: Path, verb: str) -> None:
    bad = _write(tmp_path, "bad.yaml", _pod({"limits": {GPU: -1}}),
                 _pod({"limits": {GPU: 1}}) | {"metadata": {"name": "fine"}},
                 _pod({"limits": {GPU: 0.5}}) | {"metadata": {"name": "half",
                                                              "namespace": "ml"}})
    args = ["-f", str(bad)]
    if verb in ("check", "plan"):  # a cluster dump: the example's, plus the bad Pods
        args += ["-f", str(EXAMPLE / "cluster-dump.yaml")]
    out_dir = tmp_path / "out"
    extra = ["-o", str(out_dir)] if verb == "convert" else \
        ["--out", str(out_dir)] if verb == "plan" else []
    code, stdout, err = run("migrate", verb, *args, *extra)
    assert code == 2, (stdout, err)
    assert err.splitlines() == [
        f"error: {bad}:1 Pod default/p: spec.containers[0].resources.limits[{GPU}]: "
        'Invalid value: "-1": must be greater than or equal to 0',
        f"error: {bad}:3 Pod ml/half: spec.containers[0].resources.limits[{GPU}]: "
        'Invalid value: "500m": must be an integer',
        "error: 2 problem(s) in 2 workload(s) the API server would refuse; fix them first",
    ]
    assert stdout == "" and not out_dir.exists()


def test_issue_reproducers_exit_2_in_one_line_each(tmp_path: Path) -> None:
    for name, value, detail in (("badpod", -1, '"-1": must be greater than or equal to 0'),
                                ("halfpod", 0.5, '"500m": must be an integer')):
        path = _write(tmp_path, f"{name}.yaml", _pod({"limits": {GPU: value}}))
        for verb in (["inventory"], ["convert", "-o", str(tmp_path / "o")]):
            code, _, err = run("migrate", *verb, "-f", str(path))
            assert code == 2
            assert err.splitlines()[0] == (
                f"error: {path} Pod default/p: spec.containers[0].resources"
                f"[{GPU}]: Invalid value: {detail}".replace("resources[", "resources.limits["))


def test_convert_exit_codes(tmp_path: Path) -> None:
    # all converted or unchanged: 0; one not converted (another vendor's GPU): 1
    code, _, err = run("migrate", "convert", "-f", str(MANIFESTS), "-o", str(tmp_path / "a"))
    assert code == 0, err
    code, out, err = run("migrate", "convert", "-f", str(DATA / "pod.json"), "-f",
                         str(DATA / "amd.yaml"), "-o", str(tmp_path / "b"))
    assert code == 1, err
    assert "not converted" in out and (tmp_path / "b" / "pod.json").exists()


SHARED = {"apiVersion": "apps/v1", "kind": "Deployment",
          "metadata": {"name": "nb", "namespace": "ds"},
          "spec": {"selector": {"matchLabels": {"app": "nb"}}, "template": {
              "metadata": {"labels": {"app": "nb"}},
              "spec": {"containers": [{"name": "c", "image": "x",
                                       "resources": {"limits": {"nvidia.com/gpu.shared": 1}}}]}}}}


@pytest.mark.parametrize(("share", "message"), [
    ("-8Gi", '"-8Gi": must be greater than zero'),   # issue 29
    ("0", '"0": must be greater than zero'),          # issue 29
    ("-0.5", '"-0.5": must be greater than zero'),
    ("500m", 'fractional byte value "500m" is invalid, must be an integer'),
    ("0.5", 'fractional byte value "0.5" is invalid, must be an integer'),
    ("８Gi", "quantities must match the regular expression"),
    ("٨Gi", "quantities must match the regular expression"),
    ("lots", "quantities must match the regular expression"),
])
@pytest.mark.parametrize("verb", ["convert", "plan"])
def test_share_memory_refused(tmp_path: Path, share: str, message: str, verb: str) -> None:
    path = _write(tmp_path, "nb.yaml", SHARED)
    out = ["-o", str(tmp_path / "out")] if verb == "convert" else []
    code, _, err = run("migrate", verb, "-f", str(path), *out, f"--share-memory={share}")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: Invalid value for --share-memory: ")
    assert message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("share", "template", "memory"), [
    ("8Gi", "gpu-share-8gi", "8Gi"),
    ("+8Gi", "gpu-share-8gi", "8Gi"),      # issue 29: named like 8Gi because it is 8Gi
    ("8192Mi", "gpu-share-8gi", "8Gi"),
    ("1", "gpu-share-1", "1"),
    ("1e3", "gpu-share-1e3", "1e3"),
    ("20G", "gpu-share-20g", "20G"),
])
def test_share_memory_accepted(tmp_path: Path, share: str, template: str, memory: str) -> None:
    path = _write(tmp_path, "nb.yaml", SHARED)
    code, _, err = run("migrate", "convert", "-f", str(path), "-o", str(tmp_path / "out"),
                       f"--share-memory={share}")
    assert code == 0, err
    [rct] = yaml.safe_load((tmp_path / "out" / "resourceclaimtemplates.yaml").read_text())["items"]
    assert rct["metadata"]["name"] == template
    [request] = rct["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["capacity"]["requests"]["memory"] == memory
    assert share_memory_amount(share) == memory


@pytest.mark.parametrize("verb", ["inventory", "convert", "check", "plan"])
def test_help_states_exit_codes(verb: str) -> None:
    code, out, _ = run("migrate", verb, "--help")
    assert code == 0
    out = " ".join(out.split())
    assert "Exit codes: 0 " in out and "2 invalid input or usage" in out
    assert "would refuse" in out


def test_more_devices_than_a_claim_count_holds_is_not_converted(tmp_path: Path) -> None:
    # The API server takes the Pod (above), but a DeviceRequest's count is an int64: the
    # template cannot be written, so the workload is listed as not converted (exit 1).
    path = _write(tmp_path, "huge.yaml", _pod({"limits": {GPU: str(2**63)}}))
    code, out, err = run("migrate", "convert", "-f", str(path), "-o", str(tmp_path / "o"))
    assert code == 1, err
    assert ("not converted" in out and f"{GPU}: '{2**63}' devices: more than a DeviceRequest's "
            f"count can hold ({2**63 - 1}, int64)" in out)
    assert not (tmp_path / "o" / "resourceclaimtemplates.yaml").read_text().count("count:")
