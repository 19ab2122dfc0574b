"""``dralab import``: bring what a real cluster publishes to the current object shapes."""

from __future__ import annotations

from typing import Any

import click

from dralab.api.base import KubeObject
from dralab.api.codec import decode, encode
from dralab.api.io import dumps, read_documents, to_list
from dralab.api.versions import from_v1
from dralab.fleet import import_slices

from .common import filename_option, one_line_errors, output_option


@click.command("import")
@filename_option
@output_option
@one_line_errors
def import_cmd(filenames: tuple[str, ...], output: str) -> None:
    """Normalise `kubectl get resourceslices,deviceclasses,nodes -o yaml` output.

    ResourceSlices of any served API version (v1beta1, v1beta2, v1; v1alpha3 of
    1.31-1.33 clusters) and of older NVIDIA driver releases (old attribute and
    MIG device names) become current v1 slices; other objects are checked for
    their types and pass through in their own API version (a v1beta1 claim stays
    v1beta1). Prints a v1 List; each rewritten slice is reported on stderr.
    """
    docs = read_documents(filenames)
    result = import_slices(d.data for d in docs if isinstance(d.data, dict)
                           and d.data.get("kind") == "ResourceSlice")
    slices = iter(result.slices)
    objects: list[KubeObject | dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc.data, dict) and doc.data.get("kind") == "ResourceSlice":
            objects.append(next(slices))
            continue
        obj = decode(doc.data)
        version = doc.data.get("apiVersion") if isinstance(doc.data, dict) else None
        if isinstance(version, str) and version != obj.api_version:
            # Decoded into v1; written back in the version it was given in.
            objects.append(from_v1(encode(obj), version))
        else:
            objects.append(obj)
    click.echo(dumps(to_list(objects), output), nl=False)
    for line in result.changes:
        click.echo(f"imported {line}", err=True)
