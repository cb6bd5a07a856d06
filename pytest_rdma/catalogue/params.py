"""A kind's declared data: the schema of the `params` its claims carry.

A kind registers a frozen dataclass (`kind(name, params=Schema)`); its fields are the keys a claim of
that kind may put in `params`, a field without a default is one every claim must give. The catalogue's
validation checks each claim's keys against it (naming the claim), and a kind's run reads its data
through `Check.params(Schema)`, typed, instead of looking keys up in a mapping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeVar

P = TypeVar("P")


def schema_problems(schema: type, params: Mapping[str, object]) -> list[str]:
    """What is wrong with a claim's `params` for `schema`: keys it does not declare, and required keys missing."""
    fields = {f.name: f for f in dataclasses.fields(schema)}
    problems = [
        f"params: {key!r} is not a field of {schema.__name__} (declared: {', '.join(sorted(fields)) or 'none'})"
        for key in params
        if key not in fields
    ]
    problems += [
        f"params: {name!r} is required by {schema.__name__}"
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and name not in params
    ]
    return problems


def read_params(schema: type[P], params: Mapping[str, object]) -> P:
    """The claim's data (with the case's axis values put in) as an instance of the kind's schema."""
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"{schema!r}: a kind's params schema is a dataclass")
    problems = schema_problems(schema, params)
    if problems:
        raise ValueError("; ".join(problems))
    built: P = schema(**params)
    return built
