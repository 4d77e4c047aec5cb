"""An installed wheel works outside the checkout: it carries the schemas, nginx.conf and templates."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from ..conftest import ROOT, TINY


@pytest.mark.slow  # a wheel built and installed with its dependencies: a minute
def test_a_wheel_installed_in_a_fresh_venv_builds_outside_the_checkout(tmp_path):
    wheels, venv, elsewhere = tmp_path / "wheels", tmp_path / "venv", tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A copy of the source (links kept), so no stale build/ folder of the checkout ends up in the wheel.
    source = tmp_path / "source"
    leave_out = shutil.ignore_patterns(".git", "site", "data", "test-output", "*.egg-info", ".hypothesis",
                                       "__pycache__")
    shutil.copytree(ROOT, source, symlinks=True, ignore=lambda folder, names: leave_out(folder, names) | (
        {"build"} & set(names) if folder == str(ROOT) else set()))  # generator/building/ is the package's
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(source), "-w", str(wheels)],
                   check=True, cwd=tmp_path, timeout=600)
    (wheel,) = wheels.glob("riskapi-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=600)
    # the package imported is the installed one, not the checkout
    where = subprocess.run([venv / "bin" / "python", "-c", "import generator; print(generator.__file__)"],
                           cwd=elsewhere, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where
    site = elsewhere / "site"
    built = subprocess.run([venv / "bin" / "riskapi", "build", "--data", str(TINY), "--site", str(site)],
                           cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    assert built.stdout.startswith("published release")
    # schemas validated it, and the reference nginx.conf is there for `riskapi nginx-config`
    assert (site / "current" / "api" / "v1" / "openapi.json").is_file()
    config = subprocess.run([venv / "bin" / "python", "-c",
                             "from generator.contract.resources import NGINX_CONF, SCHEMA_DIR; "
                             "print(NGINX_CONF.read_text().count('server'), len(list(SCHEMA_DIR.glob('*.json'))))"],
                            cwd=elsewhere, capture_output=True, text=True, check=True).stdout.split()
    assert int(config[0]) > 0 and int(config[1]) == len(list((ROOT / "schemas").glob("*.json")))
