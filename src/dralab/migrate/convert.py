"""``dralab migrate convert``: rewrite the GPU workloads of some files to DRA, file by file.

Each input file gets one output file under ``-o DIR`` (same relative path as
under its ``-f`` directory; a file given by itself keeps its base name), with
every GPU workload rewritten (``rewrite``) and everything else as it was: YAML
through the round-trip seam (``roundtrip``: comments, key order, quoting kept),
JSON re-encoded in its key order. Beside them: ``resourceclaimtemplates.yaml``
(one template per distinct device need and namespace), ``deviceclasses.yaml``
(the DeviceClasses the templates use, as proposed to the platform team) and
``migration-summary.txt`` (YAML text; per file and workload: what changed, what could not
be converted and why).

Safety: meaning is read with YAML 1.1 rules as Kubernetes reads it; each
rewritten YAML file is read back and must equal the planned result, or nothing
is written. Outputs are written atomically, never over an input, and all
checks run before the first write.
"""

from __future__ import annotations

import copy
import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dralab.api.base import KubeObject
from dralab.api.errors import InputError, LoadError
from dralab.api.io import MANIFEST_SUFFIXES, Document, dumps, read_documents, to_list, write_files
from dralab.api.resource import DeviceClass
from dralab.fleet.classes import driver_classes

from .podsets import PathKey, at_path, identity, path_text
from .refusals import refuse_invalid, share_memory_amount
from .rewrite import DocumentPlan, apply_edits, plan_document
from .roundtrip import load_roundtrip
from .shapes import ClassChooser, TemplateNames, claim_template
from .unrendered import SkippedFile, unrendered_file

__all__ = [
    "CLAIM_TEMPLATES_FILE",
    "DEVICE_CLASSES_FILE",
    "SUMMARY_FILE",
    "Conversion",
    "ConvertedFile",
    "convert_files",
    "convert_sources",
    "input_files",
    "write_conversion",
]

CLAIM_TEMPLATES_FILE = "resourceclaimtemplates.yaml"
DEVICE_CLASSES_FILE = "deviceclasses.yaml"
# Not a manifest suffix: `kubectl apply -f DIR` and `dralab validate -f DIR` skip it.
SUMMARY_FILE = "migration-summary.txt"
GENERATED = (CLAIM_TEMPLATES_FILE, DEVICE_CLASSES_FILE, SUMMARY_FILE)


@dataclass(slots=True)
class ConvertedFile:
    """One input file: its documents, their plans, and the text to write."""

    source: str
    output: str                      # relative to the output directory
    documents: list[Document]
    plans: list[DocumentPlan]
    text: str
    converted: list[Any] = field(default_factory=list)  # plain documents after conversion

    @property
    def changed(self) -> bool:
        return any(p.changes for p in self.plans)


@dataclass(slots=True)
class Conversion:
    """``skipped``: input files not read (unrendered templates), with why."""

    files: list[ConvertedFile]
    names: TemplateNames
    templates: list[KubeObject]
    classes: list[DeviceClass]
    skipped: list[SkippedFile] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """What changed per file and workload, what could not be converted and why."""
        out_files = []
        for f in self.files:
            workloads = []
            for doc, plan in zip(f.documents, f.plans, strict=True):
                entry = _plan_summary(doc, plan)
                if entry is not None:
                    workloads.append(entry)
            out_files.append({"input": f.source, "output": f.output,
                              "changed": f.changed, "workloads": workloads})
        out_files += [{"input": s.path, "skipped": s.why} for s in self.skipped]
        return {"apiVersion": "dralab.dev/v1alpha1", "kind": "MigrationSummary",
                "files": out_files,
                "claimTemplates": [f"{ns}/{name}" if ns else name
                                   for ns, name, _ in self.names.items()],
                "deviceClasses": [c.name for c in self.classes]}


def _plan_summary(doc: Document, plan: DocumentPlan) -> dict[str, Any] | None:
    if plan.workload is None and not plan.problems:
        return None
    kind, namespace, name = identity(doc.data)
    ref = f"{namespace}/{name}" if namespace else name
    if plan.problems:
        return {"kind": kind, "name": ref, "result": "not converted", "why": plan.problems}
    if not plan.edits:
        return {"kind": kind, "name": ref, "result": "unchanged (no GPU resources)"}
    pod_sets = []
    for edit in plan.edits:
        item: dict[str, Any] = {
            "podSet": edit.pod_set.role or "-",
            "claims": [{"claim": c.claim, "container": c.container_name,
                        "template": c.template, "devices": c.need.words(),
                        "removed": list(c.removed)} for c in edit.claims]}
        if edit.translated:
            item["selectors"] = [{"from": a, "to": b} for a, b in edit.translated]
        if edit.kept:
            item["kept"] = edit.kept
        if edit.params:
            item["set"] = [f"{path_text((*where, key))}: {value!r}"
                           for where, key, value in edit.params]
        pod_sets.append(item)
    return {"kind": kind, "name": ref, "result": "converted", "podSets": pod_sets}


def input_files(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(file, output name) for every manifest file the ``-f`` paths name, sorted within a
    directory; symbolic links to directories are not followed (as kubectl -R)."""
    out: list[tuple[str, str]] = []
    for path in paths:
        if path == "-":
            raise InputError("-: convert writes one output per input file; give files or "
                             "directories, not stdin")
        if os.path.isdir(path):
            found = []
            for directory, _, names in os.walk(path):
                found += [os.path.join(directory, n) for n in names
                          if n.lower().endswith(MANIFEST_SUFFIXES)]
            out += [(p, os.path.relpath(p, path)) for p in sorted(found)]
        else:
            out.append((path, os.path.basename(path)))
    return out


def _read_text(path: str) -> str:
    try:
        # Bytes, not text mode: a CRLF file keeps its line ends in the output.
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def _expanded(data: Any, prefix: tuple[PathKey, ...] = ()) -> list[tuple[PathKey, ...]]:
    """Paths of the objects in a parsed document, ``kind: List`` items flattened (as io)."""
    if isinstance(data, dict) and isinstance(data.get("kind"), str) \
            and data["kind"].endswith("List") and isinstance(data.get("items"), list):
        out: list[tuple[PathKey, ...]] = []
        for i, item in enumerate(data["items"]):
            out += _expanded(item, (*prefix, "items", i))
        return out
    return [prefix]


def _planned(docs: list[Document], plans: list[DocumentPlan]) -> list[Any]:
    out = []
    for doc, plan in zip(docs, plans, strict=True):
        data = copy.deepcopy(doc.data)
        if plan.changes:
            apply_edits(data, plan)
        out.append(data)
    return out


def _rewrite_yaml(source: str, text: str, docs: list[Document], plans: list[DocumentPlan],
                  expected: list[Any]) -> str:
    tree = load_roundtrip(text, source)
    targets = [(d, p) for d in tree.documents if d is not None for p in _expanded(d)]
    if len(targets) != len(docs):
        raise InputError(f"{source}: the round-trip reader found {len(targets)} object(s), "
                         f"the YAML 1.1 reader {len(docs)}; convert this file by hand")
    for (root, path), plan in zip(targets, plans, strict=True):
        if plan.changes:
            apply_edits(at_path(root, path), plan)
    out = tree.dumps()
    back = [d.data for d in read_documents(["-"], stdin=io.StringIO(out, newline=None))]
    if back != expected:
        raise InputError(f"{source}: the rewritten file does not read back as planned "
                         "(YAML features the round trip cannot keep, e.g. anchors or merge "
                         "keys); convert this file by hand")
    return out


def _rewrite_json(source: str, text: str, plans: list[DocumentPlan]) -> str:
    data = json.loads(text)
    roots = data if isinstance(data, list) else [data]
    targets = [(r, p) for r in roots for p in _expanded(r)]
    if len(targets) != len(plans):
        raise InputError(f"{source}: unexpected JSON layout; convert this file by hand")
    for (root, path), plan in zip(targets, plans, strict=True):
        if plan.changes:
            apply_edits(at_path(root, path), plan)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _classes_used(names: TemplateNames, class_for: ClassChooser | None) -> list[DeviceClass]:
    wanted = {"gpu.nvidia.com" if n.type != "mig" else "mig.nvidia.com"
              for _, _, n in names.items() if class_for is None or class_for(n) is None}
    return [c for c in driver_classes(True, False, False, ()) if c.name in wanted]


def convert_sources(sources: Iterable[tuple[str, str, str, list[Document]]],
                    share_memory: str = "8Gi", class_for: ClassChooser | None = None
                    ) -> Conversion:
    """Plan and render the conversion of (source, output name, text, documents) items;
    nothing is written. ValidationFailed (every problem) when a workload is one the API
    server would refuse; ValueError for a share of memory that is not a positive,
    whole number of bytes."""
    share_memory = share_memory_amount(share_memory)
    sources = list(sources)
    refuse_invalid([d for *_, docs in sources for d in docs])
    names = TemplateNames()
    files: list[ConvertedFile] = []
    for source, output, text, docs in sources:
        plans = [plan_document(d.data, names, share_memory) for d in docs]
        converted = _planned(docs, plans)
        result = ConvertedFile(source, output, docs, plans, text, converted)
        if result.changed:
            result.text = _rewrite_json(source, text, plans) \
                if source.lower().endswith(".json") else \
                _rewrite_yaml(source, text, docs, plans, converted)
        files.append(result)
    templates: list[KubeObject] = [claim_template(ns, name, need, class_for)
                                   for ns, name, need in names.items()]
    return Conversion(files, names, templates, _classes_used(names, class_for))


def convert_files(paths: Sequence[str], share_memory: str = "8Gi",
                  class_for: ClassChooser | None = None) -> Conversion:
    """Plan and render the conversion of every file ``paths`` name (nothing is written)."""
    skipped: list[SkippedFile] = []

    def read(source: str, output: str) -> tuple[str, str, str, list[Document]] | None:
        try:
            docs = read_documents([source])  # first: its errors are those of every verb
        except LoadError:
            skip = unrendered_file(source)
            if skip is None:
                raise
            skipped.append(skip)
            return None
        return source, output, _read_text(source), docs

    items = [read(s, o) for s, o in input_files(paths)]
    conversion = convert_sources((i for i in items if i is not None), share_memory, class_for)
    conversion.skipped = skipped
    return conversion


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


DRIVER_CLASSES_NOTE = (
    "# DeviceClasses the claim templates use. The NVIDIA DRA driver's Helm chart installs\n"
    "# gpu.nvidia.com and mig.nvidia.com; apply only those your cluster lacks.\n")


def write_conversion(conversion: Conversion, out_dir: str, inputs: Sequence[str],
                     extra: dict[str, str] | None = None,
                     classes_note: str = DRIVER_CLASSES_NOTE) -> list[str]:
    """Write every output under ``out_dir`` (and ``extra``: name -> text); InputError
    (before anything is written) when an output would replace an input or two outputs
    share a path. The paths written."""
    outputs: dict[str, str] = dict(extra or {})
    for f in conversion.files:
        target = os.path.join(out_dir, f.output)
        if os.path.normpath(f.output) in GENERATED or f.output in outputs:
            raise InputError(f"{f.source}: its output {target} would collide with another "
                             "output; give the files from different directories")
        outputs[f.output] = f.text
    outputs[CLAIM_TEMPLATES_FILE] = dumps(to_list(conversion.templates))
    outputs[DEVICE_CLASSES_FILE] = classes_note + dumps(to_list(conversion.classes))
    outputs[SUMMARY_FILE] = dumps(conversion.summary())
    sources = [f.source for f in conversion.files]
    for name in outputs:
        target = os.path.join(out_dir, name)
        for src in [*sources, *inputs]:
            if _same_file(target, src) or os.path.abspath(target) == os.path.abspath(src):
                raise InputError(f"{target}: would write over the input {src}; choose another "
                                 "output directory")
    if any(os.path.isdir(p) and _same_file(out_dir, p) for p in inputs):
        raise InputError(f"{out_dir}: is an input directory; choose another output directory")
    return write_files(out_dir, outputs)
