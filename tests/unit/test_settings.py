"""Settings checked when the session starts, so that a run never fails half way on its own outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma import settings as settings_module


def test_an_output_this_user_cannot_write_is_a_usage_error_before_any_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite's own tests run as root, which os.access lets write anywhere: stand in for a user.
    monkeypatch.setattr(settings_module.os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(pytest.UsageError) as raised:
        settings_module._check_writable("--rdma-reproducers", tmp_path / "rdma-reproducers")
    said = str(raised.value)
    assert f"--rdma-reproducers {tmp_path / 'rdma-reproducers'}: {tmp_path} is not writable by this user" in said
    assert "give --rdma-reproducers a path you can write" in said
    settings_module._check_writable("--rdma-json", tmp_path.parent / "results.json")  # writable: no error
