"""Small pieces several plugins share: score normalisation, taint tolerations, args."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from dralab.api.core import Taint, Toleration

from ..framework import MAX_NODE_SCORE, NodeScore

__all__ = [
    "default_normalize_score",
    "find_untolerated_taint",
    "tolerates",
]


def default_normalize_score(scores: list[NodeScore], reverse: bool = False,
                            max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale ``scores`` in place so the best is ``max_priority`` (kube-scheduler's
    DefaultNormalizeScore); ``reverse`` turns high raw values into low scores. All
    zero stays zero, or becomes ``max_priority`` when reversed."""
    highest = max((s.score for s in scores), default=0)
    if highest == 0:
        if reverse:
            scores[:] = [NodeScore(s.name, max_priority) for s in scores]
        return
    out: list[NodeScore] = []
    for s in scores:
        value = max_priority * s.score // highest
        out.append(NodeScore(s.name, max_priority - value if reverse else value))
    scores[:] = out


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Whether one toleration tolerates one taint (empty effect / key match all)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.value or "") == (taint.value or "")
    return False


def find_untolerated_taint(taints: Iterable[Taint], tolerations: Sequence[Toleration],
                           relevant: Callable[[Taint], bool]) -> Taint | None:
    """The first relevant taint no toleration tolerates, or None."""
    for taint in taints:
        if not relevant(taint):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
