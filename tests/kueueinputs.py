"""Small Kueue inputs that the queueing, count-cap and fuzz tests share: one queue on one
flavor, and cohort chains with or without a cycle (issue 29's shapes)."""

from __future__ import annotations


def one_queue(quota: str = "10", cohort: str | None = None) -> str:
    """ClusterQueue ``q`` (``quota`` cpu on flavor ``f``, in ``cohort`` if given), the
    ResourceFlavor ``f`` and the LocalQueue ``default/lq``: three YAML documents, ending
    with a newline and no separator."""
    member = f"  cohort: {cohort}\n" if cohort else ""
    return f"""apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: q}}
spec:
{member}  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - {{name: cpu, nominalQuota: "{quota}"}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: f}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: lq, namespace: default}}
spec: {{clusterQueue: q}}
"""


def cohort_chain(n: int, cycle: bool) -> str:
    """Cohorts c0 -> c1 -> ... -> c(n-1) by ``spec.parentName``; with ``cycle`` the last
    one's parent is c0 again (n = 1: a cohort that is its own parent)."""
    docs = []
    for i in range(n):
        parent = f"c{i + 1}" if i + 1 < n else ("c0" if cycle else None)
        doc = f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {{name: c{i}}}\n"
        docs.append(doc + (f"spec: {{parentName: {parent}}}\n" if parent else ""))
    return "---\n".join(docs)
