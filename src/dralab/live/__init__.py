"""Live clusters in: read a Kubernetes API server (only get/list) into dralab's documents.

The room between ``report`` and ``cli``: ``load_cluster_config`` resolves kubectl's
configuration (``--kubeconfig``, ``--context``, ``KUBECONFIG``, in-cluster),
``read_cluster`` lists every kind dralab models in a version the server serves and
returns ``Document``s, the same objects the file readers produce, so verbs treat a
cluster's objects as file objects. Every failure is a ``ClusterError`` (one line).
"""

from __future__ import annotations

from .client import ReadOnlyClient
from .config import ClusterConfig, load_cluster_config
from .errors import RBAC_EXAMPLE, ClusterError
from .read import KUEUE_GROUP, RESOURCES, ClusterRead, Resource, read_cluster

__all__ = [
    "KUEUE_GROUP", "RBAC_EXAMPLE", "RESOURCES", "ClusterConfig", "ClusterError", "ClusterRead",
    "ReadOnlyClient", "Resource", "load_cluster_config", "read_cluster",
]
