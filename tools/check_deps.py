#!/usr/bin/env python3
"""Check the module graph of libnextok from the object files' symbols.

Usage: tools/check_deps.py BUILD_DIR [--print]

Every object file of the library belongs to the module of its source folder.
An edge A -> B exists when a file of A uses a symbol that a file of B defines
(nm: undefined in A, defined in B). The check fails when
  - an edge between two modules is not in the written graph below
    (CONTRIBUTING.md, "The module graph"), or
  - files form a circle (A uses B, B uses ... uses A) -- between modules or
    inside one, or
  - the CLI or an example uses a library symbol that is not public API
    (internal symbols are named nextok__*).
With --print it lists the module edges it found.
"""
import collections
import os
import subprocess
import sys

# module: the modules it may use (those below it). Longest folder prefix wins.
MODULES = {
    "src/common": [],
    "src/sample/arch": ["src/common"],
    "src/sample/fused": ["src/sample/arch", "src/common"],
    "src/sample": ["src/sample/fused", "src/sample/arch", "src/common"],
    "src/vocab": ["src/common"],
    "src/text": ["src/vocab", "src/common"],
    "src/grammar": ["src/sample", "src/vocab", "src/common"],
    "src/session": ["src/sample", "src/grammar", "src/text", "src/vocab", "src/common"],
}
PUBLIC_ONLY = ["tools/nextok", "examples"]  # may use only public API symbols


def module_of(src):
    best = None
    for m in MODULES:
        if src == m or src.startswith(m + "/"):
            if best is None or len(m) > len(best):
                best = m
    return best


SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def objects(build, target):
    """(source path relative to the project, object path) of a target's
    objects; objects whose source no longer exists (a stale build) are left
    out."""
    root = os.path.join(build, "CMakeFiles", target + ".dir")
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".c.o"):
                obj = os.path.join(d, f)
                src = os.path.relpath(obj, root)[: -len(".o")]
                if os.path.exists(os.path.join(SOURCE, src)):
                    out.append((src, obj))
    return sorted(out)


def symbols(obj):
    res = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True, check=True)
    defined = {l.split()[-1] for l in res.stdout.splitlines() if l.split()[1:2] and l.split()[1].isupper()}
    res = subprocess.run(["nm", "--undefined-only", obj], capture_output=True, text=True, check=True)
    used = {l.split()[-1] for l in res.stdout.splitlines() if l.strip()}
    return defined, used


def find_cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    lib = objects(build, "nextok_static")
    if not lib:
        print(f"check_deps: no object files of nextok_static under {build}")
        return 2
    errors = []
    definer = {}
    uses = {}
    for src, obj in lib:
        if module_of(src) is None:
            errors.append(f"{src}: in no module of the written graph")
            continue
        d, u = symbols(obj)
        uses[src] = u
        for s in d:
            definer[s] = src
    files = collections.defaultdict(set)
    edges = collections.defaultdict(set)
    for src, used in uses.items():
        for s in used:
            dst = definer.get(s)
            if dst is None or dst == src:
                continue
            files[src].add(dst)
            a, b = module_of(src), module_of(dst)
            if a != b:
                edges[(a, b)].add(f"{src} -> {dst} ({s})")
    for (a, b), why in sorted(edges.items()):
        if b not in MODULES[a]:
            errors.append(f"edge {a} -> {b} is not in the graph: " + "; ".join(sorted(why)[:3]))
    for comp in find_cycles({f: files[f] for f in uses}):
        errors.append("files in a circle: " + ", ".join(comp))
    for folder in PUBLIC_ONLY:
        for target in ("nextok_cli", "example_generate"):
            for src, obj in objects(build, target):
                if not src.startswith(folder):
                    continue
                _, used = symbols(obj)
                bad = sorted(s for s in used if s.startswith("nextok__"))
                if bad:
                    errors.append(f"{src} uses internal symbols: {', '.join(bad[:5])}")
    if "--print" in sys.argv:
        for (a, b) in sorted(edges):
            print(f"{a} -> {b}")
    for e in errors:
        print("check_deps:", e)
    if not errors:
        print(f"check_deps: {len(uses)} files, {len(edges)} module edges, all in the graph, no circles")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
