"""`bazel run` targets for the preset configs.

A preset target is a thin wrapper: it runs a tools binary (a runfiles data
dependency, not code the pipeline links) with the preset's config flags,
followed by whatever the user passes after `--`. Binaries live only in
tools/; the layering test (//tests:layering_test) allows exactly this edge
from targets tagged "run-wrapper".
"""

def preset_run_target(name, tool, args, configs):
    native.sh_binary(
        name = name,
        srcs = ["run_tool.sh"],
        args = ["$(rootpath %s)" % tool] + args,
        data = [tool] + configs,
        tags = ["run-wrapper"],
    )
