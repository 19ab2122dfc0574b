"""dralab: an engine and simulator for GPU scheduling with Kubernetes DRA."""
__version__ = "0.1.0"
