"""``dralab validate``: check manifests as the API server would."""

from __future__ import annotations

from collections import Counter

import click

from dralab.api.errors import one_line
from dralab.api.io import read_documents
from dralab.fleet import parse_fleet
from dralab.fleet.nvlink import warn_groups
from dralab.validation.check import not_checked, not_checked_reason, validate_documents

from .common import (
    EXIT_INPUT,
    feature_gates_option,
    filename_option,
    one_line_errors,
    parse_gates,
)
from .kinds import fleet_problem, is_fleet


@click.command("validate")
@filename_option
@feature_gates_option
@one_line_errors
def validate_cmd(filenames: tuple[str, ...], feature_gates: str) -> None:
    """Validate objects as the Kubernetes 1.37 API server does.

    Prints one line per problem (FILE[:DOC] Kind namespace/name: field.path: message)
    and exits 2 if anything is invalid; otherwise prints a one-line summary.
    Objects of kinds dralab does not model (ConfigMap, CRDs, ...) are listed as
    not checked and never counted as valid. Older served versions
    (resource.k8s.io/v1beta1, v1beta2) are checked by their own rules;
    removed and unknown versions are problems. A Fleet (dralab.dev/v1alpha1) is
    checked as `dralab fleet` reads it.
    """
    gates = parse_gates(feature_gates)
    docs = read_documents(filenames)
    # A Fleet (dralab's own kind) is checked as `dralab fleet` reads it.
    fleet_lines: list[tuple[str, str]] = []
    for doc in docs:
        if not is_fleet(doc):
            continue
        if (line := fleet_problem(doc)) is not None:
            fleet_lines.append((doc.where, line))
        else:
            # A valid Fleet may still hold NVLink pools that do not scale whole racks.
            warn_groups(parse_fleet(doc.data, doc.where), doc.describe())
    others = [d for d in docs if not is_fleet(d)]
    problems = validate_documents(others, gates)
    unchecked = not_checked(others)
    for problem in problems:
        click.echo(str(problem))
    for _, line in fleet_lines:
        click.echo(one_line(line))
    for doc in unchecked:
        # One line per object, as problem lines: a kind or name may hold a line break.
        where = doc.describe().replace("\r", "\\r").replace("\n", "\\n")
        click.echo(f"{where}: not checked ({not_checked_reason(doc)})")
    tail = f"; {len(unchecked)} not checked" if unchecked else ""
    if problems or fleet_lines:
        bad = len({p.where for p in problems} | {where for where, _ in fleet_lines})
        count = len(problems) + len(fleet_lines)
        click.echo(f"{count} problem(s) in {bad} of {len(docs)} object(s){tail}",
                   err=True)
        raise SystemExit(EXIT_INPUT)
    skipped = {id(d) for d in unchecked}
    checked = [d for d in docs if id(d) not in skipped]
    kinds = Counter(d.data.get("kind", "?") for d in checked)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    if not docs:
        click.echo("no objects found")
    elif checked:
        click.echo(f"{len(checked)} object(s) valid ({summary}){tail}")
    else:
        click.echo(f"no object checked{tail}")
