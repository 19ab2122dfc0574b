"""``dralab import``: bring what a real cluster publishes to the current object shapes."""

from __future__ import annotations

import click

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.io import dumps, read_documents, to_list
from dralab.fleet import import_slices

from .common import filename_option, one_line_errors, output_option


@click.command("import")
@filename_option
@output_option
@one_line_errors
def import_cmd(filenames: tuple[str, ...], output: str) -> None:
    """Normalise `kubectl get resourceslices,deviceclasses,nodes -o yaml` output.

    ResourceSlices of any served API version (v1alpha3, v1beta1, v1beta2, v1) and
    of older NVIDIA driver releases (old attribute and MIG device names) become
    current v1 slices; other objects pass through unchanged. Prints a v1 List;
    each rewritten slice is reported on stderr.
    """
    docs = read_documents(filenames)
    result = import_slices(d.data for d in docs if isinstance(d.data, dict)
                           and d.data.get("kind") == "ResourceSlice")
    slices = iter(result.slices)
    objects: list[KubeObject] = []
    for doc in docs:
        if isinstance(doc.data, dict) and doc.data.get("kind") == "ResourceSlice":
            objects.append(next(slices))
        else:
            objects.append(decode(doc.data))
    click.echo(dumps(to_list(objects), output), nl=False)
    for line in result.changes:
        click.echo(f"imported {line}", err=True)
