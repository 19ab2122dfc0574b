"""The structured-parameters DRA allocator, with Kubernetes 1.37 semantics.

``allocate(claims, node, objects)`` answers one question: can these claims
of one pod get devices on this node, and which? The answer is an
``AllocationOutcome``: ``Allocated`` (new claims with ``status.allocation``),
``Unschedulable`` (with per-request explanations) or ``AllocationError``
(input upstream rejects with an error). "Does not fit" is never an exception.

For many questions over the same cluster build the pieces once:
``SliceIndex`` (slices and taint rules), ``AllocatedState`` (devices in use,
updated incrementally) and an ``Allocator`` on top of them.
"""

from .engine import Allocator, allocate
from .features import AllocatorFeatures
from .index import SliceIndex
from .nodes import NodeView
from .outcome import Allocated, AllocationError, AllocationOutcome, Unschedulable
from .state import AllocatedState

__all__ = [
    "Allocated",
    "AllocatedState",
    "AllocationError",
    "AllocationOutcome",
    "Allocator",
    "AllocatorFeatures",
    "NodeView",
    "SliceIndex",
    "Unschedulable",
    "allocate",
]
