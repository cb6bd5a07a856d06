"""The common shape of a guard: look at each check once its teardown has run."""

from __future__ import annotations

from collections.abc import Generator

import pytest


class AfterTeardown:
    """Calls `_check(item, teardown_failed)` after every check's teardown, failed or not.

    Checking after teardown means function-scoped fixtures have freed what they made, so
    what is left over belongs to the check itself.
    """

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
        failed = False
        try:
            return (yield)
        except BaseException:
            failed = True
            raise
        finally:
            self._check(item, failed)

    def _check(self, item: pytest.Item, teardown_failed: bool) -> None:
        raise NotImplementedError
