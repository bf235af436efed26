#!/usr/bin/env python3
"""Checks the layering of docs/design.md on the build's dependency edges.

Input: the edges the aspect of tests/layering.bzl recorded ("from to attr
kind" lines, labels of this workspace), the targets it reached, and the
packages' BUILD files. Fails (exit 1, one line per fault) on an edge from a
package to one it may not use, and on a target named in a BUILD file that
the roots of //tests:layering_test do not reach.
"""

import argparse
import os
import re
import sys

# What each package may use besides itself (direct edges). base/ is open to
# every package; python/, fuzz/ and tests/ sit on top and nothing uses them.
_BELOW_TAGGING = {"base", "corpora", "features", "models"}
ALLOWED = {
    "base": set(),
    "third_party": set(),
    "corpora": {"base"},
    "features": {"base", "corpora"},
    "solvers": {"base"},
    "models": {"base", "corpora", "features", "solvers"},
    "tagging": _BELOW_TAGGING,
    "pipeline": _BELOW_TAGGING | {"solvers", "tagging"},
    "tools": _BELOW_TAGGING | {"solvers", "tagging", "pipeline"},
    "python": _BELOW_TAGGING | {"solvers", "tagging", "pipeline"},
    "fuzz": _BELOW_TAGGING | {"solvers", "tagging", "pipeline"},
    "tests": _BELOW_TAGGING | {"solvers", "tagging", "pipeline", "tools"},
}

# models/ sees the solvers only through the Problem interface and the
# solver config: solvers know nothing about chains, and models know only
# what a solver asks of a problem.
NARROW = {
    ("models", "solvers"): {
        "//solvers:problem",
        "//solvers:problem.h",
        "//solvers:solver_config_proto",
        "//solvers:solver_config_cc_proto",
    },
}

# Edges that run a program rather than link code, by the kind of the rule
# they start from: the //pipeline presets' `bazel run` targets (tagged
# "run-wrapper") run a tools binary, and the Python module's tests compare
# it with the command-line tools.
PROGRAM_EDGES = {
    ("pipeline", "tools", "data", "sh_binary+run-wrapper"),
    ("python", "tools", "data", "sh_test"),
}

# Edges to documents, not code: the root package holds only README.md,
# whose Python example //python:readme_example_test runs.
DOCUMENT_EDGES = {
    ("python", "", "data", "sh_test"),
}

# The rules whose targets must be reached; config settings and macro calls
# are not dependencies of anything.
CHECKED_KINDS = re.compile(r"^(cc_\w+|sh_\w+|py_\w+|proto_library|genrule|"
                           r"filegroup|layering_test)$")


def package(label):
    match = re.match(r"^@?//([^:]*)(:.*)?$", label)
    if not match:
        raise ValueError("not a label of this workspace: " + label)
    return match.group(1).split("/")[0]


def target(label):
    label = label.lstrip("@")
    return label if ":" in label else label + ":" + label.rsplit("/", 1)[-1]


def edge_faults(lines):
    faults = []
    for line in lines:
        if not line.strip():
            continue
        source, dest, attr, kind = line.split()
        source_package, dest_package = package(source), package(dest)
        if source_package == dest_package:
            continue
        if source_package not in ALLOWED:
            faults.append("%s: package %s is not in the layering table of "
                          "tests/layering_check.py" % (source, source_package))
            continue
        if dest_package not in ALLOWED[source_package]:
            if (source_package, dest_package, attr, kind) in (PROGRAM_EDGES |
                                                              DOCUMENT_EDGES):
                continue
            faults.append("%s -> %s (%s): %s may not use %s" %
                          (target(source), target(dest), attr, source_package,
                           dest_package))
            continue
        narrow = NARROW.get((source_package, dest_package))
        if narrow is not None and target(dest) not in narrow:
            faults.append("%s -> %s (%s): %s may use only %s of %s" %
                          (target(source), target(dest), attr, source_package,
                           ", ".join(sorted(narrow)), dest_package))
    return faults


def unreached_faults(build_files, reached):
    """Targets named in the BUILD files that no root reaches."""
    reached = {target(label) for label in reached}
    faults = []
    for path in build_files:
        pkg = os.path.dirname(os.path.normpath(path))
        with open(path, encoding="utf-8") as build:
            rules = re.findall(r'^(\w+)\(\s*name = "([^"]+)"', build.read(),
                               re.MULTILINE)
        for kind, name in rules:
            if not CHECKED_KINDS.match(kind):
                continue
            label = "//%s:%s" % (pkg, name)
            if label not in reached and label != "//tests:layering_test":
                faults.append("%s: not reached from the roots of "
                              "//tests:layering_test (add it there)" % label)
    return faults


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--edges", required=True)
    parser.add_argument("--reached")
    parser.add_argument("--build_files", nargs="*", default=[])
    args = parser.parse_args(argv)
    with open(args.edges, encoding="utf-8") as edges:
        faults = edge_faults(edges.read().splitlines())
    if args.reached:
        with open(args.reached, encoding="utf-8") as reached:
            faults += unreached_faults(args.build_files,
                                       reached.read().split())
    for fault in faults:
        print(fault)
    if faults:
        print("%d layering fault(s); the layering is in docs/design.md" %
              len(faults))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
