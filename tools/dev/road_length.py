#!/usr/bin/env python3
"""How long a road through gpuk is (issue 26's measure), from an outline of the calls it makes.

An outline (a ```road block in a Markdown file, docs/architecture.md) lists, one per line and
indented by two spaces per call level, each function a road passes: its file, then its name.
A callee in the same file as its caller is left out (a helper); so are text, YAML, dtype and
device wrappers. Walking the outline as a call tree, control enters a callee's file and comes back
to the caller's when the callee returns. Printed per road: the functions of core and the plugins
(the CLI's lines left out), the files, how often control changes file, and how often it comes back
to a file it had left.

    tools/dev/road_length.py docs/architecture.md
"""
import re
import sys


def roads(markdown):
    for m in re.finditer(r"```road (\S+)\n(.*?)```", markdown, re.S):
        lines = [l for l in m.group(2).splitlines() if l.strip() and not l.strip().startswith("#")]
        yield m.group(1), [((len(l) - len(l.lstrip(" "))) // 2, l.split()[0], " ".join(l.split()[1:])) for l in lines]


def measure(outline):
    visits = []  # the file control is in, each time it changes
    stack = []

    def enter(path):
        if not visits or visits[-1] != path:
            visits.append(path)

    for depth, path, _ in outline:
        while len(stack) > depth:
            stack.pop()
            if stack:
                enter(stack[-1])
        stack.append(path)
        enter(path)
    while len(stack) > 1:
        stack.pop()
        enter(stack[-1])
    returns = sum(1 for i, f in enumerate(visits) if f in visits[:i])
    functions = sum(1 for _, path, _ in outline if not path.startswith("tools/"))
    return functions, len({p for _, p, _ in outline}), len(visits) - 1, returns


def main():
    for name, outline in roads(open(sys.argv[1]).read()):
        functions, files, changes, returns = measure(outline)
        print(f"{name}: {functions} functions of core and plugins, {files} files, "
              f"{changes} changes of file, {returns} returns to a file left")


if __name__ == "__main__":
    main()
