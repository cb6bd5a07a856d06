"""The catalogue as the suite uses it: verbs by name, and the one verb that makes each resource.

`Catalogue.of(verbs)` indexes a tuple of Verb entries (pytest_rdma.verbs plus any extra
descriptions). A resource kind is made by the verb whose contract produces it and names its
destructor, and moved between states by the verb whose contract moves it; there is exactly
one of each, which validation checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pytest_rdma.catalogue.model import Verb


@dataclass(frozen=True)
class Catalogue:
    verbs: tuple[Verb, ...]
    by_name: Mapping[str, Verb]
    producers: Mapping[str, Verb]  # resource kind -> the verb that makes it
    movers: Mapping[str, Verb]  # resource kind -> the verb that moves it between states

    @classmethod
    def of(cls, verbs: Iterable[Verb]) -> Catalogue:
        verbs = tuple(verbs)
        producers: dict[str, Verb] = {}
        movers: dict[str, Verb] = {}
        for verb in verbs:
            if verb.contract.makes:
                for made in verb.contract.produces:
                    producers.setdefault(made.kind, verb)
            if verb.tables.get("walk"):
                for move in verb.contract.moves:
                    movers.setdefault(move.resource, verb)
        return cls(
            verbs,
            MappingProxyType({verb.name: verb for verb in verbs}),
            MappingProxyType(producers),
            MappingProxyType(movers),
        )

    def __getitem__(self, name: str) -> Verb:
        return self.by_name[name]

    def producer(self, kind: str) -> Verb:
        try:
            return self.producers[kind]
        except KeyError:
            raise LookupError(
                f"no verb of the catalogue makes a {kind!r} (contract produces it with makes=True)"
            ) from None

    def mover(self, kind: str) -> Verb:
        try:
            return self.movers[kind]
        except KeyError:
            raise LookupError(f"no verb of the catalogue moves a {kind!r} between states") from None
