"""The command line from Python: `python -m gpuk` and the `gpuk` console script (pyproject.toml's
[project.scripts]) run the package's bin/gpuk with the same arguments, output and exit status,
from any directory."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gpuk
from conftest import REPO


def _cli(*args, cwd):
    return subprocess.run([str(gpuk.executable()), *args], cwd=cwd, capture_output=True, text=True)


def _console_script_target():
    """`gpuk = "module:function"` of pyproject.toml's [project.scripts]."""
    text = (REPO / "pyproject.toml").read_text()
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?:^\[|\Z)", text, re.S | re.M)
    assert section, "pyproject.toml has no [project.scripts]"
    entry = re.search(r'^gpuk\s*=\s*"([\w.]+):(\w+)"', section.group(1), re.M)
    assert entry, "pyproject.toml's [project.scripts] has no gpuk"
    return entry.group(1), entry.group(2)


def _console_script(tmp_path):
    """The script pip writes for the entry point (a wrapper that imports it and exits with what it
    returns), for this interpreter and this package."""
    module, function = _console_script_target()
    script = tmp_path / "bin" / "gpuk"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
                      f"sys.exit({function}())\n")
    script.chmod(0o755)
    return script


def _environment():
    # The package as this process imports it, by an absolute path (the test runs elsewhere).
    env = dict(os.environ)
    package_parent = str(Path(os.path.abspath(gpuk.__file__)).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_parent, *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.fixture
def elsewhere(tmp_path):
    where = tmp_path / "elsewhere"
    where.mkdir()
    return where


def _commands(tmp_path):
    return {"python -m gpuk": [sys.executable, "-m", "gpuk"], "gpuk (console script)": [str(_console_script(tmp_path))]}


def test_python_m_gpuk_and_the_console_script_are_the_cli(tmp_path, elsewhere):
    env = _environment()
    expected = _cli("list", cwd=elsewhere)
    assert expected.returncode == 0, expected.stderr
    for name, command in _commands(tmp_path).items():
        out = subprocess.run([*command, "list"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert out.returncode == 0, (name, out.stderr)
        assert out.stdout == expected.stdout, name
        version = subprocess.run([*command, "--version"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert version.returncode == 0 and gpuk.__version__ in version.stdout, (name, version)


def test_python_m_gpuk_and_the_console_script_keep_the_clis_exit_status_and_words(tmp_path, elsewhere):
    env = _environment()
    config = elsewhere / "bad.yaml"
    config.write_text("family: reduce\noperation: argmax\nsize: 1000\nrepeets: 5\n")
    for name, command in _commands(tmp_path).items():
        out = subprocess.run([*command, "bogus"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert out.returncode == 2 and "unknown command 'bogus'" in out.stderr, (name, out)
        # A relative path is the caller's: the command runs in the caller's directory.
        out = subprocess.run([*command, "check", "bad.yaml"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert out.returncode == 2 and "bad.yaml:4:1" in out.stderr and "repeats" in out.stderr, (name, out)
        out = subprocess.run([*command, "--help"], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert out.returncode == 0 and "Usage: gpuk " in out.stdout, (name, out)


def test_an_installed_console_script_is_this_packages():
    # In an environment where the package is installed (tools/dev/test_wheel.sh, tools/setup.sh's .venv),
    # the `gpuk` beside the interpreter runs this package's CLI.
    script = Path(sys.executable).parent / "gpuk"
    if not script.exists():
        pytest.skip(f"no gpuk console script beside {sys.executable}: the package is not pip-installed here")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and gpuk.__version__ in out.stdout, out
