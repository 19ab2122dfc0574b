"""Simulation: event-driven scenarios (``dralab simulate``).

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

Trace replay (the FGD paper's protocol) lives apart, in ``dralab.replay``.
"""
