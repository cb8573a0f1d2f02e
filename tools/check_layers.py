#!/usr/bin/env python3
"""The layering rule, checked on every build: a file may include only its own layer and the
layers listed for it below. The build runs this (meson.build: `layer_check`), so an #include
against the direction fails the build with the file, the line and what that layer may use.

Layers are folders; each project include is "<layer>/<header>" from the root `src/` or `sim/`.
The order is model <- engine <- detectors <- scheduler <- trace <- CLI (ARCHITECTURE.md).
Tests, property tests and benchmarks sit on top and may include anything.
"""
import pathlib
import re
import sys

# layer -> (folder, the layers it may include besides itself)
LAYERS = {
    "util": ("src/util", []),
    "model": ("src/model", ["util"]),
    "engine": ("src/engine", ["model", "util"]),
    "detectors": ("src/detectors", ["engine", "model", "util"]),
    "protocols": ("src/protocols", ["engine", "model", "util"]),
    "io": ("src/io", ["protocols", "engine", "model", "util"]),
    "cuda": ("src/cuda", ["detectors", "engine", "model", "util"]),
    "fr": ("src/fr", ["util"]),
    "scheduler": ("sim/scheduler", ["detectors", "engine", "model", "util"]),
    "trace": ("sim/trace", ["scheduler", "io", "detectors", "engine", "model", "util"]),
    "shrink": ("sim/shrink", ["trace", "scheduler", "io", "detectors", "engine", "model", "util"]),
    "export": ("sim/export", ["trace", "scheduler", "io", "detectors", "engine", "model", "util"]),
    "cli": ("sim/cli", ["export", "shrink", "trace", "scheduler", "cuda", "fr", "io", "protocols", "detectors",
                        "engine", "model", "util"]),
}
# Third-party headers that belong to one layer only.
OWNED_HEADERS = {
    "CLI/": "cli",  # CLI11: argument parsing is the CLI's business
}
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh", ".in"}


def violations(root: pathlib.Path):
    for layer, (folder, allowed) in LAYERS.items():
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                where = f"{path.relative_to(root)}:{number}"
                match = PROJECT_INCLUDE.match(line)
                if match and match.group(1) in LAYERS:
                    used = match.group(1)
                    if used != layer and used not in allowed:
                        yield (f"{where}: layer '{layer}' includes '{used}'; it may include only "
                               f"{', '.join([layer] + allowed)}")
                match = ANY_INCLUDE.match(line)
                if match:
                    for prefix, owner in OWNED_HEADERS.items():
                        if match.group(1).startswith(prefix) and layer != owner:
                            yield f"{where}: '{match.group(1)}' may be included only in layer '{owner}'"


def self_test() -> int:
    """The checker on a small tree: one include against the order, one CLI11 use outside the
    CLI, one allowed include. It must report exactly the two bad lines."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for folder, _ in LAYERS.values():
            (root / folder).mkdir(parents=True)
        (root / "src/model/bad.h").write_text('#include "util/check.h"\n#include "engine/engine.h"\n')
        (root / "sim/scheduler/bad.cpp").write_text('#include <CLI/CLI.hpp>\n#include "engine/engine.h"\n')
        (root / "sim/cli/fine.cpp").write_text('#include <CLI/CLI.hpp>\n#include "scheduler/run.h"\n')
        found = list(violations(root))
    expected = ["src/model/bad.h:2: layer 'model' includes 'engine'",
                "sim/scheduler/bad.cpp:1: 'CLI/CLI.hpp' may be included only in layer 'cli'"]
    ok = len(found) == 2 and found[0].startswith(expected[0]) and found[1] == expected[1]
    print("\n".join(found))
    print("self-test:", "ok" if ok else f"FAILED, expected {expected}")
    return 0 if ok else 1


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    stamp = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
    found = list(violations(root))
    for message in found:
        print(message, file=sys.stderr)
    if found:
        print(f"layering: {len(found)} include(s) against the layer order (tools/check_layers.py)", file=sys.stderr)
        return 1
    if stamp:
        stamp.write_text("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
