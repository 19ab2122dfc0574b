"""apps/v1 and batch/v1 workloads: their own fields plus the embedded pod template."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dralab.validation._context import Ctx, child
from dralab.validation._cron import cron_problem
from dralab.validation._formats import NameFn, name_is_dns_label, name_is_dns_subdomain
from dralab.validation._meta import (
    check_annotations,
    check_label_selector,
    check_labels,
    check_object_meta,
    label_selector_matches,
    selector_is_empty,
)
from dralab.validation._pod import check_pod_spec

__all__ = [
    "validate_cron_job",
    "validate_daemon_set",
    "validate_deployment",
    "validate_job",
    "validate_replica_set",
    "validate_stateful_set",
]

CRON_JOB_NAME_MAX: Final = 52  # 63 minus the 11 characters of the job-name suffix
MAX_PARALLELISM_FOR_INDEXED_JOB: Final = 100_000
_ALWAYS: Final = ("Always",)
_JOB_RESTART_POLICIES: Final = ("OnFailure", "Never")


def _non_negative(ctx: Ctx, spec: Mapping[str, Any], field: str, path: str,
                  bits: int = 32) -> int | None:
    value = ctx.as_int(spec.get(field), child(path, field), bits=bits)
    if value is not None and value < 0:
        ctx.invalid(child(path, field), value, "must be greater than or equal to 0")
    return value


def _spec_of(ctx: Ctx, obj: Mapping[str, Any], path: str = "spec",
             field: str = "spec") -> Mapping[str, Any] | None:
    """The spec map; missing counts as empty, a wrong type as unreadable (None)."""
    spec = ctx.as_map(obj.get(field), path)
    if spec is None and obj.get(field) is not None:
        return None
    return spec or {}


def _check_template(ctx: Ctx, value: Any, path: str, selector: Mapping[str, Any] | None, *,
                    restart_policies: tuple[str, ...], kind: str | None) -> None:
    """A PodTemplateSpec; ``kind`` is set for controllers that forbid activeDeadlineSeconds."""
    template = ctx.as_map(value, path)
    if template is None:
        if value is not None:
            return
        template = {}
    meta_path = child(path, "metadata")
    meta = ctx.as_map(template.get("metadata"), meta_path) or {}
    labels_path = child(meta_path, "labels")
    labels = check_labels(ctx, meta.get("labels"), labels_path)
    if selector is not None and not label_selector_matches(selector, labels):
        ctx.invalid(labels_path, labels, "`selector` does not match template `labels`")
    check_annotations(ctx, meta.get("annotations"), child(meta_path, "annotations"))
    spec_path = child(path, "spec")
    spec = check_pod_spec(ctx, template.get("spec"), spec_path)
    if spec is None:
        return
    policy = spec.get("restartPolicy") if isinstance(spec.get("restartPolicy"), str) else None
    policy = policy or "Always"  # what the API server defaults a missing policy to
    if policy not in restart_policies:
        ctx.not_supported(child(spec_path, "restartPolicy"), policy, restart_policies)
    if kind is not None and spec.get("activeDeadlineSeconds") is not None:
        ctx.forbidden(child(spec_path, "activeDeadlineSeconds"),
                      f"activeDeadlineSeconds in {kind} is not Supported")


def _check_selector(ctx: Ctx, spec: Mapping[str, Any], path: str,
                    kind: str) -> Mapping[str, Any] | None:
    """The required, non-empty selector of apps controllers; returns it if usable."""
    selector_path = child(path, "selector")
    if spec.get("selector") is None:
        ctx.required(selector_path, "")
        return None
    selector = check_label_selector(ctx, spec.get("selector"), selector_path)
    if selector is not None and selector_is_empty(selector):
        ctx.invalid(selector_path, dict(selector), f"empty selector is invalid for {kind}")
        return None
    return selector


def _apps_validator(kind: str, name_fn: NameFn, selector_word: str,
                    extra: Callable[[Ctx, Mapping[str, Any], str], None]) -> Callable[
                        [Ctx, Mapping[str, Any]], None]:
    def validate(ctx: Ctx, obj: Mapping[str, Any]) -> None:
        check_object_meta(ctx, obj.get("metadata"), name_fn, namespaced=True)
        spec = _spec_of(ctx, obj)
        if spec is None:
            return
        extra(ctx, spec, "spec")
        selector = _check_selector(ctx, spec, "spec", selector_word)
        _check_template(ctx, spec.get("template"), "spec.template", selector,
                        restart_policies=_ALWAYS,
                        kind=kind if kind in ("StatefulSet", "DaemonSet") else None)
        _non_negative(ctx, spec, "minReadySeconds", "spec")
        _non_negative(ctx, spec, "revisionHistoryLimit", "spec")
    return validate


def _deployment_fields(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    _non_negative(ctx, spec, "replicas", path)
    strategy = ctx.as_map(spec.get("strategy"), child(path, "strategy")) or {}
    kind = ctx.as_str(strategy.get("type"), child(path, "strategy.type"))
    if kind and kind not in ("Recreate", "RollingUpdate"):
        ctx.not_supported(child(path, "strategy.type"), kind, ("Recreate", "RollingUpdate"))
    deadline = _non_negative(ctx, spec, "progressDeadlineSeconds", path)
    raw_min_ready = spec.get("minReadySeconds")
    min_ready = raw_min_ready if isinstance(raw_min_ready, int) else 0
    if deadline is not None and deadline <= min_ready:
        ctx.invalid(child(path, "progressDeadlineSeconds"), deadline,
                    "must be greater than minReadySeconds")


def _replica_set_fields(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    _non_negative(ctx, spec, "replicas", path)


def _stateful_set_fields(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    policy = ctx.as_str(spec.get("podManagementPolicy"), child(path, "podManagementPolicy"))
    if policy and policy not in ("OrderedReady", "Parallel"):
        ctx.invalid(child(path, "podManagementPolicy"), policy,
                    "must be 'OrderedReady' or 'Parallel'")
    strategy = ctx.as_map(spec.get("updateStrategy"), child(path, "updateStrategy")) or {}
    kind = ctx.as_str(strategy.get("type"), child(path, "updateStrategy.type"))
    if kind and kind not in ("RollingUpdate", "OnDelete"):
        ctx.invalid(child(path, "updateStrategy"), dict(strategy),
                    "must be 'RollingUpdate' or 'OnDelete'")
    _non_negative(ctx, spec, "replicas", path)
    ordinals = ctx.as_map(spec.get("ordinals"), child(path, "ordinals"))
    if ordinals is not None:
        _non_negative(ctx, ordinals, "start", child(path, "ordinals"))


def _daemon_set_fields(ctx: Ctx, spec: Mapping[str, Any], path: str) -> None:
    strategy = ctx.as_map(spec.get("updateStrategy"), child(path, "updateStrategy")) or {}
    kind = ctx.as_str(strategy.get("type"), child(path, "updateStrategy.type"))
    if kind and kind not in ("RollingUpdate", "OnDelete"):
        ctx.not_supported(child(path, "updateStrategy"), kind, ("RollingUpdate", "OnDelete"))


validate_deployment = _apps_validator("Deployment", name_is_dns_subdomain, "deployment",
                                      _deployment_fields)
# ReplicaSets reuse the Deployment wording upstream.
validate_replica_set = _apps_validator("ReplicaSet", name_is_dns_subdomain, "deployment",
                                       _replica_set_fields)
# StatefulSet names become pod host names, hence DNS labels.
validate_stateful_set = _apps_validator("StatefulSet", name_is_dns_label, "statefulset",
                                        _stateful_set_fields)
validate_daemon_set = _apps_validator("DaemonSet", name_is_dns_subdomain, "daemonset",
                                      _daemon_set_fields)


# batch ------------------------------------------------------------------------------------------
_JOB_UID_LABELS: Final = ("batch.kubernetes.io/controller-uid", "controller-uid")
_JOB_NAME_LABELS: Final = ("batch.kubernetes.io/job-name", "job-name")
# Stands for the UID the API server will generate for a Job written without one.
_FUTURE_UID: Final = "\x00generated"


def _check_generated_selector(ctx: Ctx, meta: Mapping[str, Any], spec: Mapping[str, Any],
                              selector: Mapping[str, Any], path: str) -> None:
    """A Job's own selector without ``manualSelector: true``: the API server adds the
    controller-uid term and the selector must then select exactly the generated
    labels (a Job read back from a cluster carries them); template labels it sets
    itself must have the generated values."""
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    uid = meta.get("uid") if isinstance(meta.get("uid"), str) and meta.get("uid") else None
    expected = {k: uid or _FUTURE_UID for k in _JOB_UID_LABELS}
    expected.update({k: name for k in _JOB_NAME_LABELS})
    match_labels = selector.get("matchLabels")
    effective = dict(selector)
    effective["matchLabels"] = {_JOB_UID_LABELS[0]: uid or _FUTURE_UID,
                                **(match_labels if isinstance(match_labels, Mapping) else {})}
    if not label_selector_matches(effective, expected):
        ctx.invalid(child(path, "selector"), spec.get("selector"), "`selector` not auto-generated")
    template = spec.get("template")
    t_meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels = t_meta.get("labels") if isinstance(t_meta, Mapping) else None
    for label, value in expected.items():
        given = labels.get(label) if isinstance(labels, Mapping) else None
        if given is not None and value != _FUTURE_UID and given != value:
            ctx.invalid(f"{path}.template.metadata.labels[{label}]", given,
                        f"must be '{value}'")


def _check_job_spec(ctx: Ctx, spec: Mapping[str, Any], path: str, *, in_template: bool,
                    meta: Mapping[str, Any] | None = None) -> None:
    """A JobSpec; in a CronJob's template the selector is always generated."""
    parallelism = _non_negative(ctx, spec, "parallelism", path)
    completions = _non_negative(ctx, spec, "completions", path)
    _non_negative(ctx, spec, "activeDeadlineSeconds", path, bits=64)
    _non_negative(ctx, spec, "backoffLimit", path)
    _non_negative(ctx, spec, "ttlSecondsAfterFinished", path)
    mode = ctx.as_str(spec.get("completionMode"), child(path, "completionMode"))
    if mode and mode not in ("NonIndexed", "Indexed"):
        ctx.not_supported(child(path, "completionMode"), mode, ("NonIndexed", "Indexed"))
    if mode == "Indexed" and completions is None:
        ctx.required(child(path, "completions"), "when completion mode is Indexed")
    if mode == "Indexed" and parallelism is not None and \
            parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
        # Upstream's bound on the length of status.completedIndexes.
        ctx.invalid(child(path, "parallelism"), parallelism,
                    f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when "
                    "completion mode is Indexed")
    ctx.as_bool(spec.get("suspend"), child(path, "suspend"))
    manual = ctx.as_bool(spec.get("manualSelector"), child(path, "manualSelector"))
    selector = None
    if spec.get("selector") is not None:
        selector = check_label_selector(ctx, spec.get("selector"), child(path, "selector"))
        if in_template:
            ctx.invalid(child(path, "selector"), spec.get("selector"),
                        "`selector` will be auto-generated")
            selector = None
        elif not manual and selector is not None:
            _check_generated_selector(ctx, meta or {}, spec, selector, path)
            selector = None  # the generated template labels complete the match
    _check_template(ctx, spec.get("template"), child(path, "template"), selector,
                    restart_policies=_JOB_RESTART_POLICIES, kind=None)


def validate_job(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    meta = check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    spec = _spec_of(ctx, obj)
    if spec is not None:
        _check_job_spec(ctx, spec, "spec", in_template=False, meta=meta)


def validate_cron_job(ctx: Ctx, obj: Mapping[str, Any]) -> None:
    meta = check_object_meta(ctx, obj.get("metadata"), name_is_dns_subdomain, namespaced=True)
    name = meta.get("name")
    if isinstance(name, str) and len(name) > CRON_JOB_NAME_MAX:
        ctx.invalid("metadata.name", name, f"must be no more than {CRON_JOB_NAME_MAX} characters")
    spec = _spec_of(ctx, obj)
    if spec is None:
        return
    schedule = ctx.as_str(spec.get("schedule"), "spec.schedule")
    if not schedule:
        if spec.get("schedule") is None or schedule == "":
            ctx.required("spec.schedule", "")
    else:
        problem = cron_problem(schedule)
        if problem:
            ctx.invalid("spec.schedule", schedule, problem)
    policy = ctx.as_str(spec.get("concurrencyPolicy"), "spec.concurrencyPolicy")
    if policy and policy not in ("Allow", "Forbid", "Replace"):
        ctx.not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace"))
    _non_negative(ctx, spec, "startingDeadlineSeconds", "spec", bits=64)
    _non_negative(ctx, spec, "successfulJobsHistoryLimit", "spec")
    _non_negative(ctx, spec, "failedJobsHistoryLimit", "spec")
    ctx.as_bool(spec.get("suspend"), "spec.suspend")
    template = ctx.as_map(spec.get("jobTemplate"), "spec.jobTemplate")
    if template is None:
        if spec.get("jobTemplate") is None:
            template = {}
        else:
            return
    meta = ctx.as_map(template.get("metadata"), "spec.jobTemplate.metadata") or {}
    check_labels(ctx, meta.get("labels"), "spec.jobTemplate.metadata.labels")
    check_annotations(ctx, meta.get("annotations"), "spec.jobTemplate.metadata.annotations")
    job_spec = _spec_of(ctx, template, "spec.jobTemplate.spec")
    if job_spec is not None:
        _check_job_spec(ctx, job_spec, "spec.jobTemplate.spec", in_template=True)
