"""A kind's declared data: the schema of the `params` its claims carry.

A kind registers a frozen dataclass (`kind(name, params=Schema)`); its fields are the keys a claim of
that kind may put in `params`, a field without a default is one every claim must give. The catalogue's
validation checks each claim's keys against it (naming the claim), and a kind's run reads its data
through `Check.params(Schema)`, typed, instead of looking keys up in a mapping.

Values are checked against the fields' types too: at validation a value may still be a placeholder (a
`Var` of an axis, a string with "{axis}" in it), which the case's axis value replaces, so placeholders
pass there; when a run reads its params (after substitution) every value must have its field's type.
The check is of the outer type (an int, a str, a tuple, a mapping, a Cap): what a tuple or a mapping
holds is the kind's to read.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Collection, Mapping
from typing import TypeVar, Union

from pytest_rdma.catalogue.model import Var

P = TypeVar("P")


def schema_problems(schema: type, params: Mapping[str, object], *, placeholders: bool = True) -> list[str]:
    """What is wrong with a claim's `params` for `schema`: keys it does not declare, required keys missing,
    and values not of their field's type (with `placeholders`, a Var or an "{axis}" string passes)."""
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
    hints = field_types(schema)
    for key, value in params.items():
        if key not in hints or (placeholders and _placeholder(value)):
            continue
        if not fits(value, hints[key]):
            problems.append(f"params: {key!r} is {value!r}, not {shown(hints[key])} as {schema.__name__} declares it")
    return problems


def behaviour_problems(
    params: Mapping[str, object], named: Mapping[str, Collection[str]], over: Mapping[object, object]
) -> list[str]:
    """Each params key that picks a kind's sub-behaviour by name (`named`: key -> the names registered)
    must name one; a Var of an axis must name one in each of the axis' values (`over`, the claim's axes)."""
    problems = []
    for key, known in named.items():
        if key not in params:
            continue
        for value in _values_of(params[key], over):
            if isinstance(value, str) and "{" in value:
                continue  # an axis fills it in: its values are checked where the axis names them
            if value not in known:
                problems.append(f"params: {key} {value!r} is not one of the kind's: {', '.join(sorted(known))}")
    return problems


def _values_of(value: object, over: Mapping[object, object]) -> list[object]:
    """The values a param takes in the claim's cases: itself, or, for a Var, each value of its axis."""
    if not isinstance(value, Var):
        return [value]
    values: list[object] = []
    for key, options in over.items():
        names = key if isinstance(key, tuple) else (key,)
        if value.name in names and isinstance(options, (tuple, list)):
            at = names.index(value.name)
            values += [option[at] if isinstance(key, tuple) else option for option in options]
    return values


def read_params(schema: type[P], params: Mapping[str, object]) -> P:
    """The claim's data (with the case's axis values put in) as an instance of the kind's schema."""
    if not dataclasses.is_dataclass(schema):
        raise TypeError(f"{schema!r}: a kind's params schema is a dataclass")
    problems = schema_problems(schema, params, placeholders=False)
    if problems:
        raise ValueError("; ".join(problems))
    built: P = schema(**params)
    return built


@functools.cache
def field_types(schema: type) -> dict[str, object]:
    """The schema's fields and their types (resolved: the schemas' modules use postponed annotations)."""
    return typing.get_type_hints(schema)


def fits(value: object, declared: object) -> bool:
    """Whether `value` is of the declared type, by its outer type (see the module's docstring)."""
    if declared is object:
        return True
    origin = typing.get_origin(declared)
    if origin is Union or origin is types.UnionType:
        return any(fits(value, option) for option in typing.get_args(declared))
    if origin is typing.Literal:
        return value in typing.get_args(declared)
    if declared is type(None):
        return value is None
    if typing.is_typeddict(declared):
        return isinstance(value, Mapping)
    target = origin if origin is not None else declared
    if target is tuple:
        return isinstance(value, (tuple, list))  # a catalogue's list is frozen into a tuple
    if target is bool:
        return isinstance(value, bool)
    if target is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(target, type):
        return isinstance(value, target)
    return True


def shown(declared: object) -> str:
    """A declared type as a reader of the error writes it: "int", "str | None", "tuple"."""
    origin = typing.get_origin(declared)
    if origin is Union or origin is types.UnionType:
        return " | ".join(shown(option) for option in typing.get_args(declared))
    target = origin if origin is not None else declared
    return getattr(target, "__name__", str(target))


def _placeholder(value: object) -> bool:
    return isinstance(value, Var) or (isinstance(value, str) and "{" in value)
