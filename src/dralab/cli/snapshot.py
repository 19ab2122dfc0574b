"""``dralab snapshot``: save what dralab reads of a live cluster, to reproduce a run offline."""

from __future__ import annotations

import os

import click

from dralab.api.errors import InputError
from dralab.api.io import write_atomic
from dralab.live import read_cluster, snapshot_text

from .common import check_output_location, one_line_errors, signals_deferred
from .sources import cluster_options, sources


@click.command("snapshot")
@cluster_options
@click.option("-o", "--output", "out", required=True, metavar="FILE|-",
              help="Where to write the snapshot (replaced atomically), or - for stdout. "
                   "Never the kubeconfig or a file it names.")
@one_line_errors
def snapshot_cmd(kubeconfig: str | None, context: str | None, out: str) -> None:
    """Read a live cluster as every verb does and write exactly what was read.

    Every object of every kind dralab models (Nodes, Pods, Namespaces,
    PriorityClasses, resource.k8s.io, scheduling.k8s.io workloads, apps and batch
    workloads, Kueue's objects when its CRDs are installed), in the version the
    server serves, as multi-document YAML: server-set fields (uid, resourceVersion,
    managedFields, status) kept, kinds in a fixed order, then namespace and name.
    `dralab VERB -f FILE` then gives the answer `dralab VERB --kubeconfig ...` gave
    when the snapshot was taken.

    The cluster: --kubeconfig, --context, else KUBECONFIG, ~/.kube/config or the
    in-cluster service account, as kubectl picks it; only get and list requests are
    made (the RBAC it needs: examples/rbac/dralab-readonly.yaml).

    Exit 0 when written; 2 on a usage error, an output that cannot be written, or a
    cluster that cannot be read (no kubeconfig, unknown context, unreachable server,
    expired credentials, forbidden), in one line.
    """
    inputs = sources((), kubeconfig, context)
    assert inputs.cluster is not None  # no -f: the cluster is always read
    if out != "-":
        check_output_location("-o/--output", out, inputs.paths)
        if os.path.isdir(out):
            raise InputError(f"-o/--output {out}: is a directory; name the file to write")
    read = read_cluster(inputs.cluster)
    text = snapshot_text(read)
    kinds = len({(d.data.get("apiVersion"), d.data.get("kind")) for d in read.documents})
    summary = (f"read {len(read.documents)} object(s) of {kinds} kind(s) from context "
               f"{read.context} ({read.server})")
    if out == "-":
        click.echo(text, nl=False)
        click.echo(summary, err=True)
        return
    try:
        with signals_deferred():
            write_atomic(out, text)
    except OSError as exc:
        raise InputError(f"-o/--output {out}: cannot write it: {exc.strerror or exc}") from None
    click.echo(f"{summary}; wrote {out}")
