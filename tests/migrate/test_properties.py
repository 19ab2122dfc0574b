"""Properties of the conversion over generated workloads (hypothesis)."""

from __future__ import annotations

import io
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.io import Document, dumps, read_documents
from dralab.migrate.convert import convert_sources

PROFILES = ["1g.5gb", "1g.10gb+me", "2g.10gb", "3g.20gb", "7g.40gb"]
LABELS = [("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
          ("nvidia.com/gpu.product", "NVIDIA-Unknown-GPU"), ("nvidia.com/gpu.family", "hopper"),
          ("nvidia.com/gpu.memory", "81559"), ("nvidia.com/gpu.present", "true"),
          ("nvidia.com/gpu.count", "8"), ("disktype", "ssd")]


@st.composite
def deployments(draw: st.DrawFn) -> dict[str, Any]:
    containers = []
    for i in range(draw(st.integers(1, 3))):
        limits: dict[str, Any] = {"cpu": str(draw(st.integers(1, 16)))}
        if draw(st.booleans()):
            limits["nvidia.com/gpu"] = draw(st.integers(1, 8))
        if draw(st.booleans()):
            profile = draw(st.sampled_from(PROFILES))
            limits["nvidia.com/mig-" + profile.replace("+", ".")] = draw(st.integers(1, 3))
        containers.append({"name": f"c{i}", "image": "busybox",
                           "resources": {"limits": limits, "requests": {"memory": "1Gi"}}})
    selector = dict(draw(st.lists(st.sampled_from(LABELS), max_size=3, unique_by=lambda x: x[0])))
    spec: dict[str, Any] = {"containers": containers}
    if selector:
        spec["nodeSelector"] = selector
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "w", "namespace": "ns"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}}


_RESOURCE = re.compile(r"^nvidia\.com/(gpu|gpu\.shared|mig-.*)$")


@settings(max_examples=60, deadline=None)
@given(deployments())
def test_conversion_moves_every_gpu_to_a_claim(doc: dict[str, Any]) -> None:
    text = dumps(doc)
    conversion = convert_sources([("w.yaml", "w.yaml", text, [Document("w.yaml", None, doc)])])
    [out] = conversion.files
    [converted] = [d.data for d in read_documents(["-"], stdin=io.StringIO(out.text))]
    assert converted == out.converted[0]           # the YAML written reads back as planned
    containers = converted["spec"]["template"]["spec"]["containers"]
    wanted = sum(1 for c in doc["spec"]["template"]["spec"]["containers"]
                 for k in c["resources"]["limits"] if _RESOURCE.match(k))
    claims = [cl["name"] for c in containers for cl in c["resources"].get("claims", [])]
    assert len(claims) == wanted == len(set(claims))
    pod_claims = converted["spec"]["template"]["spec"].get("resourceClaims", [])
    assert sorted(c["name"] for c in pod_claims) == sorted(claims)
    for c in containers:
        assert not any(_RESOURCE.match(k) for s in ("limits", "requests")
                       for k in c["resources"].get(s, {}))
        assert c["resources"]["requests"] == {"memory": "1Gi"}
    templates = {t.metadata.name for t in conversion.templates}
    assert {c["resourceClaimTemplateName"] for c in pod_claims} == templates
    # converting the result again changes nothing
    again = convert_sources([("w.yaml", "w.yaml", out.text,
                              [Document("w.yaml", None, converted)])])
    assert not again.files[0].changed
