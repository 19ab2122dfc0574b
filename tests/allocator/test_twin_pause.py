"""The twin lookup pauses on fleets whose nodes do not repeat (issue 34), and the
search's constraint shortcuts (a device's attribute read once per search, a
rejection before the device's bookkeeping) answer as before."""

from __future__ import annotations

from dralab.allocator import AllocatedState, Allocator, SliceIndex
from dralab.allocator import engine as engine_module
from dralab.allocator.constraints import ConstraintError, MatchAttribute
from dralab.allocator.index import DeviceRecord
from dralab.allocator.nodes import NodeView
from dralab.allocator.outcome import Allocated, AllocationOutcome
from dralab.api.resource import ResourceSlice

from .builders import CLASS_A, DRIVER_A, claim, dclass, device, in_use, match, request, rslice


def _fleet(nodes: int, unique: bool) -> list[ResourceSlice]:
    """One slice of four devices per node; ``unique``: every device its own serial."""
    return [rslice(f"s-{i}", f"n-{i}", f"p-{i}", DRIVER_A, *[
        device(f"d{k}", attrs={"serial": f"{i}-{k}" if unique else "same",
                               "root": k // 2}) for k in range(4)])
        for i in range(nodes)]


class _NoTwins(Allocator):
    def _twin_probe(self, *args: object) -> None:
        return None


def _outcomes(engine: Allocator, nodes: int
              ) -> list[tuple[str, list[tuple[str, str]] | None, int]]:
    made = []
    pod = [claim("c", request("r", CLASS_A, 2), constraints=[match(f"{DRIVER_A}/root")])]
    for i in range(nodes):
        out: AllocationOutcome = engine.allocate(pod, NodeView(f"n-{i}"), explain_failure=False)
        devices = None
        if isinstance(out, Allocated):
            allocation = out.claims[0].status.allocation
            assert allocation is not None
            devices = [(r.pool, r.device) for r in allocation.devices.results]
        made.append((out.kind, devices, out.steps))
    return made


def _state(nodes: int) -> AllocatedState:
    # d0 taken on every third node: the search backtracks to the second root there.
    return AllocatedState.from_claims([in_use(
        "held", *[(DRIVER_A, f"p-{i}", "d0") for i in range(0, nodes, 3)])])


def test_lookup_pauses_where_no_node_repeats_and_answers_stay() -> None:
    slices = _fleet(100, unique=True)
    engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], _state(100))
    assert _outcomes(engine, 100) == _outcomes(
        _NoTwins(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], _state(100)), 100)
    # a window of probes without a twin, then the pause (its count went down since)
    assert len(engine._twin_seen) == engine_module._TWIN_WINDOW
    assert 0 < engine._twin_pause < engine_module._TWIN_PAUSE
    engine.forget_pools()
    assert engine._twin_pause == 0 and not engine._twin_seen


def test_lookup_keeps_going_where_nodes_repeat() -> None:
    slices = _fleet(100, unique=False)
    engine = Allocator(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], _state(100))
    assert _outcomes(engine, 100) == _outcomes(
        _NoTwins(SliceIndex(slices), [dclass(CLASS_A, DRIVER_A)], _state(100)), 100)
    assert engine._twin_pause == 0
    assert len(engine._twin_seen) == 100


def _record(attrs: dict[str, object]) -> DeviceRecord:
    index = SliceIndex([rslice("s", "n", "p", DRIVER_A, device("d", attrs=attrs))])
    return index.candidate_slices("n")[0].devices[0]


def test_constraint_reads_a_device_once_and_an_error_every_time() -> None:
    rec = _record({"root": 1})
    constraint = MatchAttribute(f"{DRIVER_A}/root", [], lists=False)
    assert constraint.rejects("r", "", rec) is False
    assert constraint._read_values == {rec: ("int", [1])}
    assert constraint.add("r", "", rec)
    assert constraint.rejects("r", "", _record({"root": 2})) is True
    assert constraint.rejects("r", "", _record({})) is True  # no such attribute
    listed = _record({"root": [1, 2]})
    for _ in range(2):  # a list without ListTypeAttributes: an error, not remembered
        assert constraint.rejects("r", "", listed) is None
        try:
            constraint.add("r", "", listed)
        except ConstraintError:
            pass
        else:
            raise AssertionError("expected ConstraintError")
    assert listed not in constraint._read_values
