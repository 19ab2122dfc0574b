"""A live cluster plus files: the files' objects replace the cluster's of the same identity.

``dralab schedule --context prod -f new-job.yaml`` asks "what if these objects were
applied": an object of the files with the same API group, kind, namespace and name as
one of the cluster's stands in for it, in its place (any version of the group:
``v1beta2`` and ``v1`` of a kind are one object); every other file object is added
after the cluster's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dralab.api.io import Document
from dralab.api.kindcount import api_group

# (API group, kind, namespace, name)
ObjectIdentity = tuple[str, str, str, str]


def object_identity(data: Any) -> ObjectIdentity | None:
    """Who ``data`` is, as the API server tells objects apart; None without a name.

    An object written without a namespace is in "default", as dralab reads files (a
    cluster-scoped object has none on either side, so it compares equal all the same).
    """
    if not isinstance(data, dict):
        return None
    api_version, kind, meta = data.get("apiVersion"), data.get("kind"), data.get("metadata")
    if not isinstance(api_version, str) or not isinstance(kind, str) \
            or not isinstance(meta, dict):
        return None
    name, namespace = meta.get("name"), meta.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    ns = namespace if isinstance(namespace, str) and namespace else "default"
    return api_group(api_version), kind, ns, name


def merge_documents(cluster: Sequence[Document], files: Sequence[Document]) -> list[Document]:
    """The cluster's documents, each replaced in its place by the first file object of the
    same identity, then the files' other objects in their order.

    In place, as ``kubectl apply`` changes an object that exists (and as dralab reads an
    object given twice: the later copy in the first copy's place), so that reading a
    cluster with files equals reading ``dralab snapshot``'s file followed by the files.
    A second file object of one identity stays among the files: the verb names both.
    """
    first: dict[ObjectIdentity, int] = {}
    for index, doc in enumerate(files):
        key = object_identity(doc.data)
        if key is not None:
            first.setdefault(key, index)
    used: set[int] = set()
    merged: list[Document] = []
    for doc in cluster:
        key = object_identity(doc.data)
        replacement = first.get(key) if key is not None else None
        if replacement is None or replacement in used:
            merged.append(doc)
        else:
            used.add(replacement)
            merged.append(files[replacement])
    return [*merged, *(doc for n, doc in enumerate(files) if n not in used)]
