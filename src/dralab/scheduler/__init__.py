"""A kube-scheduler-style scheduling framework for pods with DRA claims."""
