"""The PEP 517 build backend of the chaintag package (python/pyproject.toml).

It needs nothing but the standard library, so `pip install --no-index
./python` works without a network and without --no-build-isolation.

build_wheel builds the extension with the repository's ./bazelw for the
Python that runs it (its headers, through --repo_env=CHAINTAG_PYTHON; see
third_party/offline_deps.bzl's python_headers_repo), checks that this
Python imports it, and writes a wheel of python/chaintag/ (the Python
files, _chaintag.pyi, py.typed) with the extension named by the
interpreter's EXT_SUFFIX, tagged for this interpreter and platform.

CHAINTAG_PREBUILT_EXTENSION=<path to _chaintag.so> skips the Bazel build
and packs that file instead (//python:pip_install_test, which runs inside
Bazel and may not run Bazel, passes the one in its runfiles); the import
check still runs.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT = os.path.dirname(_PYTHON_DIR)
_PACKAGE = "chaintag"
_EXTENSION_TARGET = "//python:chaintag/_chaintag.so"


def _project():
    """name, version, description, requires-python and the extras of
    pyproject.toml's [project] (simple `key = "value"` and `key = [..]`
    lines: tomllib is not in Python before 3.11)."""
    with open(os.path.join(_PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    project, extras, section = {}, {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
            continue
        match = re.match(r'^([A-Za-z0-9_.-]+)\s*=\s*(.+)$', line)
        if not match:
            continue
        key, value = match.groups()
        if section == "project" and value.startswith('"'):
            project[key] = value.strip('"')
        elif section == "project.optional-dependencies":
            extras[key] = re.findall(r'"([^"]+)"', value)
    for key in ("name", "version"):
        if key not in project:
            raise RuntimeError("pyproject.toml: [project] has no %s" % key)
    project["extras"] = extras
    return project


def _tag():
    """The wheel tag of this interpreter and platform, e.g.
    cp311-cp311-linux_x86_64."""
    name = sys.implementation.name
    interpreter = {"cpython": "cp", "pypy": "pp"}.get(name, name)
    interpreter += "%d%d" % sys.version_info[:2]
    soabi = sysconfig.get_config_var("SOABI") or ""
    match = re.match(r"^cpython-(\d+)", soabi)
    if match:
        abi = "cp" + match.group(1)
    else:  # PyPy's pypy39-pp73, for instance
        abi = re.sub(r"[^A-Za-z0-9]", "_", soabi) or "none"
    platform = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    return "%s-%s-%s" % (interpreter, abi, platform)


def _bazel_environment():
    """The environment for ./bazelw: the caller's, less what pip and the
    virtualenv put on PATH. Bazel hands PATH to every action and keys its
    caches on it, so pip's build-environment directories (new on every
    run) would rebuild the whole tree each time instead of reusing the
    outputs of ./bazelw builds."""
    env = dict(os.environ)
    prefixes = [os.path.realpath(p) + os.sep for p in {sys.prefix}
                if sys.prefix != sys.base_prefix]
    kept = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and "pip-build-env-" not in d
            and not any((os.path.realpath(d) + os.sep).startswith(p)
                        for p in prefixes)]
    env["PATH"] = os.pathsep.join(kept) or "/usr/bin:/bin"
    for name in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME",
                 "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def _bazel_extension():
    """Builds the extension for this Python with ./bazelw; its path."""
    bazelw = os.path.join(_ROOT, "bazelw")
    if not os.path.isfile(bazelw):
        raise RuntimeError(
            "%s not found: build from a checkout of the repository (pip "
            "install <checkout>/python), where pip builds in place" % bazelw)
    flags = ["--repo_env=CHAINTAG_PYTHON=" + sys.executable]
    env = _bazel_environment()
    # Bazel's progress on stderr: pip shows it with -v, and on failure.
    subprocess.run([bazelw, "build"] + flags + [_EXTENSION_TARGET], cwd=_ROOT,
                   env=env, check=True, stdout=sys.stderr)
    bin_dir = subprocess.run(
        [bazelw, "info"] + flags + ["bazel-bin"], cwd=_ROOT, env=env,
        check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        universal_newlines=True).stdout.strip()
    return os.path.join(bin_dir, "python", "chaintag", "_chaintag.so")


def _package_files(extension):
    """(path in the wheel, path on disk): python/chaintag/'s files and the
    extension, named as this interpreter imports extensions."""
    files = []
    source = os.path.join(_PYTHON_DIR, _PACKAGE)
    for directory, subdirectories, names in os.walk(source):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".pyc", ".so")):
                continue
            path = os.path.join(directory, name)
            files.append((os.path.relpath(path, _PYTHON_DIR).replace(os.sep, "/"),
                          path))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    files.append(("%s/_chaintag%s" % (_PACKAGE, suffix), extension))
    return files


def _check_import(files):
    """Imports chaintag._chaintag from the files laid out as installed, with
    this Python: an extension built for another Python fails here, with
    what to do, rather than after installing."""
    with tempfile.TemporaryDirectory(prefix="chaintag_check_") as staging:
        for name, path in files:
            target = os.path.join(staging, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)
        check = subprocess.run(
            [sys.executable, "-c",
             "import sys; sys.path.insert(0, sys.argv[1]); "
             "import chaintag._chaintag", staging],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True)
    if check.returncode != 0:
        raise RuntimeError(
            "the built extension does not import into %s (Python %d.%d): %s\n"
            "It must be built against this Python's headers (its -dev "
            "package; ./bazelw gets them from CHAINTAG_PYTHON=%s)."
            % (sys.executable, sys.version_info[0], sys.version_info[1],
               check.stdout.strip(), sys.executable))


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + project["name"],
        "Version: " + project["version"],
    ]
    if "description" in project:
        lines.append("Summary: " + project["description"])
    if "requires-python" in project:
        lines.append("Requires-Python: " + project["requires-python"])
    for extra, requirements in sorted(project["extras"].items()):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s; extra == "%s"' % (r, extra)
                  for r in requirements]
    return "\n".join(lines) + "\n"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (name, digest.rstrip(b"=").decode(), len(data))


def _dist_info_files(project, tag):
    return {
        "METADATA": _metadata(project),
        "WHEEL": "Wheel-Version: 1.0\nGenerator: chaintag_build\n"
                 "Root-Is-Purelib: false\nTag: %s\n" % tag,
        "top_level.txt": _PACKAGE + "\n",
    }


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    extension = os.environ.get("CHAINTAG_PREBUILT_EXTENSION") or _bazel_extension()
    if not os.path.isfile(extension):
        raise RuntimeError("the extension %s does not exist" % extension)
    files = _package_files(extension)
    _check_import(files)
    tag = _tag()
    dist_info = "%s-%s.dist-info" % (project["name"], project["version"])
    wheel_name = "%s-%s-%s.whl" % (project["name"], project["version"], tag)
    records = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        def add(name, data, mode=0o644):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
            records.append(_record_line(name, data))

        for name, source in files:
            with open(source, "rb") as f:
                add(name, f.read(), 0o755 if name.endswith(".so") else 0o644)
        for name, text in sorted(_dist_info_files(project, tag).items()):
            add("%s/%s" % (dist_info, name), text.encode("utf-8"))
        record = "%s/RECORD" % dist_info
        records.append(record + ",,")
        wheel.writestr(zipfile.ZipInfo(record, date_time=(1980, 1, 1, 0, 0, 0)),
                       "\n".join(records) + "\n")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError(
        "chaintag has no source distribution: the extension builds from the "
        "whole repository with Bazel. Install from a checkout (pip install "
        "<checkout>/python) or from a wheel made there (pip wheel "
        "<checkout>/python).")
