"""Live clusters in: read a Kubernetes API server (only get/list) into dralab's documents.

The room between ``report`` and ``cli``: ``load_cluster_config`` resolves kubectl's
configuration (``--kubeconfig``, ``--context``, ``KUBECONFIG``, in-cluster),
``read_cluster`` lists every kind dralab models in a version the server serves and
returns ``Document``s, the same objects the file readers produce, so verbs treat a
cluster's objects as file objects; ``merge_documents`` lays files over a cluster and
``snapshot_text`` writes a read back out. Every failure is a ``ClusterError`` (one line).
"""

from __future__ import annotations

from .client import ReadOnlyClient
from .config import ClusterConfig, load_cluster_config
from .errors import RBAC_EXAMPLE, ClusterError
from .merge import merge_documents, object_identity
from .read import KUEUE_GROUP, RESOURCES, ClusterRead, Resource, read_cluster
from .snapshot import snapshot_text

__all__ = [
    "KUEUE_GROUP", "RBAC_EXAMPLE", "RESOURCES", "ClusterConfig", "ClusterError", "ClusterRead",
    "ReadOnlyClient", "Resource", "load_cluster_config", "merge_documents", "object_identity",
    "read_cluster", "snapshot_text",
]
