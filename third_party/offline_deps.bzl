"""Offline dependencies for Bazel 4.2.3 (Debian's bazel-bootstrap).

Nothing here downloads anything:
  * @rules_cc and @remote_coverage_tools are small local stand-ins for the
    archives Bazel would otherwise fetch from the network.
  * @rules_java is Debian's bazel-rules-java package.
  * The C++ libraries come from Debian's -dev packages; their flags are read
    from the pkg-config .pc files when the repository is first set up.
"""

# ---------------------------------------------------------------- stand-ins

_RULES_CC_DEFS = '''"""Stand-in for @rules_cc: forwards to Bazel's native C++ rules."""
def cc_binary(**kw):
    native.cc_binary(**kw)
def cc_test(**kw):
    native.cc_test(**kw)
def cc_library(**kw):
    native.cc_library(**kw)
def cc_import(**kw):
    native.cc_import(**kw)
def cc_proto_library(**kw):
    native.cc_proto_library(**kw)
def cc_toolchain(**kw):
    native.cc_toolchain(**kw)
def cc_toolchain_suite(**kw):
    native.cc_toolchain_suite(**kw)
def fdo_profile(**kw):
    native.fdo_profile(**kw)
def fdo_prefetch_hints(**kw):
    native.fdo_prefetch_hints(**kw)
def objc_library(**kw):
    native.objc_library(**kw)
def objc_import(**kw):
    native.objc_import(**kw)
'''

def _rules_cc_stub_impl(rctx):
    rctx.file("WORKSPACE", 'workspace(name = "rules_cc")\n')
    rctx.file("BUILD.bazel", "")
    rctx.file("cc/BUILD.bazel", """package(default_visibility = ["//visibility:public"])
alias(name = "toolchain_type", actual = "@bazel_tools//tools/cpp:toolchain_type")
""")
    rctx.file("cc/defs.bzl", _RULES_CC_DEFS)

_rules_cc_stub = repository_rule(implementation = _rules_cc_stub_impl)

def _coverage_stub_impl(rctx):
    # Bazel 4 resolves these two labels for every test, even without
    # `bazel coverage`; `bazel test` never runs them.
    rctx.file("WORKSPACE", 'workspace(name = "remote_coverage_tools")\n')
    rctx.file("noop.sh", "#!/bin/sh\nexit 0\n", executable = True)
    rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])
filegroup(name = "coverage_report_generator", srcs = ["noop.sh"])
filegroup(name = "lcov_merger", srcs = ["noop.sh"])
""")

_coverage_stub = repository_rule(implementation = _coverage_stub_impl)

# --------------------------------------- system libs from pkg-config .pc files
#
# The .pc files are read directly (calling pkg-config per module is slow for
# abseil, which has hundreds of modules). Every module becomes a
# cc_library "pc_<module>" with its own link flags and `deps` on the modules
# it Requires, so Bazel computes the transitive link line.

def _subst(value, variables):
    for _ in range(100):
        i = value.find("${")
        if i < 0:
            break
        j = value.find("}", i)
        value = value[:i] + variables.get(value[i + 2:j], "") + value[j + 1:]
    return value

def _parse_pc(content):
    variables = {}
    fields = {}
    for line in content.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        c = line.find(":")
        e = line.find("=")
        if e >= 0 and (c < 0 or e < c):
            variables[line[:e].strip()] = _subst(line[e + 1:].strip(), variables)
        elif c >= 0:
            fields[line[:c].strip()] = _subst(line[c + 1:].strip(), variables)
    requires = []
    skip_next = False
    for tok in fields.get("Requires", "").replace(",", " ").split(" "):
        if not tok or skip_next:
            skip_next = False
            continue
        if tok in ("=", "<", ">", "<=", ">=", "!="):
            skip_next = True  # the version that follows
            continue
        requires.append(tok)
    return struct(
        requires = requires,
        libs = [t for t in fields.get("Libs", "").split(" ") if t],
        cflags = [t for t in fields.get("Cflags", "").split(" ") if t],
    )

def _pc_dirs(rctx):
    dirs = [d for d in rctx.os.environ.get("PKG_CONFIG_PATH", "").split(":") if d]
    res = rctx.execute(["pkg-config", "--variable", "pc_path", "pkg-config"])
    dirs += [d for d in res.stdout.strip().split(":") if d]
    return dirs

def _find_pc(rctx, dirs, mod):
    for d in dirs:
        p = rctx.path("%s/%s.pc" % (d, mod))
        if p.exists:
            return p
    fail("pkg-config module '%s' not found in %s (is its Debian -dev package installed?)" % (mod, dirs))

def _system_cc_repo_impl(rctx):
    dirs = _pc_dirs(rctx)
    targets = dict(rctx.attr.targets)
    if rctx.attr.module_prefix:
        for d in dirs:
            if not rctx.path(d).exists:
                continue
            for f in rctx.path(d).readdir():
                if f.basename.startswith(rctx.attr.module_prefix) and f.basename.endswith(".pc"):
                    mod = f.basename[:-3]
                    targets[mod[len(rctx.attr.module_prefix):]] = [mod]

    for dst, src in rctx.attr.symlinks.items():
        rctx.symlink(src, dst)

    # All modules needed, with what they require.
    todo = [m for mods in targets.values() for m in mods if not m.startswith("-")]
    modules = {}
    for _ in range(10000):
        if not todo:
            break
        mod = todo.pop()
        if mod in modules:
            continue
        modules[mod] = _parse_pc(rctx.read(_find_pc(rctx, dirs, mod)))
        todo.extend(modules[mod].requires)

    out = ['package(default_visibility = ["//visibility:public"])\n']
    inc_count = 0
    for mod in sorted(modules.keys()):
        pc = modules[mod]
        defines = []
        includes = []
        for flag in pc.cflags:
            if flag.startswith("-D") and flag[2:] not in defines:
                defines.append(flag[2:])
            elif flag.startswith("-I") and flag[2:] not in ("/usr/include", "/usr/local/include"):
                # Include dirs below /usr/include (e.g. pybind11's) are linked into
                # the repository so that `includes` can point at them.
                inc_count += 1
                link = "_include%d" % inc_count
                rctx.symlink(flag[2:], link)
                includes.append(link)
        out.append("""cc_library(
    name = "pc_%s",
    hdrs = glob([%s], allow_empty = True),
    includes = %r,
    defines = %r,
    linkopts = %r,
    deps = %r,
)
""" % (mod, ", ".join(["%r" % (i + "/**") for i in includes]), includes, defines,
       [f for f in pc.libs if not f.startswith("-L")],
       [":pc_" + r for r in pc.requires]))
    for name in sorted(targets.keys()):
        out.append("cc_library(name = %r, deps = %r, linkopts = %r)\n" % (
            name,
            [":pc_" + m for m in targets[name] if not m.startswith("-")],
            [m for m in targets[name] if m.startswith("-")],
        ))
    out.append(rctx.attr.extra_build)
    rctx.file("WORKSPACE", "workspace(name = %r)\n" % rctx.name)
    rctx.file("BUILD.bazel", "\n".join(out))

system_cc_repo = repository_rule(
    implementation = _system_cc_repo_impl,
    attrs = {
        # target name -> pkg-config modules; entries starting with "-" are
        # used as raw linker flags (for libraries without a .pc file).
        "targets": attr.string_list_dict(),
        # Also add one target per installed pkg-config module with this
        # prefix, named after the module without the prefix.
        "module_prefix": attr.string(),
        # path in the repository -> absolute path on the machine
        "symlinks": attr.string_dict(),
        "extra_build": attr.string(),
    },
    environ = ["PKG_CONFIG_PATH"],
)

# -------------------------------------------- the Python the module is for

_PYTHON_QUERY = """
import sys, sysconfig
paths = sysconfig.get_paths()
print(paths["include"])
print(paths.get("platinclude") or paths["include"])
print(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
print("%d.%d" % sys.version_info[:2])
"""

def _python_headers_impl(rctx):
    python = rctx.os.environ.get("CHAINTAG_PYTHON", "") or "/usr/bin/python3"
    res = rctx.execute([python, "-c", _PYTHON_QUERY])
    if res.return_code != 0:
        fail("CHAINTAG_PYTHON=%s: cannot run it: %s" % (python, res.stderr))
    include, platinclude, ext_suffix, version = res.stdout.strip().split("\n")
    links = []
    for i, d in enumerate([include] if platinclude == include else [include, platinclude]):
        if not rctx.path(d).exists:
            fail("%s (Python %s's headers, from %s) is missing: install its " % (d, version, python) +
                 "-dev package (Debian: python%s-dev)" % version)
        rctx.symlink(d, "_include%d" % i)
        links.append("_include%d" % i)
    if not rctx.path(include + "/Python.h").exists:
        fail("%s/Python.h is missing: install Python %s's -dev package" % (include, version))
    rctx.file("WORKSPACE", "workspace(name = %r)\n" % rctx.name)
    rctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])
# Python {version}'s headers ({python}); extensions are named *{ext_suffix}.
cc_library(
    name = "python3",
    hdrs = glob([{globs}], allow_empty = True),
    includes = {links},
)
""".format(version = version, python = python, ext_suffix = ext_suffix, links = repr(links),
           globs = ", ".join(["%r" % (l + "/**") for l in links])))

python_headers_repo = repository_rule(
    implementation = _python_headers_impl,
    environ = ["CHAINTAG_PYTHON"],
)

# Rules for protocol buffers: protoc and the C++ runtime from Debian, well-known
# types from /usr/include/google/protobuf. Makes proto_library and
# cc_proto_library work with their default flags.
# Well-known types and the ones they import.
_WKT = {
    "any": [],
    "api": ["any", "source_context", "type"],
    "descriptor": [],
    "duration": [],
    "empty": [],
    "field_mask": [],
    "source_context": [],
    "struct": [],
    "timestamp": [],
    "type": ["any", "source_context"],
    "wrappers": [],
}

_PROTOBUF_EXTRA = """
exports_files(["protoc"])

proto_lang_toolchain(
    name = "cc_toolchain",
    command_line = "--cpp_out=$(OUT)",
    runtime = ":protobuf",
    # Already compiled into libprotobuf: never generate code for them again.
    blacklisted_protos = [%s],
)
""" % ", ".join(['":%s_proto"' % w for w in sorted(_WKT)]) + "".join([
    """
proto_library(
    name = "%s_proto",
    srcs = ["google/protobuf/%s.proto"],
    deps = %r,
)
""" % (w, w, [":%s_proto" % d for d in deps])
    for w, deps in sorted(_WKT.items())
])

def offline_deps():
    """Call from WORKSPACE before anything else."""
    _rules_cc_stub(name = "rules_cc")
    native.local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")
    _coverage_stub(name = "remote_coverage_tools")

    system_cc_repo(
        name = "com_google_absl",
        module_prefix = "absl_",  # @com_google_absl//:strings, :flags_parse, ...
    )
    system_cc_repo(
        name = "com_googlesource_code_re2",
        targets = {"re2": ["re2"]},
    )
    system_cc_repo(
        name = "com_google_googletest",
        targets = {
            "gtest": ["gtest"],
            "gtest_main": ["gtest_main"],
            "gmock": ["gmock"],
            "gmock_main": ["gmock_main"],
        },
    )
    system_cc_repo(
        name = "com_github_google_benchmark",
        targets = {
            "benchmark": ["benchmark"],
            "benchmark_main": ["-lbenchmark_main", "benchmark"],
        },
    )
    system_cc_repo(
        name = "xxhash",
        targets = {"xxhash": ["libxxhash"]},
    )
    system_cc_repo(
        name = "zlib",
        targets = {"zlib": ["zlib"]},
    )
    # Optional: fetched only when a target that needs them is built, and
    # installed by ./bazelw then (see its PKGS). The Python module's headers:
    # The headers of the Python that the module is built for: $CHAINTAG_PYTHON
    # (the interpreter running `pip install`, which python/backend passes
    # with --repo_env), else Debian's /usr/bin/python3.
    python_headers_repo(name = "python3")
    system_cc_repo(
        name = "pybind11",
        targets = {"pybind11": ["pybind11"]},
    )
    # The tagging service (//tools:serve): cpp-httplib, built by Debian as a
    # shared library with OpenSSL, zlib and Brotli (its .pc defines them).
    system_cc_repo(
        name = "cpp_httplib",
        targets = {"httplib": ["cpp-httplib"]},
    )
    # Eigen, header-only, for //models:eigen_kernels_bench alone (the
    # library's kernels do not use it; docs/design.md).
    system_cc_repo(
        name = "eigen",
        targets = {"eigen": ["eigen3"]},
    )
    # Distributed training (//tools:train_mpi): Open MPI's C API.
    system_cc_repo(
        name = "openmpi",
        targets = {"mpi": ["ompi-c"]},
    )
    system_cc_repo(
        name = "com_google_protobuf",
        targets = {"protobuf": ["protobuf"], "protobuf_lite": ["protobuf-lite"]},
        symlinks = {
            "protoc": "/usr/bin/protoc",
            "google/protobuf": "/usr/include/google/protobuf",
        },
        extra_build = _PROTOBUF_EXTRA,
    )

# ------------------------------------------------ data outside the workspace

def _local_dir_impl(rctx):
    root = rctx.path(Label("@//:WORKSPACE")).dirname
    path = rctx.attr.path if rctx.attr.path.startswith("/") else "%s/%s" % (root, rctx.attr.path)
    rctx.file("WORKSPACE", "workspace(name = %r)\n" % rctx.name)
    if rctx.path(path).exists:
        rctx.symlink(path, "data")
        srcs = 'glob(["data/**"])'
    else:
        srcs = "[]"  # missing directory: an empty filegroup, tests can skip
    rctx.file("BUILD.bazel", """filegroup(
    name = "all",
    srcs = %s,
    visibility = ["//visibility:public"],
)
""" % srcs)

# A directory outside the workspace (path absolute, or relative to the
# WORKSPACE file) as @name//:all, with the files under data/ in runfiles:
# $TEST_SRCDIR/<name>/data/... . Unlike new_local_repository it does not
# fail when the directory is missing.
local_dir_repository = repository_rule(
    implementation = _local_dir_impl,
    attrs = {"path": attr.string(mandatory = True)},
    local = True,
)
