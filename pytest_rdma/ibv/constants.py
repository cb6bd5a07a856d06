"""Every named constant a catalogue value may use: verbs.h's enums and defines, and rdma_cma.h's."""

from __future__ import annotations

from pytest_rdma.ibv import rdmacm_abi
from pytest_rdma.ibv.enums import VALUES as IBV_VALUES

VALUES: dict[str, int] = {**IBV_VALUES, **rdmacm_abi.VALUES}
