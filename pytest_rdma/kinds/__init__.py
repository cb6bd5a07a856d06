"""Claim kinds: the small vocabulary of how a promise is checked.

A kind has two halves: `expand(verb, claim)` gives the claim's cases (pure, at collection,
on any host; by default one per combination of the claim's axes) and `run(check)` exercises
one case on the device, returning when it conforms and raising an outcome otherwise
(pytest_rdma.outcomes). A catalogue claim names its kind, so a verb whose claims use known
kinds needs no code.

Modules, by what the kinds look at:
- calls.py: the verb's own call (succeeds, refused, distinct, gated, limit);
- queries.py: what query verbs report (relation, index-bounds, exact-table);
- state_table.py: a resource's state machine from a table (state-table);
- counterpart.py: verbs of an API family without a provider here;
- check.py: the context every run gets (resources, calls, expectations);
- state_machine.py: a resource's states and the walk between them, from its mover's tables;
- registry.py: the registry and its decorator; load.py: every kind, registered;
- behaviours.py: the registry of a kind's sub-behaviours, picked by a params key's name.

A kind declares its claims' data as a frozen dataclass (`kind(name, params=Schema)`), read
typed with `check.params(Schema)` (pytest_rdma/catalogue/params.py).
"""
