"""``dralab import``: bring what a real cluster publishes to the current object shapes."""

from __future__ import annotations

from typing import Any

import click

from dralab.api.base import KubeObject
from dralab.api.codec import DecodeError, decode, encode
from dralab.api.core import Node
from dralab.api.errors import LoadError
from dralab.api.io import Document, dumps, to_list
from dralab.api.resource import ResourceSlice
from dralab.api.versions import from_v1
from dralab.fleet import import_slices, upgrade_slice_document
from dralab.fleet.nvlink import nodes_by_domain

from .common import one_line_errors, output_option
from .kinds import IMPORT, use_kinds
from .sources import LIVE_HELP, source_options, sources


@click.command("import", epilog=LIVE_HELP)
@source_options
@output_option
@one_line_errors
def import_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
               output: str) -> None:
    """Normalise `kubectl get resourceslices,deviceclasses,nodes -o yaml` output.

    ResourceSlices of any served API version (v1beta1, v1beta2, v1; v1alpha3 of
    1.31-1.33 clusters) and of older NVIDIA driver releases (old attribute and
    MIG device names) become current v1 slices; other objects are checked for
    their types and pass through in their own API version (a v1beta1 claim stays
    v1beta1). Prints a v1 List; each rewritten slice is reported on stderr, and so is
    each multi-node NVLink domain (nodes sharing an nvidia.com/gpu.clique label, which
    is kept). Exit 2 on invalid input or a live cluster that cannot be read.
    """
    docs = use_kinds(sources(filenames, kubeconfig, context).read(), IMPORT)
    decoded = [_decode(d, upgrade_slice_document(d.data) if _is_slice(d) else d.data)
               for d in docs]
    result = import_slices(o for o in decoded if isinstance(o, ResourceSlice))
    slices = iter(result.slices)
    objects: list[KubeObject | dict[str, Any]] = []
    for doc, obj in zip(docs, decoded, strict=True):
        if isinstance(obj, ResourceSlice):
            objects.append(next(slices))
            continue
        version = doc.data.get("apiVersion") if isinstance(doc.data, dict) else None
        if isinstance(version, str) and version != obj.api_version:
            # Decoded into v1; written back in the version it was given in.
            objects.append(from_v1(encode(obj), version))
        else:
            objects.append(obj)
    click.echo(dumps(to_list(objects), output), nl=False)
    for line in result.changes:
        click.echo(f"imported {line}", err=True)
    domains = nodes_by_domain((o.name, o.metadata.labels or {}) for o in decoded
                              if isinstance(o, Node))
    for clique, names in domains.items():
        span = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}"
        click.echo(f"NVLink domain {clique}: {len(names)} node(s), {span}", err=True)


def _is_slice(doc: Document) -> bool:
    return isinstance(doc.data, dict) and doc.data.get("kind") == "ResourceSlice"


def _decode(doc: Document, data: Any) -> KubeObject:
    try:
        return decode(data)
    except DecodeError as exc:
        raise LoadError(f"{doc.describe()}: {exc}") from None
