"""Pod-template carriers: batch/v1 Job and CronJob, apps/v1 Deployment, StatefulSet,
ReplicaSet and DaemonSet. Modelled far enough to expand them into pods."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import KubeObject, Spec
from .core import PodTemplateSpec

__all__ = [
    "CronJob",
    "CronJobSpec",
    "DaemonSet",
    "DaemonSetSpec",
    "Deployment",
    "DeploymentSpec",
    "Job",
    "JobSpec",
    "JobTemplateSpec",
    "ReplicaSet",
    "StatefulSet",
    "StatefulSetSpec",
]


class JobSpec(Spec, frozen=True):
    parallelism: int | None = None
    completions: int | None = None
    completion_mode: str | None = None
    backoff_limit: int | None = None
    suspend: bool | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class Job(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "batch/v1"
    KIND: ClassVar[str] = "Job"
    NAMESPACED: ClassVar[bool] = True

    spec: JobSpec = JobSpec()


class JobTemplateSpec(Spec, frozen=True):
    metadata: dict[str, Any] = {}
    spec: JobSpec = JobSpec()


class CronJobSpec(Spec, frozen=True):
    schedule: str = ""
    suspend: bool | None = None
    job_template: JobTemplateSpec = JobTemplateSpec()


class CronJob(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "batch/v1"
    KIND: ClassVar[str] = "CronJob"
    NAMESPACED: ClassVar[bool] = True

    spec: CronJobSpec = CronJobSpec()


class DeploymentSpec(Spec, frozen=True):
    """Also the shape of a ReplicaSet's spec (replicas, selector, template)."""

    replicas: int | None = None
    selector: dict[str, Any] | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class Deployment(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "apps/v1"
    KIND: ClassVar[str] = "Deployment"
    NAMESPACED: ClassVar[bool] = True

    spec: DeploymentSpec = DeploymentSpec()


class ReplicaSet(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "apps/v1"
    KIND: ClassVar[str] = "ReplicaSet"
    NAMESPACED: ClassVar[bool] = True

    spec: DeploymentSpec = DeploymentSpec()


class StatefulSetSpec(Spec, frozen=True):
    replicas: int | None = None
    service_name: str | None = None
    selector: dict[str, Any] | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class StatefulSet(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "apps/v1"
    KIND: ClassVar[str] = "StatefulSet"
    NAMESPACED: ClassVar[bool] = True

    spec: StatefulSetSpec = StatefulSetSpec()


class DaemonSetSpec(Spec, frozen=True):
    selector: dict[str, Any] | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class DaemonSet(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = "apps/v1"
    KIND: ClassVar[str] = "DaemonSet"
    NAMESPACED: ClassVar[bool] = True

    spec: DaemonSetSpec = DaemonSetSpec()
