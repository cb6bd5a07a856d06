"""pytest-rdma: a conformance suite for RDMA verbs providers, generated from the man pages."""

__version__ = "0.1.0"
