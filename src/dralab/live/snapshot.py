"""``dralab snapshot``: what a read returned, as multi-document YAML.

Every object as the server sent it (server-set fields such as uid, resourceVersion,
managedFields and status kept), with the ``apiVersion`` and ``kind`` its list gave it,
in the read's order (kind by kind as ``RESOURCES`` lists them, then namespace and name),
so that ``dralab VERB -f snapshot.yaml`` reads exactly the objects ``dralab VERB
--kubeconfig ...`` read, in the same order. Keys are sorted as in every dralab output.
"""

from __future__ import annotations

from dralab.api.io import dumps

from .read import ClusterRead


def _plain(text: str) -> str:
    # A context name comes from a kubeconfig: one line, so it cannot end the comment.
    return " ".join(text.split())


def snapshot_text(read: ClusterRead) -> str:
    """A comment naming the context and server, then one YAML document per object."""
    count = len(read.documents)
    header = (f"# dralab snapshot of context {_plain(read.context)} ({_plain(read.server)}): "
              f"{count} object{'' if count == 1 else 's'}\n")
    return header + "---\n".join(dumps(doc.data, "yaml") for doc in read.documents)
