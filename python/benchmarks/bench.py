"""Measurements of python/README.md: tag_batch against the `tag` CLI on the
same model and CoNLL file, and the cost of one model.tag call.

  /usr/bin/python3 python/benchmarks/bench.py throughput <model> <conll> <tag CLI> [runs] [threads]
  /usr/bin/python3 python/benchmarks/bench.py call <model> <conll> [length] [calls] [runs]

throughput: per run, the CLI's wall time (`tag --model --input`, output to
/dev/null; process start and model load included) and tag_batch's (the
call alone; reading the file into lists is timed apart); medians, tokens/s
and their ratio. call: model.tag on the first sentence of exactly `length`
tokens (as python/tag_call_bench.cc picks it), ns per call, median of runs.
"""

import statistics
import subprocess
import sys
import time

import chaintag


def read_sentences(path, columns):
    sentences, tokens = [], []
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if fields:
                tokens.append(tuple(fields[c] for c in columns))
            elif tokens:
                sentences.append(tokens)
                tokens = []
    if tokens:
        sentences.append(tokens)
    return sentences


def throughput(model_path, conll, tag_cli, runs=5, threads=1):
    model = chaintag.Model.load(model_path)
    start = time.perf_counter()
    sentences = read_sentences(conll, model.attribute_columns)
    read_seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in sentences)
    cli, python = [], []
    for run in range(runs):
        start = time.perf_counter()
        subprocess.run([tag_cli, "--model=" + model_path, "--input=" + conll,
                        "--threads=%d" % threads], check=True,
                       stdout=subprocess.DEVNULL)
        cli.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.tag_batch(sentences, threads=threads)
        python.append(time.perf_counter() - start)
        print("run %d: cli %.4f s, tag_batch %.4f s, ratio %.2f" % (
            run + 1, cli[-1], python[-1], cli[-1] / python[-1]))
    cli_s, python_s = statistics.median(cli), statistics.median(python)
    print("%d sentences, %d tokens, threads=%d; reading into lists %.4f s" % (
        len(sentences), tokens, threads, read_seconds))
    print("median: cli %.4f s = %.0f tokens/s; tag_batch %.4f s = %.0f "
          "tokens/s; tag_batch/cli %.2f (with the reading %.2f)" % (
              cli_s, tokens / cli_s, python_s, tokens / python_s,
              cli_s / python_s, cli_s / (python_s + read_seconds)))


def call(model_path, conll, length=20, calls=200000, runs=5):
    model = chaintag.Model.load(model_path)
    sentence = next(s for s in read_sentences(conll, model.attribute_columns)
                    if len(s) == length)
    tag = model.tag
    per_call = []
    for run in range(runs):
        start = time.perf_counter_ns()
        for _ in range(calls):
            tag(sentence)
        per_call.append((time.perf_counter_ns() - start) / calls)
        print("run %d: %.1f ns/call" % (run + 1, per_call[-1]))
    print("sentence: %s\ntags: %s\nmedian: %.1f ns/call" % (
        sentence[0][0], " ".join(tag(sentence)), statistics.median(per_call)))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "throughput":
        throughput(args[0], args[1], args[2], *map(int, args[3:]))
    else:
        call(args[0], args[1], *map(int, args[2:]))
