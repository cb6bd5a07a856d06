"""The conformance suite, shipped in the package as pytest_rdma.suites.

`pytest --rdma-dev NAME` with no test path runs it; so does `pytest --pyargs pytest_rdma.suites`.
"""
