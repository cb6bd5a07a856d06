"""Check kinds. Importing this package registers every kind (see registry.py)."""

from pytest_rdma.checks import (
    create_qp,  # noqa: F401
    device_basics,  # noqa: F401
    flow,  # noqa: F401
    modify_qp,  # noqa: F401
    query_device,  # noqa: F401
    registry,  # noqa: F401
)
