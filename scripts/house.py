#!/usr/bin/env python3
"""The house drawn from the code's imports: which module of a crate names which other module
(`use crate::…`, `super::…`, or a `crate::…` path anywhere in the code, re-exports of lib.rs
followed to the module that defines the name), and the import circles that makes.

    scripts/house.py                 every crate: modules, the largest circle, files over 800 lines
    scripts/house.py agent --circles the circles of one crate, each module listed
    scripts/house.py cli --edges     every edge of one crate

A module is a file: `crates/agent/src/tools/bash.rs` is `tools::bash`, `…/sandbox/mod.rs` is
`sandbox`. A name is attributed to the deepest module path that exists. Comments and strings are
not read (lines starting with `//` are skipped; code in strings is rare here)."""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LONG = 800


def modules_of(crate):
    src = os.path.join(ROOT, "crates", crate, "src")
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            found["::".join(rel)] = path
    return found


def code_lines(path):
    with open(path, encoding="utf-8") as file:
        text = file.read()
    # Cut `#[cfg(test)] mod tests { … }` at the end of a file: tests are not the house.
    cut = re.search(r"\n#\[cfg\(test\)\]\s*\nmod tests\b", text)
    if cut:
        text = text[: cut.start()]
    return [line for line in text.split("\n") if not line.lstrip().startswith("//")]


def reexports(modules):
    """lib.rs's `pub use module::{Name, …}`: a crate-level name to the module defining it."""
    lib = modules.get("")
    names = {}
    if not lib:
        return names
    lines = code_lines(lib)
    for match in re.finditer(r"pub use (\w+)::(\{[^}]*\}|\w+)", "\n".join(lines)):
        module, items = match.group(1), match.group(2)
        for item in re.findall(r"\w+", items):
            names[item] = module
    return names


def resolve(segments, modules, names):
    """The module a path names: the longest prefix that is a module (re-exports followed)."""
    if segments and segments[0] in names and segments[0] not in modules:
        return names[segments[0]]
    best = None
    for end in range(1, len(segments) + 1):
        candidate = "::".join(segments[:end])
        if candidate in modules:
            best = candidate
    return best


def paths_in(line):
    """Every `crate::…` and `super::…` path of a line, `use` groups expanded one level."""
    found = []
    for match in re.finditer(r"\b(crate|super)((?:::\w+)*)(::\{([^}]*)\})?", line):
        base = [s for s in match.group(2).split("::") if s]
        kind = match.group(1)
        if match.group(4) is not None:
            for item in match.group(4).split(","):
                item = item.strip().split(" as ")[0]
                if item and item != "self":
                    found.append((kind, base + item.split("::")))
                elif item == "self":
                    found.append((kind, base))
        else:
            found.append((kind, base))
    return found


def edges_of(crate):
    modules = modules_of(crate)
    names = reexports(modules)
    edges = defaultdict(set)
    for module, path in modules.items():
        if module == "":
            continue
        lines = code_lines(path)
        joined = "\n".join(lines)
        # Multi-line `use crate::{…};` groups as one line.
        joined = re.sub(r"\{[^{}]*\}", lambda m: m.group(0).replace("\n", " "), joined)
        parent = module.split("::")[:-1]
        for line in joined.split("\n"):
            for kind, segments in paths_in(line):
                if kind == "super":
                    # `super::` is the parent of this module, a folder's mod.rs or a file alike.
                    up = parent
                    while segments and segments[0] == "super":
                        up, segments = up[:-1], segments[1:]
                    segments = up + segments
                target = resolve(segments, modules, names)
                if target is not None and target != module and target != "":
                    edges[module].add(target)
    return modules, edges


def circles(modules, edges):
    """Strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v and v not in index:
            visit(v)
    return sorted(out, key=len, reverse=True)


def main():
    args = sys.argv[1:]
    crates = sorted(os.listdir(os.path.join(ROOT, "crates")))
    if args and not args[0].startswith("--"):
        crates = [args[0]]
    for crate in crates:
        modules, edges = edges_of(crate)
        found = circles(modules, edges)
        long = []
        for module, path in sorted(modules.items()):
            with open(path, encoding="utf-8") as file:
                count = sum(1 for _ in file)
            if count > LONG:
                long.append(f"{os.path.relpath(path, ROOT)} {count}")
        largest = len(found[0]) if found else 0
        print(f"{crate}: {len(modules)} modules, {sum(len(e) for e in edges.values())} edges, "
              f"largest import circle {largest}, circles {len(found)}")
        for entry in long:
            print(f"  over {LONG} lines: {entry}")
        if "--circles" in args:
            for component in found:
                print(f"  circle of {len(component)}: {', '.join(component)}")
        if "--edges" in args:
            for module in sorted(edges):
                print(f"  {module or '(lib)'} -> {', '.join(sorted(edges[module]))}")


if __name__ == "__main__":
    main()
