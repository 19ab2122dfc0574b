"""In-tree scheduler plugins, one module each (kube-scheduler's names and messages).

Modules are imported by ``registry.default_registry`` (beside them); nothing
here registers itself.
"""
