"""Checks that a converted file's diff is the change and nothing else (shared by the tests)."""

from __future__ import annotations

import difflib
import re

from dralab.migrate.convert import ConvertedFile

_SECTION = {"limits", "requests", "resources", "nodeSelector"}
_AFFINITY = {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
             "nodeSelectorTerms", "matchExpressions", "key", "operator", "values"}
_ENTRY = re.compile(r"^(?:-\s+)?(?P<key>[\"']?[^\"':#]+[\"']?)\s*:(?:\s+(?P<value>.*?))?\s*$")


_BLOCK = re.compile(r"^(.*[:-] +[|>][0-9]*)[+-]?$")


def _chomped(line: str) -> str:
    match = _BLOCK.match(line)
    assert match is not None
    return match.group(1) + "-"


def _unquote(text: str) -> str:
    return text.strip().strip("\"'")


def _split(line: str) -> tuple[str, str | None]:
    """(text, trailing comment) of a diff line; a whole-line comment is ('', comment)."""
    stripped = line.strip()
    if stripped.startswith("#"):
        return "", stripped
    match = re.search(r"\s#.*$", stripped)
    if match and stripped.count('"') % 2 == 0 and stripped.count("'") % 2 == 0:
        return stripped[:match.start()].rstrip(), match.group().strip()
    return stripped, None


def _diff(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:])
    return removed, added


def allowed(result: ConvertedFile) -> tuple[set[str], set[str], set[str], bool]:
    """(resources and selector keys removed, claim names, template names, affinity moved)."""
    removed: set[str] = set()
    claims: set[str] = set()
    templates: set[str] = set()
    affinity = False
    for plan in result.plans:
        if not plan.changes:
            continue
        for edit in plan.edits:
            removed.update(edit.selector_keys)
            affinity |= bool(edit.affinity_exprs)
            # Parameters the plan sets (e.g. a GPU count a controller reads) change too.
            removed.update(str(key) for _, key, _ in getattr(edit, "params", ()))
            for claim in edit.claims:
                removed.update(claim.removed)
                claims.add(claim.claim)
                templates.add(claim.template)
    return removed, claims, templates, affinity


def check_minimal_diff(name: str, before: str, result: ConvertedFile) -> None:
    """The unified diff of ``before`` and ``result.text`` holds only lines of the change: the
    GPU resources, selectors and parameters the plan removes or sets (and the sections left
    empty), the claim lines it adds, and the comments of removed lines; every comment of
    ``before`` is still there."""
    removed, added = _diff(before, result.text)
    if not result.changed:
        assert result.text == before
        return
    keys, claims, templates, affinity = allowed(result)
    kept_comments = {c for line in removed for c in [_split(line)[1]] if c}
    # A block scalar ending a file without a final newline gets strip chomping (`|` ->
    # `|-`) when lines follow it: its value stays without the line break.
    chomped = {_chomped(line) for line in removed if _BLOCK.match(line)}
    for line in removed:
        if _BLOCK.match(line) and _chomped(line) in added:
            continue
        text, _ = _split(line)
        match = _ENTRY.match(text)
        assert match is not None or (affinity and text.startswith("- ")), \
            f"{name}: removed line not part of the change: {line!r}"
        if match is None:
            continue
        key = _unquote(match.group("key"))
        assert key in keys or key in _SECTION or (affinity and key in _AFFINITY), \
            f"{name}: removed line not part of the change: {line!r}"
    for line in added:
        if line in chomped:
            continue
        text, comment = _split(line)
        if not text:
            assert comment in kept_comments, f"{name}: a comment that was not there: {line!r}"
            continue
        match = _ENTRY.match(text)
        assert match is not None, f"{name}: added line not part of the change: {line!r}"
        key, value = _unquote(match.group("key")), _unquote(match.group("value") or "")
        assert (key in ("claims", "resources", "resourceClaims") and not value) \
            or (key == "resources" and value.startswith("{")) \
            or (key == "name" and value in claims) \
            or (key == "resourceClaimTemplateName" and value in templates) \
            or key in keys, f"{name}: added line not part of the change: {line!r}"
    # Every comment of the input is still there (kept where its line was removed).
    for comment in re.findall(r"(?:^|\s)(#.*)$", before, re.MULTILINE):
        assert comment.strip() in result.text, f"{name}: comment lost: {comment!r}"
