# SPDX-License-Identifier: MIT
"""The package installs offline, as its README says: pip into a venv made
with Debian's python3 (--system-site-packages: requests and websocket
from Debian), and cmake --install into a staging prefix."""
import glob
import os
import shutil
import subprocess

import pytest

from conftest import PKG_ROOT

PY = "/usr/bin/python3"


def source_copy(workdir):
    """The package's files without build leftovers: pip builds in its
    source tree, which the suite never writes to."""
    dst = os.path.join(workdir, "src")
    shutil.copytree(PKG_ROOT, dst, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    return dst


def test_pip_install_into_a_venv_offline(workdir):
    if not os.path.exists(PY):
        pytest.skip("no Debian python3 at /usr/bin/python3")
    venv = os.path.join(workdir, "venv")
    # Debian's pip (the one the venv would get a copy of) installs into
    # the venv through --python: seeding a pip into every test venv
    # (ensurepip) takes longer than everything else here.
    subprocess.run([PY, "-m", "venv", "--system-site-packages",
                    "--without-pip", venv], check=True, timeout=120)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([PY, "-m", "pip", "--python",
                        os.path.join(venv, "bin", "python"), "install", "-q",
                        "--no-build-isolation", source_copy(workdir)],
                       capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                        "import tunerd, requests, websocket; "
                        "print(tunerd.__file__, tunerd.__version__)"],
                       capture_output=True, text=True, env=env,
                       cwd=workdir, timeout=60)
    assert r.returncode == 0, r.stderr
    path, version = r.stdout.split()
    assert path.startswith(venv) and version == "0.1.0"


def test_cmake_install_stages_the_package(workdir):
    build = os.environ.get("TUNERD_BUILD_DIR")
    if not build:
        pytest.skip("TUNERD_BUILD_DIR unset: run through ctest")
    stage = os.path.join(workdir, "stage")
    subprocess.run(["cmake", "--install", build, "--component", "python",
                    "--prefix", stage], check=True, capture_output=True,
                   timeout=60)
    site = os.path.join(stage, os.environ["TUNERD_PYTHON_DIR"])
    assert os.path.exists(os.path.join(site, "tunerd", "py.typed"))
    found = sorted(os.path.basename(p)
                   for p in glob.glob(os.path.join(site, "tunerd", "*.py")))
    want = sorted(os.path.basename(p) for p in
                  glob.glob(os.path.join(PKG_ROOT, "tunerd", "*.py")))
    assert found == want
    env = dict(os.environ, PYTHONPATH=site)
    r = subprocess.run([PY, "-c", "import tunerd; print(tunerd.__file__)"],
                       capture_output=True, text=True, env=env, cwd=workdir,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(site)
