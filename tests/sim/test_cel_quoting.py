"""Values in generated CEL are quoted by ``cel_string``: any text selects exactly itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.celtext import cel_string
from dralab.cel import compile_selector, device_input
from dralab.sim.jobs import claim_template
from dralab.sim.spec import DeviceShape, JobKind

# Device attribute strings cannot hold NUL (nor lone surrogates): everything else may come.
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
               max_size=40)
NVIDIA = "gpu.nvidia.com"


def product_selector(value: str) -> str:
    return f"device.attributes[{cel_string(NVIDIA)}].productName == {cel_string(value)}"


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_a_quoted_value_matches_itself_and_nothing_else(value: str, other: str) -> None:
    selector = compile_selector(product_selector(value))
    assert selector.evaluate(device_input(NVIDIA, {"productName": value}, {})) is True
    if other != value:
        assert selector.evaluate(device_input(NVIDIA, {"productName": other}, {})) is False


@pytest.mark.parametrize(("value", "literal"), [
    ("NVIDIA L4", '"NVIDIA L4"'),
    ('NVIDIA L4" || "a" == "a', r'"NVIDIA L4\" || \"a\" == \"a"'),
    ("back\\slash", r'"back\\slash"'),
    ("line\nbreak\ttab\r", r'"line\nbreak\ttab\r"'),
    ("\u202eevil", r'"\u202eevil"'),            # a bidi override stays visible
    ("\U000e0001tag", r'"\U000e0001tag"'),
    ("é 😀", '"é 😀"'),
])
def test_literals(value: str, literal: str) -> None:
    assert cel_string(value) == literal


def test_a_lone_surrogate_cannot_be_quoted() -> None:
    with pytest.raises(ValueError, match="lone surrogate U\\+D800"):
        cel_string("a\ud800")


def test_the_injection_of_issue_16_is_one_string() -> None:
    kind = JobKind(name="l4-only", arrival_rate="1/h",
                   devices=DeviceShape(type="gpu", product_name='NVIDIA L4" || "a" == "a'))
    template = claim_template(kind)
    assert template is not None
    request = template.spec.spec.devices.requests[0].exactly
    assert request is not None
    (selector,) = request.selectors
    assert selector.cel is not None
    compiled = compile_selector(selector.cel.expression)
    for product in ("NVIDIA A100-SXM4-40GB", "NVIDIA L4"):
        assert compiled.evaluate(device_input(NVIDIA, {"productName": product}, {})) is False
