"""Kernel Tuner's cache file (util.process_cache, read_cache, store_cache, close_cache): a JSON
object {device_name, kernel_name, problem_size, tune_params_keys, tune_params, objective, cache:
{"v1,v2,...": result}} that is written open (each result appended with a trailing comma) and
closed with "}\\n}" at the end, so that a tune cut short can be read and resumed. gpuk reads such a
file (its own or Kernel Tuner's) to skip the configurations it holds, and appends its results in
the same form, failed ones marked by name ("CompilationFailedConfig", ...), as Kernel Tuner reads
them."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np

from .._gpuk import ConfigError
from .util import ERROR_MARKS, ErrorConfig


class _NpEncoder(json.JSONEncoder):
    def default(self, obj):
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        return super().default(obj)


def cache_path(cache: Any) -> str:
    path = str(Path(cache).resolve()) if isinstance(cache, Path) else str(cache)
    return path if path.endswith(".json") else path + ".json"


def key_of(point: Dict[str, Any], names: List[str]) -> str:
    return ",".join(str(point[n]) for n in names)


def _closed(text: str) -> str:
    text = text.strip()
    if text and text[-3:] not in ("}\n}", "}}}"):
        if text.endswith(","):
            text = text[:-1]
        text += "}\n}"
    return text


def read(path: str) -> Dict[str, Any]:
    """The cache's data, open or closed; failed entries get their mark as ``__error__``."""
    with open(path) as f:
        text = _closed(f.read())
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: not a Kernel Tuner cache file ({e})") from None
    for entry in data.get("cache", {}).values():
        for k, v in list(entry.items()):
            if isinstance(v, str) and v in ERROR_MARKS:
                mark = ERROR_MARKS[v]()
                entry["__error__"] = mark
                if k != "__error__":
                    entry[k] = mark
    return data


class CacheFile:
    """Read before the tune and checked against the call (kernel, problem size, parameters); the
    device is checked, or the header written, by `open` once the tune has said which GPU it ran on
    (asking the driver before the sweep would start CUDA in this process, and gpuk's tuner then
    measures in it rather than in worker processes). `store` appends, `close` ends the JSON."""

    def __init__(self, cache: Any, kernel_name: str, problem_size: Any, tune_params: Dict[str, List[Any]],
                 objective: str):
        self.path = cache_path(cache)
        self.names = list(tune_params)
        self.entries: Dict[str, Dict[str, Any]] = {}
        self.device_name: Optional[str] = None
        self._header = {"kernel_name": kernel_name,
                        "problem_size": problem_size if not callable(problem_size) else "callable",
                        "tune_params_keys": self.names, "tune_params": tune_params, "objective": objective}
        self._cached_device: Optional[str] = None
        self._opened = False
        if not os.path.isfile(self.path):
            return
        data = read(self.path)
        if data.get("kernel_name") != kernel_name:
            raise ValueError(f"Cannot load cache which contains results for different kernel (cache: "
                             f"{data.get('kernel_name')}, actual: {kernel_name})")
        if "problem_size" in data and not callable(problem_size):
            cached = np.array(data["problem_size"])
            now = np.array(problem_size)
            if cached.size != now.size or not (cached == now).all():
                raise ValueError(f"Cannot load cache which contains results for different problem_size, cache: "
                                 f"{data['problem_size']}, requested: {problem_size}")
        if data.get("tune_params_keys") != self.names:
            raise ValueError(f"Cannot load cache which contains results obtained with different tunable parameters. "
                             f"Cache at '{self.path}' has: {data.get('tune_params_keys')}, tuning_options has: "
                             f"{self.names}")
        self._cached_device = data.get("device_name")
        self.device_name = self._cached_device
        self.entries = data.get("cache", {})

    def open(self, device_name: str) -> None:
        """The device checked (an existing file) or the header written (a new one)."""
        self.device_name = device_name
        if self._cached_device is None and not self.entries and not os.path.isfile(self.path):
            header = {"device_name": device_name, **self._header, "cache": {}}
            with open(self.path, "w") as f:
                f.write(json.dumps(header, cls=_NpEncoder, indent="")[:-3])
            self._opened = True
            return
        if self._cached_device != device_name:
            raise ValueError(f"Cannot load cache which contains results for different device (cache: "
                             f"{self._cached_device}, actual: {device_name})")
        with open(self.path) as f:
            text = f.read().strip()
        if text[-3:] in ("}\n}", "}}}"):
            # closed: reopened for appending, as Kernel Tuner does
            with open(self.path, "w") as f:
                f.write(text[:-3] + ("," if self.entries else ""))
        self._opened = True

    def store(self, key: str, result: Dict[str, Any]) -> None:
        if key in self.entries:
            return
        self.entries[key] = result
        out = {k: (v.cache_name if isinstance(v, ErrorConfig) else v) for k, v in result.items()}
        with open(self.path, "a") as f:
            f.write("\n" + json.dumps({key: out}, cls=_NpEncoder)[1:-1] + ",")

    def close(self) -> None:
        if not self._opened:
            return
        with open(self.path) as f:
            text = f.read()
        if text.endswith(","):
            text = text[:-1] + "}\n}"
        elif text.rstrip().endswith("{"):
            text = text.rstrip() + "}\n}"
        with open(self.path, "w") as f:
            f.write(text)
