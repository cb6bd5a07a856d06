"""A kind's sub-behaviours: functions registered by the name a claim's params picks them with.

A kind whose claims choose among a few ways of running (the state table's `rule`, a refused post's
`problem`, an access fault's `fault`, what follows a window's bind, `then`) keeps them in a
`Behaviours` registry instead of an if-chain on the string: each way is a small function of its own,
registered under its name, and the kind names the registry when it registers (`kind(...,
behaviours=(RULES,))`), so the catalogue's validation knows every name a claim may use and names
the known ones when a claim uses another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., object])


class Named(Protocol):
    """What a kind's registration keeps of its sub-behaviours: the params key, and the names it knows."""

    @property
    def param(self) -> str: ...

    def names(self) -> frozenset[str]: ...


class Behaviours(Generic[F]):
    """The functions a params key (`param`) picks by name."""

    def __init__(self, param: str) -> None:
        self.param = param
        self.known: dict[str, F] = {}

    def register(self, name: str) -> Callable[[F], F]:
        def add(function: F) -> F:
            if name in self.known:
                raise ValueError(f"{self.param} {name!r} registered twice")
            self.known[name] = function
            return function

        return add

    def names(self) -> frozenset[str]:
        return frozenset(self.known)

    def __getitem__(self, name: str) -> F:
        """The function named; an unknown name (which validation keeps out of the catalogue) names the known."""
        try:
            return self.known[name]
        except KeyError:
            raise ValueError(f"{self.param} {name!r} is not one of: {', '.join(sorted(self.known))}") from None
