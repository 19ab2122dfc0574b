"""NodePorts (PreFilter, Filter), as kube-scheduler v1.36.2 checks host ports
(pkg/scheduler/framework/plugins/nodeports).

A pod's host ports are the ``hostPort`` entries (> 0) of its containers and of its sidecars
(init containers with ``restartPolicy: Always``, which run as long as the pod; other init
containers' ports are not held; util.GetHostPorts). A node fails, Unschedulable,
``node(s) didn't have free ports for the requested pod ports`` when one of them conflicts
with a port its pods hold: same protocol (TCP when empty) and port, and either address
0.0.0.0 (an empty hostIP) on one side or the same address (HostPortInfo.CheckConflict).
Ports are read from the pod's document (dralab's typed Container keeps no ports).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.cluster.events import ClusterEvent, NodeAdded, PodForgotten, PodRemoved

from ..framework import CycleState, Handle, PreFilterResult, Status
from ..hints import QUEUE, SKIP, EventHint, HintResult

__all__ = ["ERR_REASON", "NAME", "NodePorts", "host_ports", "ports_conflict"]

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_PRE_FILTER_KEY = "PreFilter" + NAME
_BIND_ALL = "0.0.0.0"
_CONFLICT = Status.unschedulable(NAME, ERR_REASON)
_SUCCESS = Status.success()

# (hostIP, protocol, hostPort), sanitised: 0.0.0.0 for an empty address, TCP for an empty
# protocol.
HostPort = tuple[str, str, int]


def _ports_of(container: Any) -> list[HostPort]:
    if not isinstance(container, Mapping):
        return []
    out = []
    ports = container.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if not isinstance(port, Mapping):
            continue
        number = port.get("hostPort")
        if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
            continue
        out.append((str(port.get("hostIP") or _BIND_ALL), str(port.get("protocol") or "TCP"),
                    number))
    return out


def host_ports(pod: PodInfo) -> tuple[HostPort, ...]:
    """util.GetHostPorts: sidecars' host ports, then the containers'."""
    raw = pod.pod.raw
    spec = raw.get("spec") if isinstance(raw, dict) else None
    if not isinstance(spec, dict):
        return ()
    out: list[HostPort] = []
    init = spec.get("initContainers")
    for container in init if isinstance(init, list) else []:
        if isinstance(container, Mapping) and container.get("restartPolicy") == "Always":
            out.extend(_ports_of(container))
    containers = spec.get("containers")
    for container in containers if isinstance(containers, list) else []:
        out.extend(_ports_of(container))
    return tuple(out)


def ports_conflict(wanted: Sequence[HostPort], used: Mapping[str, set[tuple[str, int]]]
                   ) -> bool:
    """fitsPorts negated: ``used`` maps an address to its (protocol, port) pairs."""
    for ip, protocol, port in wanted:
        pair = (protocol, port)
        if ip == _BIND_ALL:
            if any(pair in pairs for pairs in used.values()):
                return True
        elif pair in used.get(_BIND_ALL, ()) or pair in used.get(ip, ()):
            return True
    return False


class NodePorts:
    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle
        # pod key -> (pod object, its host ports); node name -> (NodeInfo, generation, used)
        self._ports: dict[str, tuple[object, tuple[HostPort, ...]]] = {}
        self._used: dict[str, tuple[NodeInfo, int, dict[str, set[tuple[str, int]]]]] = {}

    @classmethod
    def create(cls, args: Mapping[str, Any], handle: Handle) -> NodePorts:
        return cls(handle)

    @property
    def name(self) -> str:
        return NAME

    def ports(self, pod: PodInfo) -> tuple[HostPort, ...]:
        key = pod.key
        cached = self._ports.get(key)
        if cached is not None and cached[0] is pod.pod:
            return cached[1]
        ports = host_ports(pod)
        self._ports[key] = (pod.pod, ports)
        return ports

    def used_ports(self, node: NodeInfo) -> dict[str, set[tuple[str, int]]]:
        """NodeInfo.UsedPorts: the host ports its pods hold, by address."""
        cached = self._used.get(node.name)
        if cached is not None and cached[0] is node and cached[1] == node.generation:
            return cached[2]
        used: dict[str, set[tuple[str, int]]] = {}
        for info in node.pods:
            for ip, protocol, port in self.ports(info):
                used.setdefault(ip, set()).add((protocol, port))
        self._used[node.name] = (node, node.generation, used)
        return used

    def filter_relevant(self, pod: PodInfo) -> bool:
        """Only a pod asking for host ports can be rejected."""
        return bool(self.ports(pod))

    def pre_filter(self, state: CycleState, pod: PodInfo, cluster: ClusterState
                   ) -> tuple[PreFilterResult | None, Status]:
        ports = self.ports(pod)
        if not ports:
            return None, Status.skip(NAME)
        state.write(_PRE_FILTER_KEY, _Wanted(ports))
        return None, _SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def dry_run_key(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """Filter reads the pod's host ports and the node's pods only."""
        return self.ports(pod)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        data = state.get(_PRE_FILTER_KEY)
        if not isinstance(data, _Wanted):
            if not self.ports(pod):
                return _SUCCESS  # PreFilter skipped the plugin: nothing to check
            return Status.error(NAME, f"reading {_PRE_FILTER_KEY!r} from cycleState: not found")
        if ports_conflict(data.ports, self.used_ports(node)):
            return _CONFLICT
        return _SUCCESS

    def events_to_register(self) -> Sequence[EventHint]:
        # With queueing hints on, upstream registers Pod/Delete and Node/Add only.
        return (EventHint((PodRemoved, PodForgotten), self._pod_gone), EventHint((NodeAdded,)))

    def _pod_gone(self, event: ClusterEvent, cluster: ClusterState) -> HintResult:
        """isSchedulableAfterPodDeleted: only a placed pod holding a host port the rejected
        pod wants frees something. The deleted pod is gone from the store; its ports are
        known when Filter read its node (a pod rejected here was filtered on every node);
        otherwise the event queues."""
        assert isinstance(event, PodRemoved | PodForgotten)
        if event.node is None:
            return SKIP
        cached = self._ports.get(event.key)
        if cached is None:
            return QUEUE
        freed = cached[1]
        if not freed:
            return SKIP
        used: dict[str, set[tuple[str, int]]] = {}
        for ip, protocol, port in freed:
            used.setdefault(ip, set()).add((protocol, port))
        return lambda pod: ports_conflict(self.ports(pod), used)


class _Wanted:
    __slots__ = ("ports",)

    def __init__(self, ports: tuple[HostPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> _Wanted:
        return self

