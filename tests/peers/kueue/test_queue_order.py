"""Kueue's queue-order time through ``dralab admit`` (kubernetes-sigs/kueue ff69552e,
pkg/workload/workload.go, Ordering.GetQueueOrderTimestamp): a Workload evicted by the
waitForPodsReady timeout queues by the eviction's time, unless the Configuration's
``waitForPodsReady.requeuingStrategy.timestamp`` is ``Creation``; one evicted by an
admission check always by the eviction's time. The ordering rules themselves are ported
in test_scheduler.py (TestEntryOrdering)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

_INPUT = """
%s
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "2"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: requeued, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
status:
  conditions:
  - {type: Evicted, status: "True", reason: %s, message: m,
     lastTransitionTime: "2026-01-01T00:10:00Z"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: waiting, namespace: ns, creationTimestamp: "2026-01-01T00:05:00Z"}
spec:
  queueName: q
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
"""

_CREATION = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: 5m, requeuingStrategy: {timestamp: Creation}}
---"""


@pytest.mark.parametrize(("config", "reason", "admitted"), [
    ("", "PodsReadyTimeout", "waiting"),          # queued again at 00:10, after 00:05
    (_CREATION, "PodsReadyTimeout", "requeued"),  # by creation: 00:00 first
    (_CREATION, "AdmissionCheck", "waiting"),     # an admission check's eviction: always
    ("", "Preempted", "requeued"),                # other evictions: by creation
])
def test_evicted_workload_queues_by_eviction_time(tmp_path: Path, config: str, reason: str,
                                                  admitted: str) -> None:
    snapshot = tmp_path / "in.yaml"
    snapshot.write_text(_INPUT % (config, reason))
    result = CliRunner().invoke(cli, ["admit", "-f", str(snapshot), "--cycles", "1"])
    assert result.exit_code == 1, result.output  # one workload stays pending
    got = [i["metadata"]["name"] for i in yaml.safe_load(result.stdout)["items"]
           if i["kind"] == "Workload" and (i.get("status") or {}).get("admission")]
    assert got == [admitted]
