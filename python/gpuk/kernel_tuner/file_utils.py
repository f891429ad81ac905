"""Kernel Tuner's file_utils: a tune's results and the machine's metadata as JSON files in the T4
auto-tuning schema (schema_version 1.0.0), as Kernel Tuner writes them, so that tools that read
Kernel Tuner's output read gpuk's."""
from __future__ import annotations

import json
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Dict, List

from .cache import _NpEncoder
from .util import CompilationFailedConfig, ErrorConfig, InvalidConfig, RuntimeFailedConfig, TimeoutConfig, \
    WrongAnswerConfig

SCHEMA_VERSION = "1.0.0"
_TIMINGS = ["compile_time", "benchmark_time", "framework_time", "strategy_time", "verification_time"]


def _json_name(name: str) -> Path:
    path = Path(name if str(name).endswith(".json") else str(name) + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def get_configuration_validity(result: Dict[str, Any]) -> str:
    """T4's invalidity: correct, compile, runtime, correctness, timeout or constraints."""
    error = result.get("__error__")
    if not isinstance(error, ErrorConfig):
        return "correct"
    for cls, name in ((CompilationFailedConfig, "compile"), (WrongAnswerConfig, "correctness"),
                      (TimeoutConfig, "timeout"), (RuntimeFailedConfig, "runtime"), (InvalidConfig, "constraints")):
        if isinstance(error, cls):
            return name
    raise ValueError(f"Unknown error type {type(error)}")


def get_t4_results(results: List[Dict[str, Any]], tune_params: Dict[str, Any], objective: str = "time") -> Dict:
    if isinstance(objective, (list, tuple)):
        raise ValueError("The T4 format does not support multiple objectives.")
    skip = set(tune_params) | set(_TIMINGS) | {"timestamp", "times", "__error__"}
    out = []
    for r in results:
        entry: Dict[str, Any] = {}
        if "timestamp" in r:
            entry["timestamp"] = r["timestamp"]
        entry["configuration"] = {k: v for k, v in r.items() if k in tune_params}
        entry["times"] = {"compilation": r.get("compile_time", 0), "benchmark": r.get("benchmark_time", 0),
                          "framework": r.get("framework_time", 0), "search_algorithm": r.get("strategy_time", 0),
                          "validation": r.get("verification_time", 0), "runtimes": r.get("times", [])}
        entry["invalidity"] = get_configuration_validity(r)
        entry["correctness"] = 0 if entry["invalidity"] == "correctness" else 1
        entry["measurements"] = [{"name": k, "value": str(v) if isinstance(v, ErrorConfig) else v,
                                  "unit": "ms" if k.startswith("time") else ""}
                                 for k, v in r.items() if k not in skip]
        entry["objectives"] = [objective]
        out.append(entry)
    return {"results": out, "schema_version": SCHEMA_VERSION, "metadata": {"timeunit": "milliseconds"}}


def store_output_file(output_filename: str, results: List[Dict[str, Any]], tune_params: Dict[str, Any],
                      objective: str = "time") -> None:
    """The results as a T4 output file (`.json` added when missing)."""
    data = get_t4_results(results, tune_params, objective)
    with open(_json_name(output_filename), "w") as fh:
        json.dump(data, fh, cls=_NpEncoder)


def _run(args: List[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def get_t4_metadata() -> Dict[str, Any]:
    """The machine (lshw), the GPUs (nvidia-smi) and the Python packages that made the results."""
    metadata: Dict[str, Any] = {}
    text = _run(["lshw", "-json"]).strip() if platform.system() == "Linux" else ""
    try:
        hardware = json.loads("[" + text + "]" if text.startswith("{") else text) if text else \
            ["error retrieving hardware description"]
    except json.JSONDecodeError:
        hardware = ["error retrieving hardware description"]
    metadata["operating_system"] = {"Linux": "Linux", "Darwin": "Mac", "Windows": "Windows"}.get(
        platform.system(), "unidentified OS")
    metadata["hardware"] = {"hardware_description": hardware}
    query: Dict[str, Any] = {}
    smi = _run(["nvidia-smi", "--query-gpu=name,uuid,driver_version,pci.bus_id,memory.total,clocks.max.sm",
                "--format=csv,noheader"])
    if smi.strip():
        fields = ["name", "uuid", "driver_version", "pci_bus_id", "memory_total", "clocks_max_sm"]
        query["nvidia-smi"] = {"gpu": [dict(zip(fields, (x.strip() for x in line.split(","))))
                                       for line in smi.strip().splitlines()]}
    requirements = []
    for package in ("gpuk", "numpy", "cupy", "torch", "jax"):
        try:
            requirements.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            pass
    metadata["environment"] = {"device_query": query, "requirements": requirements}
    return {"metadata": metadata, "schema_version": SCHEMA_VERSION}


def store_metadata_file(metadata_filename: str) -> None:
    """The metadata as a T4 metadata file (`.json` added when missing)."""
    with open(_json_name(metadata_filename), "w") as fh:
        json.dump(get_t4_metadata(), fh, indent="  ")
