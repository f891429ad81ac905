#!/usr/bin/env python3
"""Whether a change altered the machine code of the kernels gpuk runs, without a GPU.

  sass_diff.py OLD_GPUK NEW_GPUK CONFIG... [--arch sm_90] [--work DIR]

OLD_GPUK and NEW_GPUK are two builds' `gpuk` executables (say, one built from the commit whose
kernels last ran on a GPU, one from the working tree). Each compiles, with `gpuk check` (NVRTC, no
GPU), the variants CONFIG... choose, into a compile cache of its own; then every kernel's SASS
(cuobjdump -sass) is compared instruction by instruction, the two matched by the kernel's name
as gpuk writes it (template arguments left at their defaults do not count). One line per kernel:
SAME, DIFF (with both lengths), or ONLY OLD / ONLY NEW (the configs chose another variant).
Exit status 0 when every kernel is the same, 1 otherwise.

A kernel whose SASS is the same runs exactly as it ran where it was last verified and timed: a
change to a shared device header, a kernel file's new options or a new template parameter can be
shown not to touch the default paths before any device time is spent. The launch code on the host
is not compared (its CPU tests cover it).

Needs cuobjdump and nvdisasm on PATH (the CUDA toolkit's bin/; or `pip install
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, whose nvidia/cu13/bin holds both).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")


def compile_configs(gpuk, configs, arch, cache):
    env = dict(os.environ, GPUK_CACHE_DIR=str(cache), GPUK_KERNELS="", GPUK_PLUGINS="")
    done = subprocess.run([gpuk, "check", "--arch", arch, *configs], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{gpuk} check failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def kernels(cache, work):
    """{readable kernel name: [instructions]} of every cubin in a gpuk compile cache."""
    out = {}
    for entry in sorted(Path(cache).glob("*.cubin")):
        raw = entry.read_bytes()
        lines = raw.split(b"\n")
        if not lines[0].startswith(b"GPUK-CUBIN-CACHE"):
            continue
        count = int(lines[2].split()[1])  # "names N", then N lines "readable<TAB>mangled"
        names = dict(reversed(line.decode().split("\t")) for line in lines[3:3 + count])
        elf = Path(work) / (entry.name + ".elf")
        elf.write_bytes(raw[raw.find(b"\x7fELF"):])
        sass = subprocess.run(["cuobjdump", "-sass", str(elf)], capture_output=True, text=True, check=True).stdout
        for part in sass.split("Function : ")[1:]:
            mangled, body = part.split("\n", 1)
            out[names.get(mangled.strip(), mangled.strip())] = [
                re.sub(r"\s+", " ", m.group(1)) for m in INSTRUCTION.finditer(body)]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old_gpuk")
    parser.add_argument("new_gpuk")
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--work", help="keep the caches and cubins here (default: a temporary directory)")
    args = parser.parse_args()
    for tool in ("cuobjdump", "nvdisasm"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not on PATH (the CUDA toolkit's bin/, or pip install nvidia-cuda-{tool})")
    work = Path(args.work or tempfile.mkdtemp(prefix="gpuk-sass-"))
    found = {}
    for side, gpuk in (("old", args.old_gpuk), ("new", args.new_gpuk)):
        cache = work / f"cache-{side}"
        cache.mkdir(parents=True, exist_ok=True)
        compile_configs(gpuk, args.configs, args.arch, cache)
        found[side] = kernels(cache, work)
    old, new = found["old"], found["new"]
    different = 0
    for name in sorted(set(old) | set(new)):
        if name not in new:
            verdict = "ONLY OLD"
        elif name not in old:
            verdict = "ONLY NEW"
        elif old[name] == new[name]:
            verdict = f"SAME {len(old[name]):6d}"
        else:
            verdict = f"DIFF {len(old[name]):6d} {len(new[name]):6d}"
        different += not verdict.startswith("SAME")
        print(f"{verdict:<20} {name}")
    print(f"{len(set(old) | set(new))} kernels, {different} not the same")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
