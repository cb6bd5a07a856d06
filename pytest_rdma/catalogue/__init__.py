"""The catalogue's vocabulary (model.py), its index (index.py) and validation (validate.py).

The data itself lives in pytest_rdma/verbs.py.
"""
