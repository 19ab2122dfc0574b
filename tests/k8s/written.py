"""Compare the Pods and ResourceClaims two sides wrote, byte for byte once encoded, after dropping
what only the server sets: ``uid``, ``resourceVersion``, ``creationTimestamp`` and
``managedFields``, and the values (not the presence) of timestamps and of the random ``shareID``
of a consumable-capacity allocation. Claims generated with a random name suffix (from templates
by the resourceclaim controller, for extended resources by the scheduler) are matched by owner
and pod claim name, and their names are replaced by that key wherever they appear (the claim's
name, the pod's ``resourceClaimStatuses`` and ``extendedResourceClaimStatus``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from .runs import ScenarioRun
from .scenario import claim_key

__all__ = ["compare_run", "field_differences", "normalized"]

Obj = dict[str, Any]
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "managedFields")
_TIME = "<time>"
_RANDOM = "<random uuid>"


def _stamp(value: Any) -> Any:
    return _TIME if value else value


def normalized(objects: Iterable[Obj], claims_only: bool = False) -> dict[str, Obj]:
    """``'<Kind> <key>'`` -> the object without server-set fields, generated names replaced.

    ``claims_only``: ResourceClaims alone, without the pod uids they name (in
    ``ownerReferences`` and ``reservedFor``), for pods that did not come from the server."""
    objects = [json.loads(json.dumps(o)) for o in objects]
    if claims_only:
        objects = [o for o in objects if o.get("kind") == "ResourceClaim"]
        for obj in objects:
            owners = obj["metadata"].get("ownerReferences") or []
            consumers = (obj.get("status") or {}).get("reservedFor") or []
            for ref in [*owners, *consumers]:
                ref.pop("uid", None)
    names = {o["metadata"]["name"]: claim_key(o) for o in objects
             if o.get("kind") == "ResourceClaim" and o["metadata"].get("generateName")}
    out: dict[str, Obj] = {}
    for obj in objects:
        kind = obj.get("kind")
        if kind not in ("Pod", "ResourceClaim"):
            continue
        meta = obj["metadata"]
        for name in _SERVER_SET:
            meta.pop(name, None)
        if "deletionTimestamp" in meta:
            meta["deletionTimestamp"] = _stamp(meta["deletionTimestamp"])
        status = obj.get("status") or {}
        if kind == "ResourceClaim":
            meta["name"] = names.get(meta["name"], meta["name"])
            allocation = status.get("allocation")
            if allocation and "allocationTimestamp" in allocation:
                allocation["allocationTimestamp"] = _stamp(allocation["allocationTimestamp"])
            for result in ((allocation or {}).get("devices") or {}).get("results") or []:
                if "shareID" in result:  # a random UUID per allocation of a shared device
                    result["shareID"] = _RANDOM if result["shareID"] else result["shareID"]
        else:
            for cond in status.get("conditions") or []:
                for field in ("lastTransitionTime", "lastProbeTime"):
                    if field in cond:
                        cond[field] = _stamp(cond[field])
                if cond.get("lastProbeTime") is None:
                    cond.pop("lastProbeTime", None)  # Go's null metav1.Time; nothing to say
            for entry in status.get("resourceClaimStatuses") or []:
                entry["resourceClaimName"] = names.get(entry.get("resourceClaimName"),
                                                       entry.get("resourceClaimName"))
            extended = status.get("extendedResourceClaimStatus")
            if extended:
                extended["resourceClaimName"] = names.get(extended.get("resourceClaimName"),
                                                          extended.get("resourceClaimName"))
        out[f"{kind} {meta['name']}"] = obj
    return out


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            yield from _leaves(value[key], f"{path}.{key}")
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, json.dumps(value, sort_keys=True)


def field_differences(server: Obj, dralab: Obj) -> list[str]:
    theirs, mine = dict(_leaves(server)), dict(_leaves(dralab))
    out = []
    for path in sorted(set(theirs) | set(mine)):
        if theirs.get(path) != mine.get(path):
            out.append(f"{path or '.'}: server {theirs.get(path, '<absent>')}, "
                       f"dralab {mine.get(path, '<absent>')}")
    return out


def compare_run(run: ScenarioRun, claims_only: bool = False) -> dict[str, list[str]]:
    """Per object (``'<Kind> <key>'``) the differing fields; an object only one side has is
    one line. ``claims_only``: see ``normalized``."""
    if run.server_error or run.dralab_error:
        return {"<run>": [run.server_error or run.dralab_error]}
    server = normalized(run.server, claims_only)
    dralab = normalized(run.dralab, claims_only)
    out: dict[str, list[str]] = {}
    for key in sorted(set(server) | set(dralab)):
        if key not in dralab:
            out[key] = ["only the server has it"]
        elif key not in server:
            out[key] = ["only dralab has it"]
        elif json.dumps(server[key], sort_keys=True) != json.dumps(dralab[key], sort_keys=True):
            out[key] = field_differences(server[key], dralab[key])
    return out
