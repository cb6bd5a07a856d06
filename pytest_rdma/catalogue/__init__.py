"""The catalogue's vocabulary, flag sets and self-validation (the data lives in pytest_rdma.verbs)."""
