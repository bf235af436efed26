"""Runs README.md's Python example and compares what it prints.

Usage: readme_example_test.py <README.md> <python>, in a directory laid
out as the README assumes. The example is the first ```python block of the
README's "## Python" section; what it prints is the first ```text block
after it. Stdout must equal that block line for line (the progress lines
go to stderr).
"""

import subprocess
import sys


def blocks(section):
    """(info string, lines) of each fenced block of a section."""
    found, fence = [], None
    for line in section:
        if fence is None and line.startswith("```"):
            fence = (line[3:].strip(), [])
        elif fence is not None and line.startswith("```"):
            found.append(fence)
            fence = None
        elif fence is not None:
            fence[1].append(line)
    return found


def main(readme_path, python):
    with open(readme_path, encoding="utf-8") as readme:
        lines = readme.read().splitlines()
    start = lines.index("## Python")
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("## ")), len(lines))
    fenced = blocks(lines[start + 1:end])
    code = next(i for i, (info, _) in enumerate(fenced) if info == "python")
    expected = next(body for info, body in fenced[code + 1:] if info == "text")
    run = subprocess.run([python, "-c", "\n".join(fenced[code][1])],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, check=False)
    if run.returncode != 0:
        print("FAIL: README.md's Python example exited with %d:\n%s" %
              (run.returncode, run.stderr[-4000:]))
        return 1
    printed = run.stdout.splitlines()
    if printed != expected:
        print("FAIL: README.md's Python example prints\n  %s\nbut the README "
              "says it prints\n  %s\nUpdate the ```text block after the "
              "example in README.md (## Python)." %
              ("\n  ".join(printed), "\n  ".join(expected)))
        return 1
    print("README.md's Python example prints what the README says:\n  " +
          "\n  ".join(printed))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
