"""Hostile files (``hostile``) in the input slot of every verb: each must be refused or
handled within the bound, in one line, with exit 0-3.

The matrix is fixed (parametrized), so a case that breaks is named in the test id; the
property test at the end draws other sizes of the same generators.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from . import cases, hostile
from .budget import fuzz
from .harness import Case, check

SLOTS = sorted(cases.slots())
# Where each generator goes by stdin as well: the reader's own path for "-".
STDIN_GENERATORS = ("alias_bomb", "deep_json", "deep_yaml_flow", "huge_int", "non_utf8",
                    "utf16", "binary_garbage", "control_chars", "duplicate_keys", "huge_value",
                    "empty")
SPECIAL = ("fifo", "dangling_link", "directory", "dev_zero")
TRACE_SLOTS = [(verb, which) for verb in sorted(cases.TRACE_VERBS) for which in ("nodes", "pods")]
# The whole matrix (every generator in every slot) for `make fuzz`; `make test` takes a
# rotating part of it in which every generator and every slot still appear.
FULL = os.environ.get("FUZZ_MATRIX") == "full"
T = TypeVar("T")
# Known bugs other helpers fix; listed here only until their branch is merged. Such a case
# runs with a short time bound so that a hang costs little.
KNOWN: dict[tuple[str, str], str] = {}
KNOWN_SECONDS = 5.0


def _param(case: Case, known: str | None = None) -> Any:
    marks = [pytest.mark.xfail(strict=False, reason=known)] if known else []
    return pytest.param(case, known,
                        id=case.generator.removeprefix("hostile:") + "@" + case.verb,
                        marks=marks)


def _known(generator: str, slot: str) -> str | None:
    return KNOWN.get((generator, slot)) or KNOWN.get((generator, "*"))


def _pick(options: Sequence[T], index: int, count: int) -> list[T]:
    """All of ``options`` for the full matrix; otherwise ``count`` of them, rotating with
    ``index`` so that every option is still used by some generator."""
    if FULL:
        return list(options)
    return [options[(index + k * max(1, len(options) // count)) % len(options)]
            for k in range(min(count, len(options)))]


def matrix() -> list[Any]:
    params = []
    for i, (name, make) in enumerate(hostile.GENERIC.items()):
        content = make(1)
        for slot in _pick(SLOTS, i, 3):
            params.append(_param(cases.hostile_case(name, slot, content), _known(name, slot)))
        if name in STDIN_GENERATORS:
            assert isinstance(content, bytes)
            for slot in _pick(cases.STDIN_SLOTS, i, 1):
                params.append(_param(cases.hostile_case(name, slot, content, how="stdin"),
                                     _known(name, f"{slot}:stdin")))
        if name in SPECIAL:
            for slot in _pick(("validate", "schedule"), i, 1):
                params.append(_param(cases.hostile_case(name, slot, content, how="dir"),
                                     _known(name, f"{slot}:dir")))
        for verb, which in _pick(TRACE_SLOTS, i, 1):
            params.append(_param(cases.hostile_trace_case(name, verb, which, content),
                                 _known(name, verb)))
    shaped = [(hostile.manifest_hostile(), ("validate", "import", "schedule", "allocate",
                                            "explain workload")),
              (hostile.scenario_hostile(), ("simulate", "sweep scenarios")),
              (hostile.fleet_hostile(), ("fleet",)),
              (hostile.config_hostile(), ("schedule --config", "explain --config"))]
    for generators, verbs in shaped:
        for i, (name, make) in enumerate(generators.items()):
            for slot in _pick(verbs, i, 1):
                params.append(_param(cases.hostile_case(name, slot, make(1)), _known(name, slot)))
    for i, (name, (which, make)) in enumerate(hostile.csv_hostile().items()):
        for verb in _pick(sorted(cases.TRACE_VERBS), i, 1):
            params.append(_param(cases.hostile_trace_case(name, verb, which, make(1)),
                                 _known(name, verb)))
    return params


@pytest.mark.parametrize(("case", "known"), matrix())
def test_hostile_file(case: Case, known: str | None) -> None:
    check(case, seconds=KNOWN_SECONDS if known else None, known=known)


@st.composite
def sized_hostile_cases(draw: st.DrawFn) -> Case:
    """A generic generator at another size, in any slot, by file, stdin or directory."""
    name = draw(st.sampled_from(sorted(hostile.GENERIC)))
    content = hostile.GENERIC[name](draw(st.integers(1, 3)))
    if cases.rarely(draw, 6):
        verb = draw(st.sampled_from(sorted(cases.TRACE_VERBS)))
        return cases.hostile_trace_case(name, verb, draw(st.sampled_from(["nodes", "pods"])),
                                        content)
    slot = draw(st.sampled_from(SLOTS))
    hows = ["file", "dir"] + (["stdin"] if isinstance(content, bytes)
                              and slot in cases.STDIN_SLOTS else [])
    return cases.hostile_case(name, slot, content, how=draw(st.sampled_from(hows)))


@fuzz("hostile")
@given(case=sized_hostile_cases())
def test_hostile_sizes(case: Case) -> None:
    check(case)
