"""Field paths of a converted document, in the notation of the version it came from.

Validation runs on the v1 form of a document; its errors must still name the
fields as the user wrote them. Only v1beta1 moves fields: upstream's
validation-equivalence rules (``ResourceNormalizationRules``) relate the same
pairs of paths, in the other direction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final

__all__ = ["path_in_version"]

_V1BETA1: Final = "resource.k8s.io/v1beta1"

# spec[.spec].devices.requests[i].exactly[.rest] -> spec[.spec].devices.requests[i][.rest]
_EXACTLY: Final = re.compile(r"^(spec(?:\.spec)?\.devices\.requests\[\d+\])\.exactly(?=$|[.\[])")
# spec.devices[i].field[.rest] -> spec.devices[i].basic.field[.rest], except the name
_DEVICE_FIELD: Final = re.compile(r"^(spec\.devices\[\d+\])\.(?!name(?:$|[.\[]))")


def _claim_path(path: str) -> str:
    return _EXACTLY.sub(r"\1", path, count=1)


def _slice_path(path: str) -> str:
    return _DEVICE_FIELD.sub(r"\1.basic.", path, count=1)


_MAPPERS: Final[Mapping[tuple[str, str], Callable[[str], str]]] = {
    (_V1BETA1, "ResourceClaim"): _claim_path,
    (_V1BETA1, "ResourceClaimTemplate"): _claim_path,
    (_V1BETA1, "ResourceSlice"): _slice_path,
}


def path_in_version(path: str, api_version: str, kind: str) -> str:
    """``path`` (a field path of the v1 form) as it reads in ``api_version``. Pure."""
    mapper = _MAPPERS.get((api_version, kind))
    return path if mapper is None else mapper(path)
