"""The Allure HTML report of one or more runs (e.g. the lab's rxe and siw runs together).

Allure 3's command line comes from npm (package "allure"); it is installed once, pinned, into
a cache directory, because Debian does not package it and a global npm install needs root.
The report is a single self-contained index.html (Allure's "singleFile" option), so it opens
from disk, in CI artifacts, and in a headless browser, without a web server. Tests are
grouped as the results are labelled: driver > verb > claim.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

ALLURE_PACKAGE = "allure"
ALLURE_VERSION = "3.18.0"  # pinned: a report must not change because npm moved on
GROUP_BY = ["parentSuite", "suite", "subSuite"]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-rdma" / "allure3"


def allure_cli(cache: Path | None = None) -> Path:
    """The Allure 3 executable, installed from npm into the cache if it is missing or not the pinned one."""
    cache = cache or cache_dir()
    executable = cache / "node_modules" / ".bin" / "allure"
    manifest = cache / "node_modules" / ALLURE_PACKAGE / "package.json"
    if executable.exists() and manifest.exists():
        if json.loads(manifest.read_text()).get("version") == ALLURE_VERSION:
            return executable
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("the Allure 3 report needs Node.js and npm (Debian: apt-get install nodejs npm)")
    cache.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--loglevel", "error",
               f"{ALLURE_PACKAGE}@{ALLURE_VERSION}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0 or not executable.exists():
        raise RuntimeError(f"npm could not install {ALLURE_PACKAGE}@{ALLURE_VERSION} into {cache}:\n"
                           f"{done.stderr.strip()[-2000:]}")
    return executable


def build(results_dirs: Sequence[str | Path], out_dir: str | Path, name: str = "pytest-rdma") -> Path:
    """Generate the HTML report of `results_dirs` (allure-pytest --alluredir output) into out_dir.

    Returns the path of the report's index.html.
    """
    dirs = [Path(d).resolve() for d in results_dirs]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise FileNotFoundError(f"no Allure results directory: {', '.join(missing)}")
    out = Path(out_dir).resolve()
    executable = allure_cli()
    with tempfile.TemporaryDirectory(prefix="pytest-rdma-allure-") as scratch:
        config = Path(scratch) / "allurerc.json"
        config.write_text(json.dumps({"name": name, "plugins": {"awesome": {"options": {
            "singleFile": True, "reportName": name, "groupBy": GROUP_BY}}}}))
        command = [str(executable), "generate", "--config", str(config), "--output", str(out),
                   *map(str, dirs)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                              env={**os.environ, "NO_COLOR": "1"}, cwd=scratch)
    index = out / "index.html"
    if done.returncode != 0 or not index.exists():
        output = (done.stdout + done.stderr)[-2000:]
        raise RuntimeError(f"allure generate failed ({done.returncode}):\n{output}")
    return index
