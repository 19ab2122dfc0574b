"""Which kinds each verb reads: no kind given on the command line is silently ignored.

Every verb that reads manifests passes its documents through ``use_kinds`` with its
``VerbKinds``:

- a Fleet (``dralab.dev/v1alpha1``, dralab's own kind) is expanded in place into the
  DeviceClasses, Nodes and ResourceSlices ``dralab fleet`` prints for it (the spec's
  seed), kept for verbs that read it themselves (``autoscale``, ``explain pod``), or
  refused in one line (exit 2) by verbs for which its nodes mean nothing;
- every other kind the verb does not use gives one ``warning:`` line per kind, with a
  count and the first file and document (``warn_unused``, once the input is known valid;
  the objects stay in the input, where they change nothing).

One helper for every verb, so that the messages read the same everywhere.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dralab.api.codec import KINDS, encode
from dralab.api.errors import InputError
from dralab.api.io import Document
from dralab.api.kindcount import KindKey, api_group, warn_unused_kinds
from dralab.api.nvlink import COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_KIND
from dralab.fleet import generate, parse_fleet
from dralab.fleet.spec import API_VERSION as FLEET_API_VERSION
from dralab.fleet.spec import KIND as FLEET_KIND
from dralab.fleet.spec import FleetSpecError
from dralab.queueing.objects import CONFIG_GROUP, KUEUE_GROUP, KUEUE_KINDS

__all__ = [
    "ADMIT", "ALLOCATE", "AUTOSCALE", "EXPLAIN_CLAIM", "EXPLAIN_POD", "EXPLAIN_WORKLOAD",
    "IMPORT", "SCHEDULE", "FleetUse", "VerbKinds", "expand_fleet", "fleet_problem",
    "is_fleet", "migrate_verb", "use_kinds", "warn_unused",
]


class FleetUse(enum.Enum):
    EXPAND = "expand"   # replaced by the objects ``dralab fleet`` prints for it
    OWN = "own"         # the verb reads the Fleet itself (its pools, autoscaling)
    REFUSE = "refuse"   # one line, exit 2


@dataclass(frozen=True, slots=True)
class VerbKinds:
    """``verb`` (as typed: ``explain claim``), the kinds it uses (None: every kind,
    e.g. a verb that passes or lists what it does not model) and what a Fleet gets."""

    verb: str
    uses: frozenset[KindKey] | None
    fleet: FleetUse


# What kube-scheduler's side of dralab reads: the modelled Kubernetes kinds (older
# served versions of a group are the same kind).
CLUSTER_KINDS: frozenset[KindKey] = frozenset((api_group(k.API_VERSION), k.KIND) for k in KINDS)
KUEUE_KIND_KEYS: frozenset[KindKey] = frozenset(
    {(KUEUE_GROUP, kind) for kind in KUEUE_KINDS} | {(CONFIG_GROUP, "Configuration")}
    # Kueue checks a Workload's pod templates against its namespace's LimitRanges
    | {("", "LimitRange")})
# ``dralab allocate``: one node's devices and the claims to allocate on it (a Namespace's
# admin-access label decides whether a claim may ask for adminAccess).
ALLOCATION_KINDS: frozenset[KindKey] = frozenset(
    (api_group(k.API_VERSION), k.KIND) for k in KINDS
    if k.KIND in ("DeviceClass", "ResourceSlice", "DeviceTaintRule", "ResourceClaim", "Node",
                  "Namespace"))

# A run builds the workload channel ResourceClaimTemplate of every ComputeDomain as the
# driver's controller does (build_cluster), and explain pod says which NVLink domains
# their pods span.
COMPUTE_DOMAIN_KEYS: frozenset[KindKey] = frozenset({(COMPUTE_DOMAIN_GROUP, COMPUTE_DOMAIN_KIND)})
SCHEDULE = VerbKinds("schedule", CLUSTER_KINDS | COMPUTE_DOMAIN_KEYS, FleetUse.EXPAND)
EXPLAIN_POD = VerbKinds("explain pod", CLUSTER_KINDS | COMPUTE_DOMAIN_KEYS, FleetUse.OWN)
EXPLAIN_CLAIM = VerbKinds("explain claim", CLUSTER_KINDS | COMPUTE_DOMAIN_KEYS,
                          FleetUse.EXPAND)
# autoscale builds its cluster as schedule does (ComputeDomains' channel templates too).
AUTOSCALE = VerbKinds("autoscale", CLUSTER_KINDS | COMPUTE_DOMAIN_KEYS, FleetUse.OWN)
# admit reads a ComputeDomain for the channel template its controller creates, which a
# pod set may claim from (queueing.load.channel_templates).
ADMIT = VerbKinds("admit", CLUSTER_KINDS | KUEUE_KIND_KEYS | COMPUTE_DOMAIN_KEYS,
                  FleetUse.EXPAND)
EXPLAIN_WORKLOAD = VerbKinds("explain workload",
                             CLUSTER_KINDS | KUEUE_KIND_KEYS | COMPUTE_DOMAIN_KEYS,
                             FleetUse.EXPAND)
ALLOCATE = VerbKinds("allocate", ALLOCATION_KINDS, FleetUse.EXPAND)
# import passes every object through (in its own version); a Fleet is no published
# object to normalise: `dralab fleet` prints what it stands for.
IMPORT = VerbKinds("import", None, FleetUse.REFUSE)


def migrate_verb(sub: str) -> VerbKinds:
    """``migrate SUB``: reads a cluster dump, every kind looked at (inventory and convert
    list a Fleet as a workload they cannot convert); a Fleet is no dump: refused where
    its nodes would be silently missing (check, plan). ``convert --verify`` takes one."""
    return VerbKinds(f"migrate {sub}", None, FleetUse.REFUSE)


def is_fleet(doc: Document) -> bool:
    data = doc.data
    return isinstance(data, dict) and data.get("kind") == FLEET_KIND and \
        data.get("apiVersion") == FLEET_API_VERSION


def expand_fleet(doc: Document) -> list[Document]:
    """The Fleet of ``doc`` as the documents ``dralab fleet -f`` prints (the spec's seed),
    each named by the Fleet's file and document. FleetSpecError for a bad Fleet."""
    fleet = parse_fleet(doc.data, doc.where)
    return [Document(doc.source, doc.index, encode(obj))
            for obj in generate(fleet, None).objects()]


def fleet_problem(doc: Document) -> str | None:
    """What is wrong with the Fleet of ``doc``, as a ``dralab validate`` problem line
    (``FILE[:DOC] Fleet NAME: field.path: message``), or None when it is valid."""
    try:
        parse_fleet(doc.data, doc.where)
    except FleetSpecError as exc:
        return f"{doc.describe()}: {exc.path}: {exc.detail}" if exc.path else \
            f"{doc.describe()}: {exc.detail}"
    return None


def use_kinds(docs: Sequence[Document], verb: VerbKinds) -> list[Document]:
    """``docs`` as ``verb`` reads them: Fleets expanded, kept or refused (InputError,
    exit 2). ``warn_unused`` then names the kinds it leaves out."""
    out: list[Document] = []
    for doc in docs:
        if not is_fleet(doc):
            out.append(doc)
        elif verb.fleet is FleetUse.EXPAND:
            out.extend(expand_fleet(doc))
        elif verb.fleet is FleetUse.OWN:
            out.append(doc)
        else:
            raise InputError(
                f"{doc.where} {FLEET_KIND} ({FLEET_API_VERSION}): dralab {verb.verb} does not "
                f"read a Fleet; `dralab fleet -f {doc.source}` prints its Nodes, "
                "ResourceSlices and DeviceClasses")
    return out


def warn_unused(docs: Iterable[Document], verb: VerbKinds) -> None:
    """One ``warning:`` line per kind among ``docs`` that ``verb`` does not use. Called
    once the input is known valid: invalid input gets its errors, and only them."""
    if verb.uses is None:
        return
    uses = verb.uses | ({(api_group(FLEET_API_VERSION), FLEET_KIND)}
                        if verb.fleet is FleetUse.OWN else set())
    warn_unused_kinds(docs, f"dralab {verb.verb}", uses.__contains__)
