"""run, tune, compare and check: the gpuk command line's commands, returning its reports.

They call the `gpuk` executable that ships inside the package (bin/gpuk, next to the library it
links): the run and tune drivers, their fault isolation (a sweep runs in a child process that a
faulting variant may take down) and their report writers live in the CLI and core, and a
faulting kernel must not take the Python process down with it. The report is the one
``--json`` writes, as a dict; errors are the exceptions of the CLI's exit status, with its words.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _gpuk
from ._arrays import check_on_device, paths_arg, resolve
from ._gpuk import CompileError, ConfigError, DeviceError, Error, NoDeviceError

PathLike = Union[str, os.PathLike]


class WrongAnswerError(Error):
    """`run`: the answer failed verification; `tune`: no variant verified (exit status 3).
    ``report`` holds the report."""

    def __init__(self, message: str, report: Optional[dict] = None):
        super().__init__(message)
        self.report = report


class FaultError(DeviceError):
    """A variant faulted or ran past its time limit (exit status 4)."""


_WHERE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): ")


def executable() -> Path:
    """The gpuk command line inside the package (bin/gpuk, beside the native module: in the
    wheel, the build tree's package and an editable install, whose .py files stay in the source
    tree while the module and bin/ are installed)."""
    # The directories as imported (not resolved: the build tree's .py files are links).
    tried = []
    for where in (_gpuk.__file__, __file__):
        exe = Path(os.path.abspath(os.path.dirname(where))) / "bin" / "gpuk"
        if exe.exists():
            return exe
        tried.append(str(exe))
    raise Error(f"the gpuk executable is missing from the package ({' or '.join(dict.fromkeys(tried))}); "
                f"reinstall gpuk")


def _error(status: int, stderr: str, report: Optional[dict] = None) -> Exception:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("gpuk: warning:")]
    message = lines[-1] if lines else f"gpuk exited with status {status}"
    if message.startswith("gpuk: "):
        message = message[len("gpuk: "):]
    message = message.rstrip(".") if status == 5 else message
    if status == 2:
        err = ConfigError(message)
        m = _WHERE.match(message)
        err.file, err.line, err.column = (m["file"], int(m["line"]), int(m["column"])) if m else (None, None, None)
        return err
    if status == 3:
        return WrongAnswerError(message, report)
    if status == 4:
        return FaultError(message)
    if status == 5:
        return NoDeviceError(message)
    return Error(message)


def _gpuk_cli(args: Sequence[str], *, ok=(0,), cwd: Optional[PathLike] = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(executable()), *args], capture_output=True, text=True, cwd=cwd)
    if proc.returncode not in ok:
        raise _error(proc.returncode, proc.stderr)
    return proc


def _path(path: PathLike, what: str = "path") -> str:
    """A path as the CLI's argument: one that starts with '-' is given as ./-name, never read as an
    option (gpuk.check('--help') checks a file of that name)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"{what} takes a path (str or os.PathLike), not {type(path).__name__} ({path!r})")
    text = os.fspath(path)
    if not text:
        raise ConfigError(f"{what}: an empty path")
    return os.path.join(".", text) if text.startswith("-") else text


def _global_args(kernels: Sequence[PathLike], plugins: Sequence[PathLike], cache_dir: Optional[PathLike],
                 tuning_db: Optional[PathLike]) -> List[str]:
    out: List[str] = []
    for k in paths_arg(kernels, "kernels"):
        out += ["--kernels", _path(k, "kernels=")]
    for p in paths_arg(plugins, "plugins"):
        out += ["--plugins", _path(p, "plugins=")]
    if cache_dir is not None:
        out += ["--cache-dir", _path(cache_dir, "cache_dir=")]
    if tuning_db is not None:
        out += ["--tuning-db", _path(tuning_db, "tuning_db=")]
    return out


def to_numpy(x: Any, device: int = 0) -> np.ndarray:
    """A host copy of any array gpuk takes (a device array is copied back; NumPy is as is)."""
    a = resolve(x, "input", device=device, stream=0)
    if a.host is not None:
        return a.host
    check_on_device(a, "input", device, 0)
    host = np.empty(a.shape, a.dtype)
    _gpuk.copy_to_host(device, a.ptr, host.ctypes.data, host.nbytes, 0)
    return host


def _with_report(args: List[str], report: Path, stdout_name: str) -> dict:
    proc = subprocess.run([str(executable()), *args], capture_output=True, text=True)
    data = json.loads(report.read_text()) if report.exists() else None
    if proc.returncode != 0:
        stderr = proc.stderr
        if proc.returncode == 3 and data and not stderr.strip():
            detail = (data.get("verification") or {}).get("detail") or "no variant verified"
            stderr = f"verification failed: {detail}"
        raise _error(proc.returncode, stderr, data)
    if data is None:
        raise Error(f"gpuk {args[0]} wrote no report")
    data.setdefault(stdout_name, proc.stdout)
    return data


def _integer(name: str, value: Any, low: int, high: int) -> str:
    """A keyword's integer checked here, in the keyword's name: the CLI's message would name its
    flag (``--repeats``), which the caller never wrote."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ConfigError(f"{name}={value!r}: an integer from {low} to {high}")
    return str(int(value))


def run(config: PathLike, input: Any = None, *, output: Optional[PathLike] = None, device: Optional[int] = None,
        repeats: Optional[int] = None, tuning: Optional[PathLike] = None, time_limit: Optional[float] = None,
        kernels: Sequence[PathLike] = (), plugins: Sequence[PathLike] = (), cache_dir: Optional[PathLike] = None,
        tuning_db: Optional[PathLike] = None) -> Dict[str, Any]:
    """``gpuk run CONFIG --json``: runs, verifies and times a config; returns its JSON report.

    ``input=`` is the workload instead of the config's data: any array (NumPy, or a device
    array, copied back first), written as the .npy that ``--input`` reads. The printed report
    is under the key ``"text"``. Raises ConfigError (with file:line:col), WrongAnswerError
    (verification failed; ``.report``), FaultError, NoDeviceError, Error.
    """
    with tempfile.TemporaryDirectory(prefix="gpuk-run-") as tmp:
        report = Path(tmp) / "report.json"
        args = ["run", _path(config, "config"), "--json", str(report)]
        if input is not None:
            path = Path(tmp) / "input.npy"
            np.save(path, to_numpy(input, device or 0))
            args += ["--input", str(path)]
        if output is not None:
            args += ["--output", _path(output, "output=")]
        if device is not None:
            args += ["--device", _integer("device", device, 0, 1023)]
        if repeats is not None:
            args += ["--repeats", _integer("repeats", repeats, 1, 1000000)]
        if tuning is not None:
            args += ["--tuning", _path(tuning, "tuning=")]
        if time_limit is not None:
            args += ["--time-limit", str(time_limit)]
        return _with_report(_global_args(kernels, plugins, cache_dir, tuning_db) + args, report, "text")


def tune(config: PathLike, *, strategy: Optional[str] = None, budget: Optional[int] = None,
         seconds: Optional[float] = None, seed: Optional[int] = None, objective: Optional[str] = None,
         device: Optional[int] = None, devices: Optional[str] = None, save: bool = True, fresh: bool = False,
         export: Optional[PathLike] = None, time_limit: Optional[float] = None, threads: Optional[int] = None,
         kernels: Sequence[PathLike] = (), plugins: Sequence[PathLike] = (), cache_dir: Optional[PathLike] = None,
         tuning_db: Optional[PathLike] = None) -> Dict[str, Any]:
    """``gpuk tune CONFIG --json``: sweeps a tune config's variants (each verified, faults
    isolated in a child process); returns the JSON report. The winner goes to the tuning
    database unless ``save=False``, so that a later call naming no kernel (``gpuk.reduce.argmax``)
    picks it. The printed table is under ``"text"``."""
    with tempfile.TemporaryDirectory(prefix="gpuk-tune-") as tmp:
        report = Path(tmp) / "report.json"
        args = ["tune", _path(config, "config"), "--json", str(report)]
        for name, value, low, high in (("budget", budget, 1, 10**9), ("seed", seed, 0, 2**64 - 1),
                                       ("device", device, 0, 1023), ("threads", threads, 1, 4096)):
            if value is not None:
                args += ["--" + name, _integer(name, value, low, high)]
        for flag, value in (("--strategy", strategy), ("--seconds", seconds), ("--objective", objective),
                            ("--devices", devices), ("--time-limit", time_limit)):
            if value is not None:
                args += [flag, str(value)]
        if export is not None:
            args += ["--export", _path(export, "export=")]
        if not save:
            args.append("--no-save")
        if fresh:
            args.append("--fresh")
        return _with_report(_global_args(kernels, plugins, cache_dir, tuning_db) + args, report, "text")


def _cell(text: str) -> Optional[float]:
    try:
        return float(text.strip().rstrip("x%"))
    except ValueError:
        return None


def compare(a: PathLike, b: PathLike, *, threshold: float = 5.0) -> Dict[str, Any]:
    """``gpuk compare A B``: two --json reports (run or tune), row by row. Returns
    ``{"kind", "a", "b", "notes", "rows": [{"name", "a_ms", "b_ms", "ratio", "noise", "verdict"}],
    "slower": bool, "summary", "markdown"}``; ``slower`` is the CLI's exit status 6 (a gating row
    slower than `threshold` percent, or timed in A without a valid time in B). The rows are read from the CLI's --markdown table."""
    proc = _gpuk_cli(["compare", _path(a, "a"), _path(b, "b"), "--threshold", str(threshold), "--markdown"], ok=(0, 6))
    text = proc.stdout
    kind = re.search(r"### gpuk compare \((\w+) reports\)", text)
    rows, notes, summary = [], [], ""
    for line in text.splitlines():
        if line.startswith("- "):
            notes.append(line[2:])
        elif line.startswith("| ") and not line.startswith("| |") and not line.startswith("| ---"):
            # a '|' inside a name is escaped as '\|' in the table
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
            if len(cells) == 6:
                rows.append({"name": cells[0], "a_ms": _cell(cells[1]), "b_ms": _cell(cells[2]),
                             "ratio": _cell(cells[3]), "noise": cells[4], "verdict": cells[5]})
        elif line.strip() and not line.startswith(("#", "A: ", "|")):
            summary = line.strip()
    return {"kind": kind.group(1) if kind else None, "a": os.fspath(a), "b": os.fspath(b), "notes": notes,
            "rows": rows, "slower": proc.returncode == 6, "summary": summary, "markdown": text}


def check(*paths: PathLike, arch: Optional[str] = None, kernels: Sequence[PathLike] = (),
          plugins: Sequence[PathLike] = (), cache_dir: Optional[PathLike] = None) -> Dict[str, Any]:
    """``gpuk check``: compiles kernel files (every operation and dtype they declare) or the
    variant a config would choose, with NVRTC; no GPU needed. Returns ``{"passed": True,
    "results": [{"target", "ok", "detail"}], "text"}``; raises ConfigError (a bad config or
    kernel file: file:line:col) or CompileError (NVRTC's log) naming the first failure."""
    args = _global_args(kernels, plugins, cache_dir, None) + ["check", *(_path(p, "check") for p in paths)]
    if arch is not None:
        args += ["--arch", arch]
    proc = subprocess.run([str(executable()), *args], capture_output=True, text=True)
    results: List[Dict[str, Any]] = []
    # ok lines and the summary on stdout, FAIL blocks on stderr
    lines = proc.stdout.splitlines() + proc.stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("ok    "):
            target, _, detail = line[6:].partition(": ")
            results.append({"target": target, "ok": True, "detail": detail})
        elif line.startswith("FAIL  "):
            detail = []
            for follow in lines[i + 1:]:
                if follow.startswith(("ok    ", "FAIL  ")) or re.fullmatch(r"all passed|\d+ failed", follow):
                    break
                detail.append(follow)
            results.append({"target": line[6:], "ok": False, "detail": "\n".join(detail)})
    if proc.returncode not in (0, 1, 2):
        raise _error(proc.returncode, proc.stderr)
    if proc.returncode != 0:
        failed = [r for r in results if not r["ok"]]
        message = failed[0]["detail"] if failed else (proc.stderr.strip() or proc.stdout.strip())
        err = _error(2, message) if proc.returncode == 2 else CompileError(message)
        err.results = results
        raise err
    return {"passed": True, "results": results, "text": proc.stdout}
