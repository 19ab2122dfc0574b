"""Trace-driven simulation: the Alibaba GPU trace 2023 and the FGD paper's replay protocol.

Layers, bottom up:

* ``dralab.sim.trace``: reading the trace CSVs into compact records, and turning
  records into real API objects (Nodes, ResourceSlices, Pods, ResourceClaims).
* ``dralab.sim.workload``: the protocol's pod order (shuffle, inflate to 130 %)
  and the target workload distribution M.
* ``dralab.sim.replay``: one run of one policy on one seed, and the summary table.
* ``dralab.sim.bounds``: what an offline packer could do (bounds to compare with).

Policies themselves live in ``dralab.scheduler.policies``; they never know
they are being replayed.
"""
