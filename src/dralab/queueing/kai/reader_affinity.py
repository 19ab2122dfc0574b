"""A pod's ``spec.affinity.podAffinity`` / ``podAntiAffinity`` -> ``KaiPodAffinity``.

The KAI session's inter-pod affinity (``plugins/podaffinity.py``) matches a term by its
``matchLabels`` and a list of namespaces. What a pod may write beyond that is turned
into those two where it means the same, within the snapshot:

* a ``matchExpressions`` entry ``key In (value)`` with one value, and a
  ``matchLabelKeys`` key (the API server merges it on create as ``key In (the pod's
  value)``), are ``matchLabels`` entries; two values for one key match no pod;
* a ``namespaceSelector`` selects among the snapshot's Namespace objects, as
  kube-scheduler resolves it through its namespace lister; ``{}`` selects every
  namespace, which for the session is every namespace its pods are in;
* a missing ``labelSelector`` matches no pod, as upstream's ``labels.Nothing()``.

Not modelled, so the term is left out, with a warning naming the pod and the field
path: ``matchExpressions`` with ``NotIn``, ``Exists``, ``DoesNotExist`` or ``In`` with
several values, and a ``mismatchLabelKeys`` key the pod carries (``key NotIn``).
Leaving a term out lets the pod go where KAI might not put it; the warning says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dralab.api.core import Pod
from dralab.scheduler.plugins.podtopologyspread_constraints import parse_selector

from .model import KaiAffinityTerm, KaiPodAffinity

__all__ = ["NO_NAMESPACE", "read_pod_affinity"]

# A namespace no pod is in (a pod's namespace is never empty): the term matches no pod.
NO_NAMESPACE = ""
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class _NotModelled(Exception):
    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path}: {what}")


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _match_labels(term: Mapping[str, Any], pod_labels: Mapping[str, str], path: str
                  ) -> dict[str, str] | None:
    """The term's pod selector as matchLabels; None: it matches no pod."""
    raw = term.get("labelSelector")
    if not isinstance(raw, Mapping) or parse_selector(raw).nothing:
        return None
    labels: dict[str, str] = {}
    wanted: list[tuple[str, str]] = [
        (str(k), str(v)) for k, v in (raw.get("matchLabels") or {}).items()]
    for i, expr in enumerate(_list(raw.get("matchExpressions"))):
        values = _list(expr.get("values"))
        operator = expr.get("operator")
        if operator != "In" or len(values) != 1:
            raise _NotModelled(f"{path}.labelSelector.matchExpressions[{i}]",
                               f"operator In with {len(values)} values" if operator == "In"
                               else f"operator {operator}")
        wanted.append((str(expr.get("key", "")), str(values[0])))
    for key in _list(term.get("matchLabelKeys")):
        if isinstance(key, str) and key in pod_labels:
            wanted.append((key, pod_labels[key]))
    for i, key in enumerate(_list(term.get("mismatchLabelKeys"))):
        if isinstance(key, str) and key in pod_labels:
            raise _NotModelled(f"{path}.mismatchLabelKeys[{i}]", f"{key} NotIn")
    for key, value in wanted:
        if labels.setdefault(key, value) != value:
            return None   # key In (a) and key In (b): no pod has both
    return labels


def _namespaces(term: Mapping[str, Any], own: str,
                namespace_labels: Mapping[str, Mapping[str, str]],
                all_namespaces: Iterable[str]) -> tuple[str, ...]:
    names = {str(n) for n in _list(term.get("namespaces"))}
    raw = term.get("namespaceSelector")
    if raw is None:
        return tuple(sorted(names)) if names else (own,)
    selector = parse_selector(raw)
    if selector.empty:
        names |= set(all_namespaces)
    else:
        names |= {n for n, labels in namespace_labels.items() if selector.matches(labels)}
    return tuple(sorted(names)) or (NO_NAMESPACE,)


def _term(raw: Any, pod: Pod, path: str, weight: int,
          namespace_labels: Mapping[str, Mapping[str, str]],
          all_namespaces: Iterable[str]) -> KaiAffinityTerm | None:
    if not isinstance(raw, Mapping):
        return None
    own = pod.metadata.namespace or "default"
    labels = _match_labels(raw, pod.metadata.labels, path)
    namespaces = _namespaces(raw, own, namespace_labels, all_namespaces) \
        if labels is not None else (NO_NAMESPACE,)
    return KaiAffinityTerm(match_labels=labels or {},
                           topology_key=str(raw.get("topologyKey") or ""),
                           namespaces=namespaces, weight=weight)


def read_pod_affinity(pod: Pod, namespace_labels: Mapping[str, Mapping[str, str]],
                      all_namespaces: Iterable[str], warnings: list[str]
                      ) -> KaiPodAffinity | None:
    """The pod's inter-pod affinity; None when it has none. ``namespace_labels``: the
    snapshot's Namespace objects' labels; ``all_namespaces``: every namespace the
    session's pods are in. A term not modelled is left out with a line in ``warnings``."""
    spec = (pod.raw or {}).get("spec")
    affinity = spec.get("affinity") if isinstance(spec, Mapping) else None
    if not isinstance(affinity, Mapping):
        return None
    context = (tuple(all_namespaces), namespace_labels, warnings)
    found: dict[str, list[KaiAffinityTerm]] = {}
    for section, kind in (("podAffinity", ""), ("podAntiAffinity", "_anti")):
        part = affinity.get(section)
        if not isinstance(part, Mapping):
            continue
        base = f"spec.affinity.{section}"
        for i, raw in enumerate(_list(part.get(_REQUIRED))):
            _add(found, f"required{kind}", pod, raw, f"{base}.{_REQUIRED}[{i}]", 0, context)
        for i, item in enumerate(_list(part.get(_PREFERRED))):
            if isinstance(item, Mapping) and isinstance(item.get("weight"), int):
                _add(found, f"preferred{kind}", pod, item.get("podAffinityTerm"),
                     f"{base}.{_PREFERRED}[{i}].podAffinityTerm", item["weight"], context)
    if not any(found.values()):
        return None
    return KaiPodAffinity(**{k: tuple(v) for k, v in found.items()})


_Context = tuple[tuple[str, ...], Mapping[str, Mapping[str, str]], list[str]]


def _add(found: dict[str, list[KaiAffinityTerm]], key: str, pod: Pod, raw: Any, path: str,
         weight: int, context: _Context) -> None:
    all_namespaces, namespace_labels, warnings = context
    try:
        term = _term(raw, pod, path, weight, namespace_labels, all_namespaces)
    except _NotModelled as exc:
        warnings.append(f"pod {pod.metadata.namespace or 'default'}/{pod.metadata.name}: "
                        f"{exc}: not modelled by dralab's KAI session (matchLabels and "
                        f"single-value In only): the term is left out, so the pod may go "
                        f"where KAI would not put it")
        return
    if term is not None:
        found.setdefault(key, []).append(term)
