"""Queueing and admission above the scheduler: Kueue's semantics (quota, cohorts,
borrowing and lending, preemption, fair sharing), gangs and topology-aware placement.

* ``model``: the plain values admission works on (ClusterQueues, cohorts, flavors,
  workloads with their pod sets and resource totals), independent of the API
  objects they come from; a second policy (KAI's hierarchical queues) plugs in on
  the same model.
"""
