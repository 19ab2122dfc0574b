"""Simulation: event-driven scenarios, and replay of the Alibaba GPU trace 2023.

Scenarios (``dralab simulate``), bottom up:

* ``dralab.sim.spec`` / ``dralab.sim.scenario``: the Scenario document and its checks;
  ``dralab.sim.templates``, ``dralab.sim.devplugin`` and ``dralab.sim.kinds``: job
  kinds whose template is a real manifest (read once at load, with its claim
  templates; translated into extended resources for device-plugin mode).
* ``dralab.sim.model``: the typed scenario (seconds, rates, Quantities, device
  requests, node changes), built once when a scenario loads; ``dralab.sim.growth``:
  nodes that ``add`` events bring from a Fleet pool.
* ``dralab.sim.jobs`` (arrivals, pods), ``dralab.sim.fleets`` (fleet transforms),
  ``dralab.sim.modes`` (DRA and device-plugin as Mode objects),
  ``dralab.sim.observe`` (metrics and GPU accounting).
* ``dralab.sim.engine`` (clock, heap, stage order), ``dralab.sim.stages`` (node
  lifecycle, completion, job controller, scheduling, sampling: one verb each) and
  ``dralab.sim.simulate`` (wires one run per mode).

Trace replay (the FGD paper's protocol), bottom up:

* ``dralab.sim.trace``: reading the trace CSVs into compact records, and turning
  records into real API objects (Nodes, ResourceSlices, Pods, ResourceClaims).
* ``dralab.sim.protocol``: the protocol's random draws (pod order, inflation to
  130 %, node tie-break order) and the target workload distribution M.
* ``dralab.sim.replay``: one run of one policy on one seed, and the summary table;
  ``dralab.sim.curves`` bins per-event metrics; ``dralab.sim.replay_grid`` runs
  many (workload, policy, seed) cells over worker processes.
* ``dralab.sim.bounds``: what an offline packer could do (bounds to compare with).

Replay policies live in ``dralab.scheduler.policies``; they never know they are
being replayed.
"""
