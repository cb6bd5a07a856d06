"""Conformance checks generated from the verb catalogue (pytest_rdma/verbs.py).

There is deliberately no test code here: each verb's claims expand into cases through their
kinds (pytest_rdma/kinds). To add checks, describe a verb in the catalogue, or in a module of
your own named by the `rdma_catalogue_extra` setting.
"""

from pytest_rdma.explore.items import explore_tests
from pytest_rdma.generate import active, generated_tests

globals().update(generated_tests(active().verbs))
# With --rdma-explore: test_explore, the exploration and each of its findings (pytest_rdma/explore/items.py).
globals().update(explore_tests())
