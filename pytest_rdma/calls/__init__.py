"""The one call layer: every verb call of a check goes through `Calls.invoke`.

It resolves the catalogue's values (device facts, resources, flag names) into C arguments,
calls libibverbs through the ctypes binding (pytest_rdma.ibv), reads back what the verb wrote,
judges the return against the verb's convention, and records the call. The record of a
check's calls is written once and read everywhere: it becomes the C and Python reproducers
(render.py), the report's steps, and the evidence of the verdict.

Roles, one module each:
- record.py: Handle, Sym, StructArg and Call, the recorded facts (pure data);
- values.py: catalogue values -> concrete values (device facts, axes, earlier results);
- marshal.py: concrete values <-> ctypes, by the C types of the verb's parameters;
- convention.py: what a raw return means for the verb's return convention;
- invoke.py: Calls, the recorder a check calls through;
- render.py: records -> C program, Python script, step lines.
"""
