"""chaintag_fuzz_target: one fuzz target, its libFuzzer binary and its replay test."""

def chaintag_fuzz_target(name, deps, max_len, mutations, max_seconds = 25):
    """Defines the targets of fuzz target `name`.

    Sources are `<name>_fuzzer.cc` (defining LLVMFuzzerTestOneInput) and the
    seed corpus `corpus/<name>/`.

      <name>_fuzzer      libFuzzer binary under --config=fuzz (clang, ASan,
                         UBSan); with any other config the replay driver.
                         Tagged manual: `bazel build //...` skips it.
      <name>_replay_test the seeds plus `mutations` seeded mutations (at most
                         `max_len` bytes), in the normal test suite; stops
                         early (passing) after `max_seconds`.
    """
    native.cc_library(
        name = name + "_fuzz_lib",
        testonly = True,
        srcs = [name + "_fuzzer.cc"],
        deps = deps + [":fuzz_util"],
        alwayslink = True,
    )
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        deps = [":" + name + "_fuzz_lib"] + select({
            ":libfuzzer": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["manual"],
    )
    native.cc_test(
        name = name + "_replay_test",
        size = "medium",
        srcs = [],
        args = [
            "--mutations=%d" % mutations,
            "--max_len=%d" % max_len,
            "--max_seconds=%d" % max_seconds,
            "--seed=1",
            "fuzz/corpus/" + name,
        ],
        data = native.glob(["corpus/%s/**" % name]),
        deps = [
            ":" + name + "_fuzz_lib",
            ":replay_main",
        ],
        tags = ["fuzz_replay"],
    )
