"""The DynamicResources plugin (DRA) and the views it keeps of the cluster's devices.

* ``plugin``: the plugin's extension points (PreEnqueue to PostBind, preemption).
* ``view``: per-node allocation outcomes, cached across pods (``AllocatorCache``).
* ``state``: one pod's cycle state (its claims, what each node gave).
* ``devicepolicy``: the order in which a node's devices are tried.
* ``extended``: extended resources backed by DRA devices (gate DRAExtendedResource).
"""

from __future__ import annotations

from .plugin import NAME, DynamicResources

__all__ = ["NAME", "DynamicResources"]
