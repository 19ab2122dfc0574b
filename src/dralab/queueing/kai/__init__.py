"""KAI Scheduler's policy (NVIDIA/KAI-Scheduler): hierarchical queues with deserved
quota and over-quota weight, a session of actions (allocate, consolidation, reclaim,
preempt, stale-gang eviction), gangs through PodGroups, binpack/spread placement and
fractional GPUs. ``model`` holds the values; the rest reads and decides on them.
"""
