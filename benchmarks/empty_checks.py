"""pytest's floor for the benchmark: N empty tests, run without the plugin (`-p no:rdma`).

What pytest itself costs per test on this VM (its hooks, capture, fixtures' bookkeeping, the
terminal), measured in the same boot as the checks, so the plugin's own cost per check is what the
checks cost beyond the bare loop's verbs and beyond this. Parametrized, as the generated checks are;
N is $PYTEST_RDMA_EMPTY_TESTS (the number of checks it is set against). Not named test_*: it runs
only when given by path (benchmarks/lab_overhead.py's floor step).
"""

import os

import pytest

COUNT = int(os.environ.get("PYTEST_RDMA_EMPTY_TESTS", "484"))


@pytest.mark.parametrize("case", range(COUNT))
def test_empty(case: int) -> None:
    pass
