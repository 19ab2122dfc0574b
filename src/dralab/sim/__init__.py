"""Simulation: event-driven scenarios (``dralab simulate``).

Scenarios (``dralab simulate``), bottom up:

* ``dralab.sim.spec`` / ``dralab.sim.scenario``: the Scenario document and its checks;
  ``dralab.sim.templates``, ``dralab.sim.devplugin`` and ``dralab.sim.kinds``: job
  kinds whose template is a real manifest (read once at load, with its claim
  templates; translated into extended resources for device-plugin mode).
* ``dralab.sim.jobs`` (arrivals, pods), ``dralab.sim.fleets`` (the fleet per mode),
  ``dralab.sim.simulate`` (the event loop per mode), ``dralab.sim.observe`` (metrics).

Trace replay (the FGD paper's protocol) lives apart, in ``dralab.replay``.
"""
