"""The validation table: a valid object, one seeded error, the exact path and type expected.

Each case names a builder (see builders.BUILDERS), a list of edits (path, value)
or callables, and the errors it must produce, in order. A few cases also pin
the complete message, to keep wording identical to the API server's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from dralab.api.errors import ErrorType as E
from dralab.api.features import FeatureGates
from dralab.validation import validate_object

from .builders import BUILDERS, DELETE, DRIVER, UID, UID2, Doc, edit, gpu, mig, shared_gpu

Edit = tuple[str, Any] | Callable[[Doc], None]


@dataclass(frozen=True)
class Case:
    id: str
    base: str
    edits: tuple[Edit, ...]
    expect: tuple[tuple[str, E], ...]
    message: str | None = None
    gates: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def case(id: str, base: str, edits: list[Edit], *expect: tuple[str, E],
         message: str | None = None, gates: str = "") -> Case:
    return Case(id, base, tuple(edits), tuple(expect), message, gates)


def _devices(n: int, *, taint_first: bool = False) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        devices = [{"name": f"gpu-{i}"} for i in range(n)]
        if taint_first:
            devices[0]["taints"] = [{"key": "example.com/hot", "effect": "NoSchedule"}]
        doc["spec"]["devices"] = devices
    return apply


def _many(path: str, item: Callable[[int], Any], n: int) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        edit(doc, path, [item(i) for i in range(n)])
    return apply


def _attrs(n: int) -> Callable[[Doc], None]:
    def apply(doc: Doc) -> None:
        doc["spec"]["devices"][0]["attributes"] = {f"a{i}": {"int": i} for i in range(n)}
    return apply


def _selector(i: int) -> Doc:
    return {"cel": {"expression": f'device.driver == "d{i}.example.com"'}}


def _request(i: int) -> Doc:
    return {"name": f"r{i}", "exactly": {"deviceClassName": "gpu.nvidia.com"}}


def _opaque(i: int) -> Doc:
    return {"opaque": {"driver": DRIVER, "parameters": {"i": i}}}


def _toleration(i: int) -> Doc:
    return {"key": f"k{i}", "operator": "Exists"}


def _result(i: int) -> Doc:
    return {"request": "gpu", "driver": DRIVER, "pool": "node-1", "device": f"gpu-{i}"}


def _condition(i: int) -> Doc:
    return {"type": f"T{i}", "status": "True", "reason": "R",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def _taint(i: int) -> Doc:
    return {"key": f"example.com/t{i}", "effect": "NoSchedule"}


GPU_EXACTLY = "spec.devices.requests[0].exactly"
MIG_SUBS = "spec.devices.requests[1].firstAvailable"
DEV0 = "spec.devices[0]"
RESULT0 = "status.allocation.devices.results[0]"
CTR0 = "spec.containers[0]"
TPL_SPEC = "spec.template.spec"
# Drops the claim's constraint and config, whose request references would fail too.
NO_REFS: list[Edit] = [("spec.devices.constraints", DELETE), ("spec.devices.config", DELETE)]

CASES: list[Case] = [
    # ---- ResourceSlice: metadata, driver, pool ------------------------------------------
    case("slice-name-format", "slice", [("metadata.name", "GPU_Slice")],
         ("metadata.name", E.INVALID)),
    case("slice-name-missing", "slice", [("metadata.name", DELETE)],
         ("metadata.name", E.REQUIRED),
         message="metadata.name: Required value: name or generateName is required"),
    # An unrendered Go template (`name: {{ .Index }}`) parses as a map: a type error, not
    # also a missing name.
    case("slice-name-unrendered-template", "slice", [("metadata.name", {".Index": None})],
         ("metadata.name", E.TYPE_INVALID),
         message='metadata.name: Invalid value: "object": must be of type string'),
    case("pod-generate-name-unrendered-template", "pod",
         [("metadata.name", DELETE), ("metadata.generateName", {".Prefix": None})],
         ("metadata.generateName", E.TYPE_INVALID)),
    case("slice-driver-missing", "slice", [("spec.driver", DELETE)], ("spec.driver", E.REQUIRED)),
    case("slice-driver-too-long", "slice", [("spec.driver", "a" * 64)],
         ("spec.driver", E.TOO_LONG),
         message="spec.driver: Too long: may not be more than 63 bytes"),
    case("slice-driver-format", "slice", [("spec.driver", "gpu_nvidia.com")],
         ("spec.driver", E.INVALID)),
    case("slice-pool-name-missing", "slice", [("spec.pool.name", "")],
         ("spec.pool.name", E.REQUIRED)),
    case("slice-pool-name-empty-part", "slice", [("spec.pool.name", "node-1//gpus")],
         ("spec.pool.name", E.INVALID)),
    case("slice-pool-name-too-long", "slice",
         [("spec.pool.name", "a" * 100 + "/" + "b" * 100 + "/" + "c" * 60)],
         ("spec.pool.name", E.TOO_LONG)),
    case("slice-pool-generation-negative", "slice", [("spec.pool.generation", -1)],
         ("spec.pool.generation", E.INVALID)),
    case("slice-pool-count-zero", "slice", [("spec.pool.resourceSliceCount", 0)],
         ("spec.pool.resourceSliceCount", E.INVALID),
         message="spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    case("slice-pool-count-string", "slice", [("spec.pool.resourceSliceCount", "3")],
         ("spec.pool.resourceSliceCount", E.TYPE_INVALID)),
    # ---- ResourceSlice: node selection -------------------------------------------------------
    case("slice-no-node-selection", "slice", [("spec.nodeName", DELETE)],
         ("spec", E.REQUIRED)),
    case("slice-two-node-selections", "slice", [("spec.allNodes", True)], ("spec", E.INVALID),
         message="spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, "
                 "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple "
                 "fields are set"),
    case("slice-all-nodes-false", "slice", [("spec.allNodes", False)],
         ("spec.allNodes", E.INVALID)),
    case("slice-node-name-empty", "slice", [("spec.nodeName", ""), ("spec.allNodes", True)],
         ("spec.nodeName", E.INVALID)),
    case("slice-node-selector-two-terms", "slice",
         [("spec.nodeName", DELETE),
          ("spec.nodeSelector", {"nodeSelectorTerms": [
              {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
              {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]})],
         ("spec.nodeSelector.nodeSelectorTerms", E.INVALID)),
    case("slice-node-selector-bad-operator", "slice",
         [("spec.nodeName", DELETE),
          ("spec.nodeSelector", {"nodeSelectorTerms": [
              {"matchExpressions": [{"key": "a", "operator": "Near"}]}]})],
         ("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator", E.INVALID)),
    # ---- ResourceSlice: devices ------------------------------------------------------------
    case("device-name-format", "slice", [(f"{DEV0}.name", "GPU-0")], (f"{DEV0}.name", E.INVALID)),
    case("device-name-duplicate", "slice", [("spec.devices[1].name", "gpu-0")],
         ("spec.devices[1]", E.DUPLICATE)),
    case("devices-too-many", "slice", [_devices(129)], ("spec.devices", E.TOO_MANY),
         message="spec.devices: Too many: 129: must have at most 128 items"),
    case("devices-too-many-with-taints", "slice", [_devices(65, taint_first=True)],
         ("spec.devices", E.TOO_MANY)),
    case("attribute-id-too-long", "slice",
         [(f"{DEV0}.attributes[{'x' * 33}]", {"int": 1})], (f"{DEV0}.attributes", E.TOO_LONG)),
    case("attribute-id-format", "slice", [(f"{DEV0}.attributes[bad-key]", {"int": 1})],
         (f"{DEV0}.attributes", E.INVALID)),
    case("attribute-two-slashes", "slice", [(f"{DEV0}.attributes[a.com/b/c]", {"int": 1})],
         (f"{DEV0}.attributes", E.INVALID)),
    case("attribute-two-values", "slice", [(f"{DEV0}.attributes[type].int", 1)],
         (f"{DEV0}.attributes[type]", E.INVALID)),
    case("attribute-no-value", "slice", [(f"{DEV0}.attributes[type]", {})],
         (f"{DEV0}.attributes[type]", E.INVALID)),
    case("attribute-string-too-long", "slice",
         [(f"{DEV0}.attributes[type].string", "x" * 65)],
         (f"{DEV0}.attributes[type].string", E.TOO_LONG)),
    case("attribute-version-v-prefix", "slice",
         [(f"{DEV0}.attributes[driverVersion].version", "v580.105.8")],
         (f"{DEV0}.attributes[driverVersion].version", E.INVALID),
         message=f'{DEV0}.attributes[driverVersion].version: Invalid value: "v580.105.8": '
                 "must be a string compatible with semver.org spec 2.0.0"),
    case("attribute-version-leading-zero", "slice",
         [(f"{DEV0}.attributes[driverVersion].version", "580.95.05")],
         (f"{DEV0}.attributes[driverVersion].version", E.INVALID)),
    case("attribute-int-as-string", "slice", [(f"{DEV0}.attributes[index].int", "5")],
         (f"{DEV0}.attributes[index].int", E.TYPE_INVALID)),
    case("attributes-and-capacity-over-32", "slice", [_attrs(32)], (DEV0, E.INVALID)),
    case("capacity-bad-quantity", "slice", [(f"{DEV0}.capacity[memory].value", "80 GiB")],
         (f"{DEV0}.capacity[memory].value", E.INVALID)),
    case("capacity-missing-value", "slice", [(f"{DEV0}.capacity[memory]", {})],
         (f"{DEV0}.capacity[memory].value", E.REQUIRED)),
    case("list-attribute-gate-off", "slice", [(f"{DEV0}.attributes[models]",
                                               {"strings": ["a", "b"]})],
         (f"{DEV0}.attributes[models].strings", E.FORBIDDEN),
         message=f"{DEV0}.attributes[models].strings: Forbidden: requires feature gate "
                 "DRAListTypeAttributes"),
    case("list-attribute-empty", "slice", [(f"{DEV0}.attributes[models]", {"strings": []})],
         (f"{DEV0}.attributes[models].strings", E.INVALID),
         gates="DRAListTypeAttributes=true"),
    # ---- consumable capacity -------------------------------------------------------------
    case("request-policy-needs-multi-allocation", "slice",
         [(f"{DEV0}.capacity[memory].requestPolicy", {"default": "1Gi"})],
         (f"{DEV0}.capacity[memory].requestPolicy", E.FORBIDDEN)),
    case("valid-values-unsorted", "slice",
         [(DEV0, shared_gpu()), (f"{DEV0}.capacity[memory].requestPolicy",
                                 {"default": "10Gi", "validValues": ["20Gi", "10Gi"]})],
         (f"{DEV0}.capacity[memory].requestPolicy.validValues[1]", E.INVALID)),
    case("valid-values-too-many", "slice",
         [(DEV0, shared_gpu()), (f"{DEV0}.capacity[memory].requestPolicy",
                                 {"default": "1Gi",
                                  "validValues": [f"{i}Gi" for i in range(1, 12)]})],
         (f"{DEV0}.capacity[memory].requestPolicy.validValues", E.TOO_MANY),
         (f"{DEV0}.capacity[memory].requestPolicy.validValues", E.INVALID)),
    case("valid-values-and-range", "slice",
         [(DEV0, shared_gpu()),
          (f"{DEV0}.capacity[memory].requestPolicy.validValues", ["10Gi"])],
         (f"{DEV0}.capacity[memory].requestPolicy", E.FORBIDDEN)),
    case("valid-range-without-default", "slice",
         [(DEV0, shared_gpu()), (f"{DEV0}.capacity[memory].requestPolicy.default", DELETE)],
         (f"{DEV0}.capacity[memory].requestPolicy.default", E.REQUIRED)),
    case("valid-range-min-over-capacity", "slice",
         [(DEV0, shared_gpu()), (f"{DEV0}.capacity[memory].requestPolicy",
                                 {"default": "200Gi", "validRange": {"min": "200Gi"}})],
         (f"{DEV0}.capacity[memory].requestPolicy.validRange.min", E.INVALID)),
    case("valid-range-default-off-step", "slice",
         [(DEV0, shared_gpu()), (f"{DEV0}.capacity[memory].requestPolicy.default", "15Gi")],
         (f"{DEV0}.capacity[memory].requestPolicy.validRange.step", E.INVALID)),
    # ---- partitionable devices -----------------------------------------------------------
    case("consumes-counters-too-many", "slice",
         [(DEV0, mig("m-0")), (f"{DEV0}.consumesCounters",
                               [mig("x")["consumesCounters"][0] | {"counterSet": f"s{i}"}
                                for i in range(3)])],
         (f"{DEV0}.consumesCounters", E.TOO_MANY)),
    case("consumes-counters-duplicate-set", "slice",
         [(DEV0, mig("m-0")), (f"{DEV0}.consumesCounters[1]",
                               mig("x")["consumesCounters"][0])],
         (f"{DEV0}.consumesCounters[1]", E.DUPLICATE)),
    case("devices-and-shared-counters", "counters", [("spec.devices", [gpu("gpu-0")])],
         ("spec", E.INVALID)),
    case("counter-set-name-format", "counters", [("spec.sharedCounters[0].name", "Set_1")],
         ("spec.sharedCounters[0].name", E.INVALID)),
    case("counter-sets-too-many", "counters",
         [_many("spec.sharedCounters", lambda i: {"name": f"s-{i}", "counters": {
             "memory": {"value": "1Gi"}}}, 9)],
         ("spec.sharedCounters", E.TOO_MANY)),
    case("counter-name-format", "counters",
         [("spec.sharedCounters[0].counters[Memory]", {"value": "1"})],
         ("spec.sharedCounters[0].counters", E.INVALID)),
    case("counter-set-without-counters", "counters",
         [("spec.sharedCounters[0].counters", {})],
         ("spec.sharedCounters[0].counters", E.REQUIRED)),
    case("shared-counters-gate-off", "counters", [],
         ("spec.sharedCounters", E.FORBIDDEN), gates="DRAPartitionableDevices=false"),
    case("device-node-name-without-per-device", "slice", [(f"{DEV0}.nodeName", "node-1")],
         (DEV0, E.INVALID)),
    case("per-device-selection-missing-on-device", "slice",
         [("spec.nodeName", DELETE), ("spec.perDeviceNodeSelection", True),
          ("spec.devices[1].nodeName", "node-1")],
         (DEV0, E.REQUIRED)),
    # ---- taints and binding conditions ------------------------------------------------------
    case("device-taints-too-many", "slice", [_many(f"{DEV0}.taints", _taint, 17)],
         (f"{DEV0}.taints", E.TOO_MANY)),
    case("device-taint-prefer-no-schedule", "slice",
         [(f"{DEV0}.taints", [{"key": "example.com/x", "effect": "PreferNoSchedule"}])],
         (f"{DEV0}.taints[0].effect", E.NOT_SUPPORTED),
         message=f'{DEV0}.taints[0].effect: Unsupported value: "PreferNoSchedule": supported '
                 'values: "NoExecute", "NoSchedule", "None"'),
    case("device-taint-missing-key", "slice", [(f"{DEV0}.taints", [{"effect": "NoSchedule"}])],
         (f"{DEV0}.taints[0].key", E.INVALID), (f"{DEV0}.taints[0].key", E.INVALID)),
    case("binding-conditions-too-many", "slice",
         [(f"{DEV0}.bindingConditions", [f"c{i}" for i in range(5)]),
          (f"{DEV0}.bindingFailureConditions", ["failed"])],
         (f"{DEV0}.bindingConditions", E.TOO_MANY)),
    case("binding-conditions-without-failure", "slice",
         [(f"{DEV0}.bindingConditions", ["Attached"])],
         (f"{DEV0}.bindingFailureConditions", E.INVALID)),
    # ---- ResourceClaim spec ----------------------------------------------------------------
    case("request-name-format", "claim", [("spec.devices.requests[0].name", "GPU"), *NO_REFS],
         ("spec.devices.requests[0].name", E.INVALID)),
    case("request-name-duplicate", "claim", [("spec.devices.requests[1].name", "gpu")],
         ("spec.devices.requests[1]", E.DUPLICATE)),
    case("requests-too-many", "claim", [_many("spec.devices.requests", _request, 33), *NO_REFS],
         ("spec.devices.requests", E.TOO_MANY)),
    case("request-neither-form", "claim", [("spec.devices.requests[0].exactly", DELETE)],
         ("spec.devices.requests[0]", E.REQUIRED)),
    case("request-both-forms", "claim",
         [("spec.devices.requests[0].firstAvailable", [{"name": "a",
                                                        "deviceClassName": "x"}])],
         ("spec.devices.requests[0]", E.INVALID)),
    case("device-class-missing", "claim", [(f"{GPU_EXACTLY}.deviceClassName", DELETE)],
         (f"{GPU_EXACTLY}.deviceClassName", E.REQUIRED)),
    case("device-class-format", "claim", [(f"{GPU_EXACTLY}.deviceClassName", "GPU Class")],
         (f"{GPU_EXACTLY}.deviceClassName", E.INVALID)),
    case("allocation-mode-unknown", "claim", [(f"{GPU_EXACTLY}.allocationMode", "Some")],
         (f"{GPU_EXACTLY}.allocationMode", E.NOT_SUPPORTED),
         message=f'{GPU_EXACTLY}.allocationMode: Unsupported value: "Some": supported values: '
                 '"All", "ExactCount"'),
    case("count-negative", "claim", [(f"{GPU_EXACTLY}.count", -1)],
         (f"{GPU_EXACTLY}.count", E.INVALID)),
    case("count-with-mode-all", "claim", [(f"{GPU_EXACTLY}.allocationMode", "All")],
         (f"{GPU_EXACTLY}.count", E.INVALID),
         message=f"{GPU_EXACTLY}.count: Invalid value: 2: must not be specified when "
                 "allocationMode is 'All'"),
    case("selectors-too-many", "claim", [_many(f"{GPU_EXACTLY}.selectors", _selector, 33)],
         (f"{GPU_EXACTLY}.selectors", E.TOO_MANY)),
    case("selector-without-cel", "claim", [(f"{GPU_EXACTLY}.selectors[0]", {})],
         (f"{GPU_EXACTLY}.selectors[0].cel", E.REQUIRED)),
    case("selector-empty-expression", "claim",
         [(f"{GPU_EXACTLY}.selectors[0].cel.expression", "")],
         (f"{GPU_EXACTLY}.selectors[0].cel.expression", E.REQUIRED)),
    case("selector-too-long", "claim",
         [(f"{GPU_EXACTLY}.selectors[0].cel.expression", "true && " * 1281)],
         (f"{GPU_EXACTLY}.selectors[0].cel.expression", E.TOO_LONG),
         message=f"{GPU_EXACTLY}.selectors[0].cel.expression: Too long: may not be more than "
                 "10240 bytes"),
    case("toleration-exists-with-value", "claim",
         [(f"{GPU_EXACTLY}.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}])],
         (f"{GPU_EXACTLY}.tolerations[0].value", E.INVALID)),
    case("toleration-effect-unknown", "claim",
         [(f"{GPU_EXACTLY}.tolerations", [{"key": "k", "operator": "Exists",
                                           "effect": "Sometimes"}])],
         (f"{GPU_EXACTLY}.tolerations[0].effect", E.NOT_SUPPORTED)),
    case("toleration-seconds-without-no-execute", "claim",
         [(f"{GPU_EXACTLY}.tolerations", [{"key": "k", "operator": "Exists",
                                           "effect": "NoSchedule", "tolerationSeconds": 30}])],
         (f"{GPU_EXACTLY}.tolerations[0].effect", E.INVALID)),
    case("tolerations-too-many", "claim",
         [_many(f"{GPU_EXACTLY}.tolerations", _toleration, 17)],
         (f"{GPU_EXACTLY}.tolerations", E.TOO_MANY)),
    case("capacity-request-bad-quantity", "claim",
         [(f"{GPU_EXACTLY}.capacity", {"requests": {"memory": "lots"}})],
         (f"{GPU_EXACTLY}.capacity.requests[memory]", E.INVALID)),
    case("subrequests-too-many", "claim",
         [_many(MIG_SUBS, lambda i: {"name": f"s{i}", "deviceClassName": "mig.nvidia.com"}, 9)],
         (MIG_SUBS, E.TOO_MANY)),
    case("subrequest-name-duplicate", "claim", [(f"{MIG_SUBS}[1].name", "big")],
         (f"{MIG_SUBS}[1]", E.DUPLICATE)),
    case("subrequest-admin-access", "claim", [(f"{MIG_SUBS}[0].adminAccess", True)],
         (f"{MIG_SUBS}[0].adminAccess", E.FORBIDDEN)),
    case("request-flat-v1beta1-field", "claim",
         [("spec.devices.requests[1].deviceClassName", "mig.nvidia.com")],
         ("spec.devices.requests[1].deviceClassName", E.FORBIDDEN)),
    case("distinct-attribute-gate-off", "claim",
         [("spec.devices.constraints[0]", {"distinctAttribute": "gpu.nvidia.com/index"})],
         ("spec.devices.constraints[0].distinctAttribute", E.FORBIDDEN),
         gates="DRAConsumableCapacity=false"),
    case("constraint-unknown-request", "claim",
         [("spec.devices.constraints[0].requests", ["gpu", "tpu"])],
         ("spec.devices.constraints[0].requests[1]", E.INVALID)),
    case("constraint-unknown-subrequest", "claim",
         [("spec.devices.constraints[0].requests", ["mig/medium"])],
         ("spec.devices.constraints[0].requests[0]", E.INVALID)),
    case("constraint-without-attribute", "claim",
         [("spec.devices.constraints[0].matchAttribute", DELETE)],
         ("spec.devices.constraints[0]", E.REQUIRED)),
    case("constraint-attribute-not-qualified", "claim",
         [("spec.devices.constraints[0].matchAttribute", "pcieRoot")],
         ("spec.devices.constraints[0].matchAttribute", E.INVALID)),
    case("constraints-too-many", "claim",
         [_many("spec.devices.constraints",
                lambda i: {"matchAttribute": "resource.kubernetes.io/pcieRoot"}, 33)],
         ("spec.devices.constraints", E.TOO_MANY)),
    case("config-driver-missing", "claim", [("spec.devices.config[0].opaque.driver", DELETE)],
         ("spec.devices.config[0].opaque.driver", E.REQUIRED)),
    case("config-parameters-not-object", "claim",
         [("spec.devices.config[0].opaque.parameters", ["a", "b"])],
         ("spec.devices.config[0].opaque.parameters", E.INVALID)),
    case("config-parameters-too-large", "claim",
         [("spec.devices.config[0].opaque.parameters", {"blob": "x" * 10240})],
         ("spec.devices.config[0].opaque.parameters", E.TOO_LONG)),
    case("config-without-opaque", "claim", [("spec.devices.config[0].opaque", DELETE)],
         ("spec.devices.config[0].opaque", E.REQUIRED)),
    case("config-too-many", "claim", [_many("spec.devices.config", _opaque, 33)],
         ("spec.devices.config", E.TOO_MANY)),
    case("claim-requests-not-a-list", "claim", [("spec.devices.requests", "gpu"), *NO_REFS],
         ("spec.devices.requests", E.TYPE_INVALID)),
    # ---- ResourceClaim status ---------------------------------------------------------------
    case("result-unknown-request", "allocated", [(f"{RESULT0}.request", "tpu")],
         (f"{RESULT0}.request", E.INVALID)),
    case("result-device-format", "allocated", [(f"{RESULT0}.device", "GPU 0"),
                                               ("status.devices", DELETE)],
         (f"{RESULT0}.device", E.INVALID)),
    case("results-too-many", "allocated",
         [_many("status.allocation.devices.results", _result, 33)],
         ("status.allocation.devices.results", E.TOO_MANY)),
    case("result-share-id-format", "allocated", [(f"{RESULT0}.shareID", "not-a-uid"),
                                                 ("status.devices", DELETE)],
         (f"{RESULT0}.shareID", E.INVALID)),
    case("allocation-config-source", "allocated",
         [("status.allocation.devices.config[0].source", "FromNowhere")],
         ("status.allocation.devices.config[0].source", E.NOT_SUPPORTED)),
    case("allocation-node-selector-no-terms", "allocated",
         [("status.allocation.nodeSelector", {"nodeSelectorTerms": []})],
         ("status.allocation.nodeSelector.nodeSelectorTerms", E.REQUIRED)),
    case("reserved-without-allocation", "allocated",
         [("status.allocation", DELETE), ("status.devices", DELETE)],
         ("status.reservedFor", E.FORBIDDEN)),
    case("reserved-duplicate-uid", "allocated",
         [("status.reservedFor[1]", {"resource": "pods", "name": "other", "uid": UID})],
         ("status.reservedFor[1]", E.DUPLICATE)),
    case("reserved-missing-uid", "allocated", [("status.reservedFor[0].uid", DELETE)],
         ("status.reservedFor[0].uid", E.REQUIRED)),
    case("device-status-not-allocated", "allocated", [("status.devices[0].device", "gpu-7")],
         ("status.devices[0]", E.INVALID)),
    case("device-status-conditions-too-many", "allocated",
         [_many("status.devices[0].conditions", _condition, 9)],
         ("status.devices[0].conditions", E.TOO_MANY)),
    case("device-status-bad-ip", "allocated",
         [("status.devices[0].networkData.ips", ["10.1.0.5"])],
         ("status.devices[0].networkData.ips[0]", E.INVALID)),
    case("device-status-interface-too-long", "allocated",
         [("status.devices[0].networkData.interfaceName", "e" * 257)],
         ("status.devices[0].networkData.interfaceName", E.TOO_LONG)),
    # ---- DeviceClass, DeviceTaintRule, ResourceClaimTemplate ---------------------------------
    case("class-name-format", "class", [("metadata.name", "GPU")],
         ("metadata.name", E.INVALID)),
    case("class-selectors-too-many", "class", [_many("spec.selectors", _selector, 33)],
         ("spec.selectors", E.TOO_MANY)),
    case("class-extended-resource-name", "class", [("spec.extendedResourceName", "gpu")],
         ("spec.extendedResourceName", E.INVALID),
         message='spec.extendedResourceName: Invalid value: "gpu": must be a valid extended '
                 "resource name"),
    case("class-config-too-many", "class", [_many("spec.config", _opaque, 33)],
         ("spec.config", E.TOO_MANY)),
    case("rule-taint-effect", "rule", [("spec.taint.effect", "PreferNoSchedule")],
         ("spec.taint.effect", E.NOT_SUPPORTED)),
    case("rule-pool-format", "rule", [("spec.deviceSelector.pool", "Pool!")],
         ("spec.deviceSelector.pool", E.INVALID)),
    case("rule-v1alpha3-device-format", "rule",
         [("apiVersion", "resource.k8s.io/v1alpha3"), ("spec.deviceSelector.device", "GPU")],
         ("spec.deviceSelector.device", E.INVALID)),
    # kube-apiserver v1.36.2 (DRADeviceTaintRules beta, off) accepts a v1beta2 rule on a dry-run
    # create (tests/k8s/test_validation_conformance.py): the gate is not checked on write.
    case("rule-gate-off", "rule", [], gates="DRADeviceTaintRules=false"),
    case("template-meta-name", "template", [("spec.metadata.name", "x")],
         ("spec.metadata.name", E.FORBIDDEN)),
    case("template-device-class-empty", "template",
         [("spec.spec.devices.requests[0].exactly.deviceClassName", "")],
         ("spec.spec.devices.requests[0].exactly.deviceClassName", E.REQUIRED)),
    # ---- Pod -------------------------------------------------------------------------------------
    case("pod-claim-name-duplicate", "pod",
         [("spec.resourceClaims[1]", {"name": "gpu", "resourceClaimName": "shared"})],
         ("spec.resourceClaims[1].name", E.DUPLICATE)),
    case("pod-claim-both-sources", "pod",
         [("spec.resourceClaims[0].resourceClaimName", "shared")],
         ("spec.resourceClaims[0]", E.INVALID)),
    case("pod-claim-no-source", "pod",
         [("spec.resourceClaims[0].resourceClaimTemplateName", DELETE)],
         ("spec.resourceClaims[0]", E.INVALID),
         message='spec.resourceClaims[0]: Invalid value: {"name": "gpu"}: must specify one of: '
                 "`resourceClaimName`, `resourceClaimTemplateName`"),
    case("container-claim-unknown", "pod", [(f"{CTR0}.resources.claims[0].name", "gpux")],
         (f"{CTR0}.resources.claims[0]", E.NOT_FOUND),
         message=f'{CTR0}.resources.claims[0]: Not found: "gpux": must be one of the names in '
                 "pod.spec.resourceClaims: gpu"),
    case("container-requests-over-limits", "pod", [(f"{CTR0}.resources.requests.cpu", "16")],
         (f"{CTR0}.resources.requests", E.INVALID)),
    case("extended-resource-fraction", "pod",
         [(f"{CTR0}.resources.requests[nvidia.com/gpu]", "500m")],
         (f"{CTR0}.resources.requests[nvidia.com/gpu]", E.INVALID),
         (f"{CTR0}.resources.requests", E.INVALID)),
    case("extended-resource-without-limit", "pod",
         [(f"{CTR0}.resources.limits[nvidia.com/gpu]", DELETE)],
         (f"{CTR0}.resources.limits", E.REQUIRED)),
    case("extended-resource-request-below-limit", "pod",
         [(f"{CTR0}.resources.limits[nvidia.com/gpu]", 2)],
         (f"{CTR0}.resources.requests", E.INVALID),
         message=f'{CTR0}.resources.requests: Invalid value: "1": must be equal to '
                 "nvidia.com/gpu limit of 2"),
    case("container-bad-quantity", "pod", [(f"{CTR0}.resources.requests.memory", "32 GB")],
         (f"{CTR0}.resources.requests[memory]", E.INVALID)),
    case("container-resource-unqualified", "pod",
         [(f"{CTR0}.resources.requests.gpu", "1")],
         (f"{CTR0}.resources.requests[gpu]", E.INVALID),
         (f"{CTR0}.resources.requests[gpu]", E.INVALID)),
    case("container-name-missing", "pod", [(f"{CTR0}.name", DELETE)],
         (f"{CTR0}.name", E.REQUIRED)),
    case("container-image-missing", "pod", [(f"{CTR0}.image", DELETE)],
         (f"{CTR0}.image", E.REQUIRED)),
    case("containers-missing", "pod", [("spec.containers", [])], ("spec.containers", E.REQUIRED)),
    case("container-not-a-map", "pod", [("spec.containers[0]", "trainer")],
         (CTR0, E.TYPE_INVALID)),
    case("init-container-duplicate-name", "pod",
         [("spec.initContainers", [{"name": "trainer", "image": "busybox"}])],
         ("spec.initContainers[0].name", E.DUPLICATE)),
    case("affinity-in-without-values", "pod",
         [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[0]", {"key": "zone", "operator": "In"})],
         ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
          ".nodeSelectorTerms[0].matchExpressions[0].values", E.REQUIRED)),
    case("affinity-gt-two-values", "pod",
         [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[0].values", ["3", "4"])],
         ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
          ".nodeSelectorTerms[0].matchExpressions[0].values", E.REQUIRED)),
    case("affinity-exists-with-values", "pod",
         [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
           ".nodeSelectorTerms[0].matchExpressions[0].operator", "Exists")],
         ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
          ".nodeSelectorTerms[0].matchExpressions[0].values", E.FORBIDDEN)),
    case("affinity-preferred-weight", "pod",
         [("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
           ".weight", 0)],
         ("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
          ".weight", E.INVALID)),
    case("pod-toleration-exists-with-value", "pod", [("spec.tolerations[0].value", "x")],
         ("spec.tolerations[0].operator", E.INVALID)),
    case("pod-toleration-effect", "pod", [("spec.tolerations[0].effect", "Never")],
         ("spec.tolerations[0].effect", E.NOT_SUPPORTED)),
    case("pod-toleration-empty-key-equal", "pod",
         [("spec.tolerations[0]", {"operator": "Equal", "value": "x"})],
         ("spec.tolerations[0].operator", E.INVALID)),
    case("pod-priority-class-format", "pod", [("spec.priorityClassName", "High")],
         ("spec.priorityClassName", E.INVALID)),
    case("pod-priority-string", "pod", [("spec.priority", "100")],
         ("spec.priority", E.TYPE_INVALID)),
    case("pod-scheduling-gate-duplicate", "pod",
         [("spec.schedulingGates[1]", {"name": "example.com/quota"})],
         ("spec.schedulingGates[1]", E.DUPLICATE)),
    case("pod-node-name-format", "pod", [("spec.nodeName", "node_1")],
         ("spec.nodeName", E.INVALID)),
    case("pod-node-selector-value", "pod", [("spec.nodeSelector[nvidia.com/gpu.product]",
                                             "NVIDIA H100")],
         ("spec.nodeSelector", E.INVALID)),
    case("pod-restart-policy", "pod", [("spec.restartPolicy", "Sometimes")],
         ("spec.restartPolicy", E.NOT_SUPPORTED)),
    case("pod-label-key", "pod", [("metadata.labels[-bad]", "x")],
         ("metadata.labels", E.INVALID)),
    case("pod-claim-status-unknown", "pod", [("status.resourceClaimStatuses[0].name", "tpu")],
         ("status.resourceClaimStatuses[0].name", E.INVALID)),
    # ---- Node, PriorityClass ---------------------------------------------------------------
    case("node-name-format", "node", [("metadata.name", "Node 1")], ("metadata.name", E.INVALID)),
    case("node-taint-effect", "node", [("spec.taints[0].effect", "NoAdmit")],
         ("spec.taints[0].effect", E.NOT_SUPPORTED)),
    case("node-taint-effect-missing", "node", [("spec.taints[0].effect", DELETE)],
         ("spec.taints[0].effect", E.REQUIRED)),
    case("node-taint-duplicate", "node",
         [("spec.taints[1]", {"key": "nvidia.com/gpu", "value": "other",
                              "effect": "NoSchedule"})],
         ("spec.taints[1]", E.DUPLICATE)),
    case("node-capacity-negative", "node", [("status.capacity.cpu", "-1")],
         ("status.capacity[cpu]", E.INVALID)),
    case("node-gpu-fraction", "node", [("status.allocatable[nvidia.com/gpu]", "1.5")],
         ("status.allocatable[nvidia.com/gpu]", E.INVALID)),
    # ---- Namespace -------------------------------------------------------------------------
    case("namespace-name-dots", "namespace", [("metadata.name", "team.a")],
         ("metadata.name", E.INVALID),
         message='metadata.name: Invalid value: "team.a": must not contain dots'),
    case("namespace-name-too-long", "namespace", [("metadata.name", "n" * 64)],
         ("metadata.name", E.INVALID)),
    case("namespace-finalizer-unqualified", "namespace", [("spec.finalizers[1]", "cleanup")],
         ("spec.finalizers", E.INVALID),
         message='spec.finalizers: Invalid value: "cleanup": name is neither a standard '
                 "finalizer name nor is it fully qualified"),
    case("namespace-label-value", "namespace",
         [("metadata.labels[resource.kubernetes.io/admin-access]", "yes please")],
         ("metadata.labels", E.INVALID)),
    case("priority-too-high", "priority", [("value", 2_000_000_000)], ("value", E.FORBIDDEN),
         message="value: Forbidden: maximum allowed value of a user defined priority is "
                 "1000000000"),
    case("priority-preemption-policy", "priority", [("preemptionPolicy", "Sometimes")],
         ("preemptionPolicy", E.NOT_SUPPORTED)),
    case("priority-system-prefix", "priority", [("metadata.name", "system-gpu")],
         ("metadata.name", E.FORBIDDEN)),
    # ---- workloads -------------------------------------------------------------------------
    case("deployment-selector-missing", "deployment", [("spec.selector", DELETE)],
         ("spec.selector", E.REQUIRED)),
    case("deployment-selector-mismatch", "deployment",
         [("spec.selector.matchLabels.app", "other")],
         ("spec.template.metadata.labels", E.INVALID)),
    case("deployment-replicas-negative", "deployment", [("spec.replicas", -1)],
         ("spec.replicas", E.INVALID)),
    case("deployment-template-image", "deployment",
         [(f"{TPL_SPEC}.containers[0].image", DELETE)],
         (f"{TPL_SPEC}.containers[0].image", E.REQUIRED)),
    case("statefulset-name-dots", "statefulset", [("metadata.name", "trainer.v1")],
         ("metadata.name", E.INVALID)),
    case("statefulset-empty-selector", "statefulset", [("spec.selector", {})],
         ("spec.selector", E.INVALID)),
    case("replicaset-restart-never", "replicaset", [(f"{TPL_SPEC}.restartPolicy", "Never")],
         (f"{TPL_SPEC}.restartPolicy", E.NOT_SUPPORTED)),
    case("daemonset-selector-missing", "daemonset", [("spec.selector", DELETE)],
         ("spec.selector", E.REQUIRED)),
    case("job-restart-policy-default", "job", [(f"{TPL_SPEC}.restartPolicy", DELETE)],
         (f"{TPL_SPEC}.restartPolicy", E.NOT_SUPPORTED),
         message=f'{TPL_SPEC}.restartPolicy: Unsupported value: "Always": supported values: '
                 '"OnFailure", "Never"'),
    case("job-parallelism-negative", "job", [("spec.parallelism", -1)],
         ("spec.parallelism", E.INVALID)),
    case("job-completions-negative", "job", [("spec.completions", -2)],
         ("spec.completions", E.INVALID)),
    case("job-indexed-parallelism-at-limit", "job",
         [("spec.completionMode", "Indexed"), ("spec.parallelism", 100_000),
          ("spec.completions", 2_000_000_000)]),
    case("job-indexed-parallelism-over-limit", "job",
         [("spec.completionMode", "Indexed"), ("spec.parallelism", 100_001)],
         ("spec.parallelism", E.INVALID),
         message="spec.parallelism: Invalid value: 100001: must be less than or equal to "
                 "100000 when completion mode is Indexed"),
    case("job-non-indexed-parallelism-large", "job", [("spec.parallelism", 2_000_000_000)]),
    case("job-manual-selector", "job", [("spec.selector", {"matchLabels": {"app": "trainer"}})],
         ("spec.selector", E.INVALID)),
    # A Job read back from a cluster: the selector and labels the API server generated.
    case("job-selector-as-stored", "job",
         [("metadata.uid", UID),
          ("spec.selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}),
          ("spec.template.metadata.labels", {
              "batch.kubernetes.io/controller-uid": UID, "controller-uid": UID,
              "batch.kubernetes.io/job-name": "train-once", "job-name": "train-once"})]),
    case("job-selector-other-uid", "job",
         [("metadata.uid", UID),
          ("spec.selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": UID2}})],
         ("spec.selector", E.INVALID),
         message='spec.selector: Invalid value: {"matchLabels": {"batch.kubernetes.io/'
                 f'controller-uid": "{UID2}"}}}}: `selector` not auto-generated'),
    case("job-selector-by-name-before-creation", "job",
         [("spec.selector", {"matchLabels": {"job-name": "train-once"}})]),
    case("job-template-label-other-name", "job",
         [("metadata.uid", UID),
          ("spec.selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}),
          ("spec.template.metadata.labels", {"job-name": "other"})],
         ("spec.template.metadata.labels[job-name]", E.INVALID)),
    case("job-template-claim-ref", "job",
         [(f"{TPL_SPEC}.containers[0].resources.claims", [{"name": "gpu"}])],
         (f"{TPL_SPEC}.containers[0].resources.claims[0]", E.NOT_FOUND)),
    case("cronjob-name-too-long", "cronjob", [("metadata.name", "n" * 53)],
         ("metadata.name", E.INVALID)),
    case("cronjob-schedule-range", "cronjob", [("spec.schedule", "61 * * * *")],
         ("spec.schedule", E.INVALID)),
    case("cronjob-schedule-missing", "cronjob", [("spec.schedule", DELETE)],
         ("spec.schedule", E.REQUIRED)),
    case("cronjob-template-parallelism", "cronjob",
         [("spec.jobTemplate.spec.parallelism", -3)],
         ("spec.jobTemplate.spec.parallelism", E.INVALID)),
]


def _build(c: Case) -> Doc:
    doc = BUILDERS[c.base]()
    for e in c.edits:
        if callable(e):
            e(doc)
        else:
            edit(doc, *e)
    return doc


def test_table_is_large_and_ids_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) >= 70
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_seeded_error(c: Case) -> None:
    gates = FeatureGates.parse(c.gates)
    errors = validate_object(_build(c), features=gates)
    assert [(e.path, e.type) for e in errors] == list(c.expect), [str(e) for e in errors]
    if c.message is not None:
        assert str(errors[0]) == c.message
