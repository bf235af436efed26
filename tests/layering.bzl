"""The layering of docs/design.md, checked on the build's dependency graph.

An aspect walks every dependency edge (deps, srcs, hdrs, data, tools) from
the given roots and records the edges between this workspace's packages;
`layering_test` hands them (with the attribute and the rule kind) to tests/layering_check.py, which fails on any
edge from a package to one it may not use, and on any target of the
workspace the roots do not reach (so a new target cannot escape the check).
"""

_EDGE_ATTRS = ["deps", "srcs", "hdrs", "data", "tools", "textual_hdrs"]

LayeringEdges = provider(fields = ["edges", "targets"])

def _edges_aspect_impl(target, ctx):
    edges = []
    transitive_edges = []
    transitive_targets = []
    here = target.label
    local = here.workspace_name == ""
    tags = getattr(ctx.rule.attr, "tags", [])
    kind = ctx.rule.kind + ("+run-wrapper" if "run-wrapper" in tags else "")
    for attr in _EDGE_ATTRS:
        for dep in getattr(ctx.rule.attr, attr, []) or []:
            if type(dep) != "Target":
                continue
            if LayeringEdges in dep:
                transitive_edges.append(dep[LayeringEdges].edges)
                transitive_targets.append(dep[LayeringEdges].targets)
            if local and dep.label.workspace_name == "":
                edges.append("%s %s %s %s" % (here, dep.label, attr, kind))
    return [LayeringEdges(
        edges = depset(edges, transitive = transitive_edges),
        targets = depset([str(here)] if local else [], transitive = transitive_targets),
    )]

layering_edges_aspect = aspect(
    implementation = _edges_aspect_impl,
    attr_aspects = _EDGE_ATTRS,
)

def _layering_test_impl(ctx):
    edges = depset(transitive = [t[LayeringEdges].edges for t in ctx.attr.roots])
    targets = depset(transitive = [t[LayeringEdges].targets for t in ctx.attr.roots])
    edges_file = ctx.actions.declare_file(ctx.label.name + ".edges")
    targets_file = ctx.actions.declare_file(ctx.label.name + ".targets")
    ctx.actions.write(edges_file, "\n".join(sorted(edges.to_list())) + "\n")
    ctx.actions.write(targets_file, "\n".join(sorted(targets.to_list())) + "\n")
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(
        script,
        "#!/usr/bin/env bash\nexec python3 %s --edges=%s --reached=%s --build_files %s\n" % (
            ctx.file.checker.short_path,
            edges_file.short_path,
            targets_file.short_path,
            " ".join([f.short_path for f in ctx.files.build_files]),
        ),
        is_executable = True,
    )
    runfiles = ctx.runfiles(files = [ctx.file.checker, edges_file, targets_file] + ctx.files.build_files)
    return [DefaultInfo(executable = script, runfiles = runfiles)]

layering_test = rule(
    implementation = _layering_test_impl,
    test = True,
    attrs = {
        "roots": attr.label_list(aspects = [layering_edges_aspect]),
        "checker": attr.label(allow_single_file = True, mandatory = True),
        # Every package's BUILD file, to find targets the roots miss.
        "build_files": attr.label_list(allow_files = True),
    },
)
