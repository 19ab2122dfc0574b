"""Integer options take ASCII digits only (issue 29): ``int()``, and so click's INT,
reads '٣' (Arabic-Indic), '３' (fullwidth) and '1_000' as numbers a user never typed."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

# (command line up to the option, the option): each verb's integer options.
OPTIONS = [
    (["fleet"], "--seed"),
    (["schedule", "-f", "examples/scheduling/cluster.yaml"], "--seed"),
    (["simulate"], "--seed"),
    (["replay", "alibaba-2023"], "--seeds"),
    (["replay", "alibaba-2023"], "--workers"),
    (["sweep", "alibaba-2023"], "--seeds"),
    (["sweep", "alibaba-2023"], "--workers"),
]


@pytest.mark.parametrize("value", ["٣", "３", "1_000", "²", "𝟑"])
@pytest.mark.parametrize(("head", "option"), OPTIONS)
def test_other_digits_are_not_integers(head: list[str], option: str, value: str) -> None:
    result = CliRunner().invoke(cli, [*head, option, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': {value!r} is not a valid integer." in result.stderr


@pytest.mark.parametrize("value", ["3", "+3", " 3 "])
def test_ascii_integers_still_parse(value: str) -> None:
    from dralab.cli.common import AsciiInt, AsciiIntRange

    assert AsciiInt().convert(value, None, None) == 3
    assert AsciiIntRange(min=1, max=5).convert(value, None, None) == 3


def test_ranges_are_still_checked() -> None:
    result = CliRunner().invoke(cli, ["replay", "alibaba-2023", "--seeds", "0"])
    assert result.exit_code == 2 and "0 is not in the range" in result.stderr
