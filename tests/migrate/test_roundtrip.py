"""The YAML writer of `migrate convert`: a file edited in place, the rest byte for byte."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.api.io import read_documents
from dralab.migrate.convert import convert_files
from dralab.migrate.roundtrip import load_roundtrip


def edited(text: str, change: Callable[[list[Any]], None]) -> str:
    """``text`` after ``change`` on its documents; the result must read back as edited."""
    tree = load_roundtrip(text, "t.yaml")
    change(tree.documents)
    out = tree.dumps()
    back = [d.data for d in read_documents(["-"], stdin=io.StringIO(out))]
    assert back == [d for d in tree.documents if d is not None]
    return out


FILE = """\
# leading comment
apiVersion: v1
kind: Pod
metadata:
    name: 'p'          # single quotes kept
    annotations: {a: "1", b: '2'}
spec:
    containers:
        -   name: main
            command: ["sh", "-c",
                      "run"]
            args:
              - |2-
                  indented by an indicator
              - >+
                folded, kept

            resources:
                limits:
                    cpu: "2"
                    nvidia.com/gpu: 1   # one whole GPU

                requests:
                    cpu: "2"
    volumes: []
...
---
kind: Other
"""


def _swap_gpu_for_claim(docs: list[Any]) -> None:
    spec = docs[0]["spec"]
    resources = spec["containers"][0]["resources"]
    del resources["limits"]["nvidia.com/gpu"]
    resources["claims"] = [{"name": "gpu"}]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-1"}]


def test_only_the_changed_lines_change_in_the_files_own_style() -> None:
    out = edited(FILE, _swap_gpu_for_claim)
    assert out == FILE.replace(
        "                    nvidia.com/gpu: 1   # one whole GPU\n",
        "                    # one whole GPU\n").replace(
        "                    cpu: \"2\"\n    volumes: []\n",
        "                    cpu: \"2\"\n"
        "                claims:\n"
        "                    -   name: gpu\n"
        "    volumes: []\n"
        "    resourceClaims:\n"
        "        -   name: gpu\n"
        "            resourceClaimTemplateName: gpu-1\n")


def test_untouched_file_is_returned_as_is() -> None:
    assert edited(FILE, lambda docs: None) == FILE


def test_a_removed_section_keeps_its_comments_where_it_was() -> None:
    text = ("spec:\n  nodeSelector:\n    # which GPUs\n    gpu: a100  # GFD label\n"
            "  containers:\n  - name: c\n")
    out = edited(text, lambda docs: docs[0]["spec"].pop("nodeSelector"))
    assert out == "spec:\n    # which GPUs\n  # GFD label\n  containers:\n  - name: c\n"


def test_the_first_key_of_an_item_leaves_its_dash_to_the_next() -> None:
    text = "containers:\n- resources:\n    limits:\n      nvidia.com/gpu: 1\n  name: c\n"

    def change(docs: list[Any]) -> None:
        docs[0]["containers"][0].pop("resources")

    assert edited(text, change) == "containers:\n- name: c\n"


def test_an_item_whose_keys_all_go_gets_the_new_ones_on_its_dash_line() -> None:
    text = "items:\n  - old: 1\n    older: 2\n  - keep: 3\n"

    def change(docs: list[Any]) -> None:
        docs[0]["items"][0] = {"new": "x"}

    assert edited(text, change) == "items:\n  - new: x\n  - keep: 3\n"


def test_flow_collections_stay_flow() -> None:
    text = "c:\n  resources: {limits: {nvidia.com/gpu: 1, cpu: 2}}  # inline\n"

    def change(docs: list[Any]) -> None:
        resources = docs[0]["c"]["resources"]
        del resources["limits"]["nvidia.com/gpu"]
        resources["claims"] = [{"name": "gpu"}]

    assert edited(text, change) == \
        "c:\n  resources: {limits: {cpu: 2}, claims: [{name: gpu}]}  # inline\n"


def test_sequence_items_removed_and_inserted_in_place() -> None:
    text = "l:\n- a   # first\n- b\n- c\n"

    def change(docs: list[Any]) -> None:
        docs[0]["l"] = ["b", "p", "c", "q"]

    assert edited(text, change) == "l:\n# first\n- b\n- p\n- c\n- q\n"


def test_new_strings_are_quoted_when_a_reader_would_take_them_for_something_else() -> None:
    text = "a: 'x'\nm:\n  k: v\n"

    def change(docs: list[Any]) -> None:
        # `n` as a key is YAML 1.1's false: quoted too.
        docs[0]["m"].update({"on": "on", "n": "0969400e51393844", "t": "a: b", "d": "2024-01-02",
                             "plain": "nvidia.com/gpu"})

    out = edited(text, change)
    assert out.endswith("  k: v\n  'on': 'on'\n  'n': '0969400e51393844'\n  t: 'a: b'\n"
                        "  d: '2024-01-02'\n  plain: nvidia.com/gpu\n")


def test_a_null_value_gets_its_new_value_after_the_colon() -> None:
    assert edited("a:\nb: 1\n", lambda docs: docs[0].update(a=[])) == "a: []\nb: 1\n"


def test_an_emptied_collection_is_written_empty() -> None:
    text = "a:\n  b: 1\n  c: 2\nd: x\n"
    assert edited(text, lambda docs: docs[0].update(a={})) == "a: {}\nd: x\n"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_ends_bom_and_a_missing_final_newline_are_kept(newline: str) -> None:
    text = "\ufeffa: 1\nm:\n  k: v  # c\nz: 2".replace("\n", newline)

    def change(docs: list[Any]) -> None:
        docs[0]["m"]["k2"] = "w"

    assert edited(text, change) == \
        "\ufeffa: 1\nm:\n  k: v  # c\n  k2: w\nz: 2".replace("\n", newline)


def test_anchors_elsewhere_are_kept() -> None:
    text = "base: &b {x: 1}\nuse: *b\nm:\n  k: v\n"
    assert edited(text, lambda docs: docs[0]["m"].update(k2="w")) == \
        "base: &b {x: 1}\nuse: *b\nm:\n  k: v\n  k2: w\n"


@pytest.mark.parametrize("text, change", [
    ("base: &b\n  gpu: 1\nuse: *b\n", lambda d: d[0]["use"].pop("gpu")),
    ("base: &b\n  gpu: 1\nm:\n  <<: *b\n  cpu: 2\n", lambda d: d[0]["m"].pop("cpu")),
    ("m:\n  a: 1\n  a: 2\n  b: 3\n", lambda d: d[0]["m"].pop("b")),
], ids=["alias", "merge-key", "duplicate-key"])
def test_changes_that_cannot_be_written_in_place_are_refused(
        text: str, change: Callable[[list[Any]], None]) -> None:
    tree = load_roundtrip(text, "t.yaml")
    change(tree.documents)
    with pytest.raises(InputError, match=r"^t\.yaml: cannot be edited in place: .*by hand"):
        tree.dumps()


def test_convert_keeps_a_crlf_file_crlf(tmp_path: Path) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
           "  - name: c\n    image: i\n    resources:\n      limits:\n"
           "        nvidia.com/gpu: 1\n")
    path = tmp_path / "pod.yaml"
    path.write_bytes(pod.replace("\n", "\r\n").encode())
    [result] = convert_files([str(path)]).files
    assert result.changed
    assert result.text.count("\n") == result.text.count("\r\n")
    assert result.text.replace("\r\n", "\n") == pod.replace(
        "      limits:\n        nvidia.com/gpu: 1\n",
        "      claims:\n      - name: gpu\n") + \
        "  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: gpu-1\n"


def test_a_file_written_as_json_keeps_its_lines_and_quotes() -> None:
    text = '{"a": 1,\n "spec": {"gpu": 1,\n          "cpu": 2}}\n'

    def change(docs: list[Any]) -> None:
        docs[0]["spec"].pop("gpu")
        docs[0]["spec"]["claims"] = [{"name": "gpu"}]

    assert edited(text, change) == \
        '{"a": 1,\n "spec": {"cpu": 2, "claims": [{"name": "gpu"}]}}\n'


@pytest.mark.parametrize("after, expected", [
    (["a", "c"], "l: [a, c]  # c\n"),
    (["a", "b"], "l: [a, b]  # c\n"),
    (["b", "c"], "l: [b, c]  # c\n"),
    (["a", "b", "c", "d"], "l: [a, b, c, d]  # c\n"),
    (["a", "B", "c"], "l: [a, B, c]  # c\n"),
    ([], "l: []  # c\n"),
])
def test_flow_sequences_edited_in_place(after: list[str], expected: str) -> None:
    assert edited("l: [a, b, c]  # c\n", lambda docs: docs[0].update(l=after)) == expected


def test_a_block_scalar_ending_the_file_keeps_its_value_when_lines_follow() -> None:
    text = "a:\n  s: |\n    x\n    y"  # no final newline: the value is "x\ny"
    assert edited(text, lambda docs: docs[0]["a"].update(k="v")) == \
        "a:\n  s: |-\n    x\n    y\n  k: v"


def test_the_last_line_removed_without_a_final_newline() -> None:
    text = "a:\n  k: v\n  gpu: 1"
    assert edited(text, lambda docs: docs[0]["a"].pop("gpu")) == "a:\n  k: v"
