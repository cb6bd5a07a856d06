"""Benchmarks of pytest-rdma itself (not tests): see the README's "Benchmarks" section."""
