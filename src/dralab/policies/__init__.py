"""Pure placement-policy kernels: the six policies of the FGD paper, and ours (FGD-FS).

Each policy scores one pod against nodes of a compact numeric cluster state
(``NodeArrays``) and chooses GPUs inside the winning node; see ``base`` for the
contract. Kernels know nothing of the scheduler framework, the trace or the
replay, so an engine can wrap any of them as a Score plugin (node choice) plus a
device-choice policy for the DynamicResources plugin.
"""

from .base import MAX_SCORE, Policy, PolicyVerdict
from .bestfit import BestFitPolicy
from .clustering import GpuClusteringPolicy
from .dotprod import DotProdPolicy
from .fgd import FgdPolicy, fgd_score
from .fgdfs import FgdFsPolicy
from .frag import (
    Shape,
    TargetWorkload,
    fill_fragmentation,
    fragmentation,
    node_fill_fragmentation,
    node_fragmentation,
)
from .packing import GpuPackingPolicy
from .randompick import RandomPolicy
from .registry import PAPER_POLICIES, POLICIES, PolicyContext, make_policy
from .scarcity import Scarcity
from .state import GPU_MILLI, MAX_GPUS, NodeArrays, PodDemand, PolicyNode, gpu_class

__all__ = [
    "GPU_MILLI",
    "MAX_GPUS",
    "MAX_SCORE",
    "PAPER_POLICIES",
    "POLICIES",
    "BestFitPolicy",
    "DotProdPolicy",
    "FgdFsPolicy",
    "FgdPolicy",
    "GpuClusteringPolicy",
    "GpuPackingPolicy",
    "NodeArrays",
    "PodDemand",
    "Policy",
    "PolicyContext",
    "PolicyNode",
    "PolicyVerdict",
    "RandomPolicy",
    "Scarcity",
    "Shape",
    "TargetWorkload",
    "fgd_score",
    "fill_fragmentation",
    "fragmentation",
    "gpu_class",
    "make_policy",
    "node_fill_fragmentation",
    "node_fragmentation",
]
