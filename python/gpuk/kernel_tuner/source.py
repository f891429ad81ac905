"""The kernel's source as Kernel Tuner takes it (code, a file name, a list of files) made into a kernel
file gpuk reads: the arguments' names and constness from the kernel's signature, the definitions
Kernel Tuner writes above the code, and the temporary kernels directory."""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .._gpuk import ConfigError
from .toolkit import includes_cccl, link_cccl


def looks_like_a_filename(source: str) -> bool:
    """Kernel Tuner's rule (util.looks_like_a_filename): short, no code characters, a .c* suffix."""
    if len(source) > 250 or any(c in source for c in "();{}\\"):
        return False
    if any(s in source for s in ("__global__ ", "__kernel ", "void ", "float ")):
        return False
    return any(s in source for s in (".c", ".opencl", ".F"))


def read_sources(kernel_source: Any) -> List[Tuple[str, str]]:
    """[(file name, code)], the kernel's first. A string of code is named kernel.cu."""
    if callable(kernel_source):
        raise ConfigError("kernel_source: a code-generating function gives every variant other code; gpuk "
                          "compiles one kernel file per tune (write the code with #if on the parameters)")
    items = list(kernel_source) if isinstance(kernel_source, (list, tuple)) else [kernel_source]
    if not items:
        raise ConfigError("kernel_source: an empty list")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, Path) or (isinstance(item, str) and (i > 0 or looks_like_a_filename(item))):
            path = Path(item)
            if not path.is_file():
                raise ConfigError(f"kernel_source: {item}: no such file")
            out.append((path.name, path.read_text()))
        elif isinstance(item, str):
            out.append(("kernel.cu", item))
        else:
            raise ConfigError(f"kernel_source: {item!r} is neither code nor a file name")
    return out


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def signature(code: str, kernel_name: str) -> Optional[List[Tuple[str, bool]]]:
    """[(argument name, declared const)] of `__global__ ... kernel_name(...)`'s definition, or None."""
    text = _COMMENTS.sub(" ", code)
    for m in re.finditer(r"__global__[^;{(]*?\b" + re.escape(kernel_name) + r"\s*\(([^)]*)\)\s*\{", text):
        params = [p.strip() for p in m.group(1).split(",") if p.strip()]
        out = []
        for p in params:
            words = re.findall(r"[A-Za-z_]\w*", p.split("=")[0])
            if not words:
                return None
            out.append((words[-1], "const" in words[:-1] and "*" in p and p.index("const") < p.rindex("*")))
        return out
    return None


def argument_names(code: str, kernel_name: str, count: int) -> Tuple[List[str], List[bool]]:
    """The arguments' names from the signature (arg0, arg1, ... where it cannot be read) and
    whether each is a pointer to const. Refuses an argument count other than the signature's."""
    sig = signature(code, kernel_name)
    if sig is None:
        return [f"arg{i}" for i in range(count)], [False] * count
    if len(sig) != count:
        raise ConfigError(f"kernel {kernel_name} takes {len(sig)} arguments ({', '.join(n for n, _ in sig)}), "
                          f"not the {count} given")
    names = [n for n, _ in sig]
    if len(set(names)) != len(names) or any(n.startswith("__") for n in names):
        return [f"arg{i}" for i in range(count)], [c for _, c in sig]
    return names, [c for _, c in sig]


def unroll_guard(code: str, names: List[str]) -> str:
    """Kernel Tuner removes `#pragma unroll loop_unroll_factor_N` where the factor is 0; gpuk shares
    one file among the variants, so the pragma is guarded by the factor instead."""
    for name in names:
        if "loop_unroll_factor" in name:
            code = re.sub(r"(?m)^([ \t]*)#pragma\s+unroll\s+" + re.escape(name) + r"[ \t]*$",
                          lambda m: f"{m.group(1)}#if {name} != 0\n{m.group(0)}\n{m.group(1)}#endif", code)
    return code


def prefix(defines: Dict[str, str]) -> str:
    """The definitions above the code, and `#line 1` so that NVRTC's lines are the user's."""
    if not defines:
        return ""
    lines = []
    for k, v in defines.items():
        if not k.isidentifier():
            raise ConfigError(f"defines: {k!r} is not a valid identifier")
        lines.append(f"#define {k} {str(v).replace(chr(10), chr(92) + chr(10))}")
    return "\n".join(lines) + "\n#line 1\n"


class KernelDir:
    """A temporary kernels directory holding the kernel file (kernel/kt_NAME.cu: a plain file's
    family is its folder's name) and the files beside it; removed when closed."""

    def __init__(self, kernel_name: str, files: List[Tuple[str, str]], head: str):
        self._tmp = tempfile.TemporaryDirectory(prefix="gpuk-kt-")
        self.path = self._tmp.name
        folder = Path(self.path) / "kernel"
        folder.mkdir()
        # kt_: never the name of a kernel file gpuk ships (kernels_src/kernel/matmul.cu)
        stem = "kt_" + re.sub(r"\W", "_", kernel_name)
        self.kernel = stem
        for name, code in files[1:]:
            (folder / name).write_text(code)
        self.file = str(folder / (stem + ".cu"))
        Path(self.file).write_text(head + files[0][1])
        if includes_cccl([code for _, code in files]):
            link_cccl(Path(self.path) / "include")  # NVRTC's -I: the kernels directory's include/

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> "KernelDir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
