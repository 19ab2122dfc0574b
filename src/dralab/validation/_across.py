"""Checks that need more than one object of the input at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dralab.api.errors import FieldError
from dralab.api.features import FeatureGates
from dralab.validation._admin_access import check_admin_access
from dralab.validation._unmodelled import check_unmodelled_gates

__all__ = ["validate_across"]


def validate_across(objects: Sequence[Any], features: FeatureGates | None = None
                    ) -> list[tuple[int, FieldError]]:
    """(index into ``objects``, error) for problems between objects, by index.

    ``objects`` are decoded documents (plain dicts). Covers admin access against
    the Namespaces of the input, and input that relies on a feature gate that
    is on but not modelled by dralab. Pure; tolerates malformed objects (the
    per-object validation reports those).
    """
    gates = features if features is not None else FeatureGates()
    found = check_admin_access(objects) + check_unmodelled_gates(objects, gates)
    return sorted(found, key=lambda item: item[0])
