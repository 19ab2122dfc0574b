"""The one error a live-cluster read raises: a one-line message, exit status 2."""

from __future__ import annotations

from dralab.api.errors import InputError

RBAC_EXAMPLE = "examples/rbac/dralab-readonly.yaml"


class ClusterError(InputError):
    """The cluster could not be read: configuration, connection, credentials, RBAC.

    An ``InputError`` so the CLI reports it as every bad input (one line, exit 2):
    the cluster is the verb's input.
    """
