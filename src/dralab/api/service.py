"""core/v1 Service, as far as the scheduler reads it: the label selector.

kube-scheduler reads Services for one thing: PodTopologySpread's default constraints take
the selectors of the Services that select a pod (helper.DefaultSelector). Everything else
of a Service (ports, clusterIP, type, status) is carried in ``raw`` and written back
unchanged.
"""

from __future__ import annotations

from typing import ClassVar

from .base import KubeObject, Spec

__all__ = ["Service", "ServiceSpec"]


class ServiceSpec(Spec, frozen=True):
    """``selector``: None (unset) selects no pod; the API server stores an empty map as
    unset too."""

    selector: dict[str, str] | None = None


class Service(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Service"
    NAMESPACED: ClassVar[bool] = True

    spec: ServiceSpec = ServiceSpec()
