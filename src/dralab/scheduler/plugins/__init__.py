"""In-tree scheduler plugins, one module each (kube-scheduler's names and messages).

Modules are imported by ``dralab.scheduler.registry.default_registry``; nothing
here registers itself.
"""
