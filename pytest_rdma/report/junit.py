"""JUnit XML: the drivers under test as testsuite properties (per-test ones: recorder.py)."""

from __future__ import annotations

import pytest

from pytest_rdma.report.results import Results


class JunitProperties:
    def __init__(self, results: Results) -> None:
        self.results = results

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Before junitxml's own sessionfinish, which writes the file.
        try:
            from _pytest.junitxml import xml_key
        except ImportError:  # pragma: no cover - pytest moved it; per-test properties remain
            return
        xml = session.config.stash.get(xml_key, None)
        if xml is None:
            return
        for device, identity in sorted(self.results.identities.items()):
            for key, value in identity.items():
                if key != "name":
                    xml.add_global_property(f"rdma.{device}.{key}", str(value))
        drivers = sorted({identity.get("driver", "") for identity in self.results.identities.values()})
        xml.add_global_property("rdma.drivers", ",".join(d for d in drivers if d))
