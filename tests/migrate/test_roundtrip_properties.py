"""The writer over generated files (hypothesis): any house style in, the same style out.

Workloads are drawn as data and written as YAML in a drawn style -- mapping
indentation, sequence dashes under their key or indented, the text's distance
from its dash, quotes, flow lists, block scalars with indentation indicators
and chomping, comments on GPU lines and elsewhere, blank lines, CRLF, no final newline. After
``convert``: the output reads back as planned (convert checks it), the diff
holds only lines of the change (``diffcheck``), and with nothing to convert
the file is unchanged.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralab.api.io import read_documents
from dralab.migrate.convert import convert_sources

from .diffcheck import check_minimal_diff

PROFILES = ["1g.5gb", "2g.10gb", "3g.20gb"]


@dataclass(frozen=True)
class Fmt:
    mapping: int
    sequence: int
    offset: int
    quote: str
    flow: bool
    comments: bool
    blank: bool
    newline: str
    final_newline: bool


class Writer:
    """A small YAML writer with a chosen style (the test's own, independent of dralab's)."""

    def __init__(self, fmt: Fmt, draw: st.DrawFn) -> None:
        self.fmt = fmt
        self.draw = draw
        self.lines: list[str] = []
        self.count = 0

    def scalar(self, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        plain = value.replace("-", "").replace(".", "").replace("/", "").isalnum() \
            and not value[0].isdigit() and value not in ("on", "off", "yes", "no", "y", "n")
        if plain and not self.draw(st.booleans()):
            return str(value)
        if self.fmt.quote == "'":
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value)

    def flow(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {self.flow(v)}" for k, v in value.items()) + "}"
        return self.scalar(value)

    def comment(self, gpu: bool) -> str:
        if self.fmt.comments and (gpu or self.draw(st.integers(0, 4)) == 0):
            self.count += 1
            return f"  # note {self.count}"
        return ""

    def entry(self, key: str, value: Any, col: int, first: str | None = None) -> None:
        lead = first if first is not None else " " * col
        gpu = key.startswith("nvidia.com/")
        if key == "resources" and self.draw(st.integers(0, 3)) == 0:  # flow style
            self.lines.append(f"{lead}{key}: {self.flow(value)}{self.comment(False)}")
        elif isinstance(value, dict) and value:
            self.lines.append(f"{lead}{key}:{self.comment(False)}")
            for k, v in value.items():
                self.entry(k, v, col + self.fmt.mapping)
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value) \
                and self.fmt.flow:
            items = [self.scalar(v) for v in value]
            if len(items) > 1 and self.draw(st.booleans()):  # a flow list over two lines
                pad = " " * (len(lead) + len(key) + 3)
                self.lines.append(f"{lead}{key}: [{', '.join(items[:1])},")
                self.lines.append(f"{pad}{', '.join(items[1:])}]{self.comment(False)}")
            else:
                self.lines.append(f"{lead}{key}: [{', '.join(items)}]{self.comment(False)}")
        elif isinstance(value, list) and value:
            self.lines.append(f"{lead}{key}:")
            for item in value:
                self.item(item, col + self.fmt.sequence)
        elif isinstance(value, str) and "\n" in value:
            indicator = self.draw(st.sampled_from(["|", "|-", "|+", ">", "|2"]))
            self.lines.append(f"{lead}{key}: {indicator}")
            for text in value.splitlines():
                self.lines.append(" " * (col + 2) + text)
            if indicator == "|+":
                self.lines.append("")
        else:
            self.lines.append(f"{lead}{key}: {self.scalar(value)}{self.comment(gpu)}")
        if self.fmt.blank and self.draw(st.integers(0, 5)) == 0:
            self.lines.append("")

    def item(self, value: Any, dash: int) -> None:
        first = " " * dash + "-" + " " * (self.fmt.offset - 1)
        if isinstance(value, dict):
            for i, (k, v) in enumerate(value.items()):
                self.entry(k, v, dash + self.fmt.offset, first if i == 0 else None)
        else:
            self.lines.append(f"{first}{self.scalar(value)}")

    def text(self, docs: list[dict[str, Any]]) -> str:
        for n, doc in enumerate(docs):
            if n or self.draw(st.booleans()):
                self.lines.append("---")
            if self.fmt.comments:
                self.lines.append(f"# document {n}")
            for k, v in doc.items():
                self.entry(k, v, 0)
        end = self.fmt.newline if self.fmt.final_newline else ""
        return self.fmt.newline.join(self.lines) + end


@st.composite
def workload(draw: st.DrawFn, n: int) -> dict[str, Any]:
    containers = []
    for i in range(draw(st.integers(1, 3))):
        limits: dict[str, Any] = {"cpu": str(draw(st.integers(1, 16)))}
        if draw(st.booleans()):
            limits["nvidia.com/gpu"] = draw(st.integers(1, 8))
        elif draw(st.booleans()):
            limits["nvidia.com/mig-" + draw(st.sampled_from(PROFILES))] = 1
        container: dict[str, Any] = {"name": f"c{i}", "image": "busybox"}
        if draw(st.booleans()):
            container["command"] = ["sh", "-c", "run"]
        if draw(st.booleans()):
            container["args"] = ["--flag", "on", "serve"]
        container["resources"] = {"limits": limits, "requests": {"memory": "1Gi"}} \
            if draw(st.booleans()) else {"limits": limits}
        if draw(st.booleans()):
            script = "echo one\n  echo two\n# not a comment\n"
            container["env"] = [{"name": "A", "value": "1"}, {"name": "SCRIPT", "value": script}]
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"w{n}", "namespace": "ns"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}}, "spec": spec}}}


@st.composite
def files(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    mapping = draw(st.integers(2, 4))
    fmt = Fmt(mapping=mapping, sequence=draw(st.sampled_from([0, mapping])),
              offset=draw(st.integers(2, 4)), quote=draw(st.sampled_from(["'", '"'])),
              flow=draw(st.booleans()), comments=draw(st.booleans()),
              blank=draw(st.booleans()), newline=draw(st.sampled_from(["\n", "\n", "\r\n"])),
              final_newline=draw(st.booleans()))
    docs = [draw(workload(n)) for n in range(draw(st.integers(1, 2)))]
    return Writer(fmt, draw).text(docs), docs


def _names(doc: dict[str, Any]) -> list[Any]:
    spec = doc["spec"]["template"]["spec"]
    return [doc["metadata"]["name"], [(c["name"], c["resources"]) for c in spec["containers"]]]


@settings(max_examples=150, deadline=None)
@given(files())
def test_convert_changes_only_the_lines_of_the_change(drawn: tuple[str, list[Any]]) -> None:
    text, docs = drawn
    read = read_documents(["-"], stdin=io.StringIO(text, newline=None))
    # The test's writer wrote what was drawn (block scalars may chomp or fold the script).
    assert [_names(d.data) for d in read] == [_names(d) for d in docs]
    [result] = convert_sources([("w.yaml", "w.yaml", text, read)]).files
    # convert reads its output back and compares it with the plan; the other objects too:
    back = [d.data for d in read_documents(["-"], stdin=io.StringIO(result.text, newline=None))]
    assert back == result.converted
    if "\r\n" in text:  # CRLF kept on every line, old and new
        assert result.text.count("\n") == result.text.count("\r\n")
        result.text = result.text.replace("\r\n", "\n")
    check_minimal_diff("w.yaml", text.replace("\r\n", "\n"), result)
