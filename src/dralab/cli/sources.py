"""Where a verb's objects come from: files (``-f``), a live cluster, or both.

kubectl's rules: ``--kubeconfig PATH`` and ``--context NAME`` pick the cluster (else
``KUBECONFIG``, ``~/.kube/config``, the in-cluster service account). A verb reads the
live cluster when either flag is given or when no ``-f`` is (``dralab schedule``
alone schedules the current context's pending pods); ``-f`` alone reads only files, as
before. ``-f`` with a cluster flag reads both: a file object with the same API group,
kind, namespace and name replaces the cluster's (``dralab.live.merge``), the others are
added. The cluster's documents are named ``cluster CONTEXT:N`` in messages, N being the
object's place in the read (and in ``dralab snapshot``'s file), and go through the same
validation, Fleet expansion and unused-kind warnings as file documents.

Every live-cluster problem (no kubeconfig, unknown context, unreachable server, TLS,
expired credentials, RBAC, a missing API group) is one ``error:`` line and exit 2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from dralab.api.io import Document
from dralab.live import ClusterConfig, load_cluster_config, merge_documents, read_cluster

from .common import read_inputs, remember_inputs

F = TypeVar("F", bound=Callable[..., Any])

# The help epilog of every verb that reads a live cluster.
LIVE_HELP = (
    "Live cluster: with --kubeconfig or --context, or without -f, the objects are read "
    "from the cluster (kubectl's rules: KUBECONFIG, ~/.kube/config, in-cluster service "
    "account; get and list only; the RBAC it needs: examples/rbac/dralab-readonly.yaml). "
    "-f with a cluster flag: the cluster's objects plus the files'; a file object with "
    "the same API group, kind, namespace and name replaces the cluster's. Exit 2 when the "
    "cluster cannot be read (no kubeconfig, unknown context, unreachable server, expired "
    "credentials, forbidden, missing CRDs), in one line.")


def cluster_options(func: F) -> F:
    """``--kubeconfig PATH`` and ``--context NAME``, as kubectl spells them."""
    func = click.option(
        "--context", "context", default=None, metavar="NAME",
        help="The kubeconfig context to read (default: its current-context).")(func)
    return click.option(
        "--kubeconfig", "kubeconfig", default=None, metavar="PATH",
        help="The kubeconfig file of the cluster to read (default: KUBECONFIG, "
             "~/.kube/config, in-cluster config).")(func)


def source_options(func: F) -> F:
    """``-f`` (optional: without it the live cluster is read) and the cluster options."""
    func = cluster_options(func)
    return click.option(
        "-f", "--filename", "filenames", multiple=True, metavar="FILE|DIR|-",
        help="Manifests to read: files, directories (recursive) or - for stdin. Repeatable. "
             "Without -f: the live cluster of the current context.")(func)


@dataclass(frozen=True, slots=True)
class Sources:
    """A verb's inputs: its files and, when it reads one, the live cluster."""

    filenames: tuple[str, ...]
    cluster: ClusterConfig | None

    @property
    def paths(self) -> list[str]:
        """Every local file read, for the checks that keep outputs apart from inputs: the
        manifests and, for a cluster, its kubeconfig and certificate files."""
        return [*self.filenames, *(self.cluster.files if self.cluster is not None else ())]

    @property
    def name(self) -> str:
        """The inputs as messages name them: ``FILE,FILE`` and ``cluster CONTEXT``."""
        names = list(self.filenames)
        if self.cluster is not None:
            names.append(f"cluster {self.cluster.context}")
        return ",".join(names)

    def read(self, require_groups: tuple[str, ...] = (),
             reader: Callable[[tuple[str, ...]], list[Document]] = read_inputs
             ) -> list[Document]:
        """The files' documents, laid over the cluster's when there is one.
        ``require_groups``: API groups the cluster must serve (only when no file is
        given: files may bring the objects the cluster lacks). ``reader``: how the
        files are read (``read_inputs``; dralab migrate skips unrendered templates)."""
        files = reader(self.filenames) if self.filenames else []
        if self.cluster is None:
            return files
        read = read_cluster(self.cluster, require_groups=() if self.filenames
                            else require_groups)
        remember_inputs(read.documents)
        return merge_documents(read.documents, files)

    def namespace(self, target: str, namespace: str | None) -> str | None:
        """``-n`` as given; without it, for a bare NAME, the context's namespace when it
        names one (kubectl looks a name up there). NAMESPACE/NAME forms are unchanged."""
        if namespace is not None or self.cluster is None or "/" in target:
            return namespace
        return self.cluster.namespace


def sources(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
            *, cluster_without_files: bool = True) -> Sources:
    """The inputs of a verb: the cluster is read with a cluster flag, or without ``-f``
    when ``cluster_without_files``. Resolves the kubeconfig now (ClusterError, exit 2),
    so that output checks can name its files; nothing is fetched until ``read``."""
    live = kubeconfig is not None or context is not None or (
        not filenames and cluster_without_files)
    return Sources(tuple(filenames),
                   load_cluster_config(kubeconfig, context) if live else None)
