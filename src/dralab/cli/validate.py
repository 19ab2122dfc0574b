"""``dralab validate``: check manifests as the API server would."""

from __future__ import annotations

from collections import Counter

import click

from dralab.api.check import validate_documents
from dralab.api.io import read_documents

from .common import (
    EXIT_INPUT,
    feature_gates_option,
    filename_option,
    one_line_errors,
    parse_gates,
)


@click.command("validate")
@filename_option
@feature_gates_option
@one_line_errors
def validate_cmd(filenames: tuple[str, ...], feature_gates: str) -> None:
    """Validate objects as the Kubernetes 1.37 API server does.

    Prints one line per problem (FILE[:DOC] Kind namespace/name: field.path: message)
    and exits 2 if anything is invalid; otherwise prints a one-line summary.
    """
    gates = parse_gates(feature_gates)
    docs = read_documents(filenames)
    problems = validate_documents(docs, gates)
    for problem in problems:
        click.echo(str(problem))
    if problems:
        bad = len({p.where for p in problems})
        click.echo(f"{len(problems)} problem(s) in {bad} of {len(docs)} object(s)", err=True)
        raise SystemExit(EXIT_INPUT)
    kinds = Counter(d.data.get("kind", "?") for d in docs)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    click.echo(f"{len(docs)} object(s) valid ({summary})" if docs else "no objects found")
