"""Conformance checks generated from the verb catalogue (pytest_rdma/verbs.py).

There is deliberately no test code here: each verb's claims expand into cases through
their check kinds (pytest_rdma/checks). To add checks, describe a verb in the catalogue,
or in a module of your own named by the `rdma_catalogue_extra` ini option.
"""

from pytest_rdma.generate import active_catalogue, generated_tests

globals().update(generated_tests(active_catalogue()))
