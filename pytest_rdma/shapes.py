"""Shared names for loosely structured data.

Results files and Allure's files hold plain JSON, and some of it has a shape known only as "what
json.dumps writes and json.loads reads back" (a deviation's observation, Allure's categories). These
names say so, so that the rest of the package is typed without typing's unchecked catch-all type, which
stays at the ctypes boundary (pytest_rdma/ibv/, pytest_rdma/calls/marshal.py) where a value is
whatever C hands back. A reader narrows a ``Json`` value (``isinstance``) where it needs a concrete
type; records whose keys are known have TypedDicts of their own (report/record.py).

The aliases are evaluated at runtime on Python 3.9, so they use ``typing.Union`` and strings
for the recursive parts rather than ``X | Y``.
"""

from __future__ import annotations

from typing import Union

# One JSON value: what json.loads returns and json.dumps takes.
Json = Union[str, int, float, bool, None, list["Json"], dict[str, "Json"]]

# A JSON object whose keys are not fixed: a deviation's observation, an Allure category.
JsonObject = dict[str, Json]
