"""Replay of the Alibaba GPU trace 2023 under the FGD paper's protocol (``dralab replay``).

Apart from the event simulator (``dralab.sim``): a replay places the trace's pods
one by one with a node-choice policy and measures fragmentation, no clock, no queue.

Modules, bottom up:

* ``dralab.replay.trace``: reading the trace CSVs into compact records, and turning
  records into real API objects (Nodes, ResourceSlices, Pods, ResourceClaims).
* ``dralab.replay.protocol``: the protocol's random draws (pod order, inflation to
  130 %, node tie-break order) and the target workload distribution M.
* ``dralab.replay.run``: one run of one policy on one seed, and the summary table;
  ``dralab.replay.curves`` bins per-event metrics; ``dralab.replay.grid`` runs
  many (workload, policy, seed) cells over worker processes.
* ``dralab.replay.runs``: replay grids as plain data (one picklable task per workload,
  policy and seed) and their summary; ``dralab.replay.paper``: the paper's published figures.
* ``dralab.replay.bounds``: what an offline packer could do (bounds to compare with).

Replay policies live in ``dralab.policies``; they never know they are
being replayed.
"""
