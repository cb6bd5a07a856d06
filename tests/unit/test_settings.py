"""Settings checked when the session starts, so that a run never fails half way on its own outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rdma import writable


def test_an_output_this_user_cannot_write_is_named_before_any_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The suite's own tests run as root, which os.access lets write anywhere: stand in for a user.
    monkeypatch.setattr(writable.os, "access", lambda path, mode: Path(path) != tmp_path)
    said = writable.problem(tmp_path / "rdma-reproducers", writable.DIRECTORY, "reproducers")
    assert f"{tmp_path} is not writable by this user" in said
    assert "give a path you can write" in said
    assert writable.problem(tmp_path.parent / "results.json", writable.FILE, "results.json") == ""  # writable
