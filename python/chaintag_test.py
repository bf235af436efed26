"""Tests of the chaintag Python module (python/README.md).

Run by chaintag_test.sh with Debian's python3 (numpy) and the built module on
PYTHONPATH. The CLIs and preset configs come as arguments through the
environment: CHAINTAG_TAG, CHAINTAG_EVALUATE, CHAINTAG_TRAIN,
CHAINTAG_CHUNK_CONFIG, CHAINTAG_POS_CONFIG. A toy corpus written here covers
what needs no corpus (brute-force n-best and margins, errors); CoNLL-2000
($CHAINTAG_CORPORA) covers agreement with the CLIs: Conll2000Test, run by
its own target (tagged requires-corpora), which fails without it.
"""

import itertools
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import chaintag

CORPORA = os.environ.get("CHAINTAG_CORPORA", "")
CONLL2000_TEST = os.path.join(CORPORA, "conll2000", "test.txt")
HAVE_CONLL2000 = bool(CORPORA) and os.path.isfile(CONLL2000_TEST)
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()

TOY_LABELS = ["A", "B", "C"]


def write_toy_corpus(path, sentences, seed):
    """Words w0..w8; a word's label mostly its class, sometimes its
    predecessor's, so that transitions matter."""
    rng = random.Random(seed)
    with open(path, "w") as out:
        for _ in range(sentences):
            previous = None
            for _ in range(rng.randint(2, 7)):
                word = rng.randrange(9)
                label = TOY_LABELS[word % 3]
                if previous is not None and rng.random() < 0.3:
                    label = previous
                previous = label
                out.write("w%d %s\n" % (word, label))
            out.write("\n")


def toy_config(directory):
    return """
name: "toy"
corpus {
  train: "%s/toy_train.txt"
  test: "%s/toy_test.txt"
  format { attribute_columns: [0] label_column: 1 tag_scheme: NONE }
}
features {
  num_buckets: 4096
  bias: true
  templates { name: "w[0]" parts { offset: 0 attribute: 0 } }
  templates { name: "w[-1]" parts { offset: -1 attribute: 0 } }
}
solver { name: "bcfw" lambda: 0.01 max_passes: 8 seed: 1 num_threads: 1 }
eval_every: 0
""" % (directory, directory)


def read_conll(path, columns):
    """Sentences as lists of column tuples, and their gold tags."""
    sentences, gold, tokens, tags = [], [], [], []
    with open(path) as lines:
        for line in lines:
            fields = line.split()
            if not fields:
                if tokens:
                    sentences.append(tokens)
                    gold.append(tags)
                tokens, tags = [], []
                continue
            tokens.append(tuple(fields[c] for c in columns))
            tags.append(fields[-1])
    if tokens:
        sentences.append(tokens)
        gold.append(tags)
    return sentences, gold


def last_column_by_sentence(text):
    out, tags = [], []
    for line in text.splitlines():
        if line.strip():
            tags.append(line.split()[-1])
        elif tags:
            out.append(tags)
            tags = []
    if tags:
        out.append(tags)
    return out


def run(args, stdin=None):
    result = subprocess.run(args, input=stdin, capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        raise AssertionError("%s failed: %s" % (args[0], result.stderr))
    return result.stdout


class ToyModelTest(unittest.TestCase):
    """A three-label model trained on a generated corpus."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(TMP, "toy")
        os.makedirs(cls.dir, exist_ok=True)
        write_toy_corpus(os.path.join(cls.dir, "toy_train.txt"), 80, 1)
        write_toy_corpus(os.path.join(cls.dir, "toy_test.txt"), 20, 2)
        cls.lines = []
        cls.model, cls.summary = chaintag.train(
            toy_config(cls.dir), progress=cls.lines.append)
        cls.model2, _ = chaintag.train(
            toy_config(cls.dir), {"model.order": 2}, progress=False)

    def test_train_summary_and_progress(self):
        for key in ("passes", "primal", "dual", "gap", "f1", "accuracy"):
            self.assertIn(key, self.summary)
        self.assertEqual(self.summary["passes"], 8)
        self.assertGreaterEqual(self.summary["primal"], self.summary["dual"])
        self.assertAlmostEqual(self.summary["gap"],
                               self.summary["primal"] - self.summary["dual"],
                               places=6)
        self.assertGreater(self.summary["accuracy"], 60)
        self.assertNotIn("model_path", self.summary)  # temporary directory
        self.assertTrue(any(line.startswith("done:") for line in self.lines),
                        self.lines)
        self.assertTrue(all("\n" not in line for line in self.lines))
        self.assertEqual(self.model.summary["passes"], 8)

    def test_overrides_change_the_run(self):
        _, summary = chaintag.train(toy_config(self.dir),
                                    {"solver.max_passes": 3,
                                     "solver.lambda": 0.1,
                                     "solver.line_search": False},
                                    progress=False)
        self.assertEqual(summary["passes"], 3)
        self.assertAlmostEqual(summary["lambda"], 0.1)

    def test_an_override_of_lambda_replaces_the_configs_form(self):
        # As `train --set` does: the config states λ as lambda, the
        # overrides as c2 or c, and the overrides win; two forms in the
        # overrides themselves are refused.
        config = toy_config(self.dir)
        _, summary = chaintag.train(config, {"solver.max_passes": 1,
                                             "solver.c2": 2.0},
                                    progress=False)
        self.assertAlmostEqual(summary["lambda"],
                               2 * 2.0 / summary["num_examples"])
        config_c = config.replace("lambda: 0.01", "c: 4")
        _, summary = chaintag.train(config_c, {"solver.max_passes": 1,
                                               "solver.lambda": 0.5},
                                    progress=False)
        self.assertAlmostEqual(summary["lambda"], 0.5)
        with self.assertRaisesRegex(ValueError, "set one of lambda, c"):
            chaintag.train(config_c, {"solver.lambda": 0.5, "solver.c2": 1.0},
                           progress=False)

    def test_properties(self):
        self.assertEqual(sorted(self.model.labels), TOY_LABELS)
        self.assertEqual(self.model.num_columns, 1)
        self.assertEqual(self.model.attribute_columns, [0])
        self.assertEqual(self.model.order, 1)
        self.assertEqual(self.model2.order, 2)
        self.assertFalse(self.model.stacked)
        self.assertIn("chaintag.Model", repr(self.model))

    def test_tag_forms(self):
        tags = self.model.tag(["w0", "w1", "w2"])
        self.assertEqual(len(tags), 3)
        self.assertTrue(set(tags) <= set(TOY_LABELS))
        self.assertEqual(self.model.tag([("w0",), ("w1",), ("w2",)]), tags)
        self.assertEqual(self.model.tag(("w0", "w1", "w2")), tags)
        self.assertEqual(self.model.tag([]), [])

    def test_save_and_load(self):
        path = os.path.join(self.dir, "saved.model")
        self.model.save(path)
        loaded = chaintag.Model.load(path)
        sentence = ["w3", "w4", "w5", "w3"]
        self.assertEqual(loaded.tag(sentence), self.model.tag(sentence))

    def test_exact_features_tag_the_same_from_the_file(self):
        model, _ = chaintag.train(toy_config(self.dir),
                                  {"features.exact": True,
                                   "features.bias": False},
                                  progress=False)
        path = os.path.join(self.dir, "exact.model")
        model.save(path)
        loaded = chaintag.Model.load(path)
        for sentence in (["w3", "w4", "w5", "w3"], ["w0", "unseen", "w8"]):
            self.assertEqual(loaded.tag(sentence), model.tag(sentence))
            labelings, scores = loaded.nbest(sentence, 3)
            expected_labelings, expected_scores = model.nbest(sentence, 3)
            self.assertEqual(labelings, expected_labelings)
            np.testing.assert_array_equal(scores, expected_scores)

    def all_labelings(self, model, tokens):
        total = len(model.labels) ** len(tokens)
        labelings, scores = model.nbest(tokens, total + 5)
        return labelings, scores, total

    def test_nbest_brute_force(self):
        for model in (self.model, self.model2):
            for tokens in (["w1"], ["w0", "w4", "w8", "w2"],
                           ["w7", "w7", "w3", "w1", "w5"]):
                labelings, scores, total = self.all_labelings(model, tokens)
                # Every labeling exactly once, best first.
                self.assertEqual(len(labelings), total)
                self.assertEqual(
                    set(map(tuple, labelings)),
                    set(itertools.product(TOY_LABELS, repeat=len(tokens))))
                self.assertIsInstance(scores, np.ndarray)
                self.assertEqual(scores.dtype, np.float64)
                self.assertTrue(np.all(np.diff(scores) <= 1e-12))
                self.assertEqual(labelings[0], model.tag(tokens))
                best, best_scores = model.nbest(tokens, 1)
                self.assertEqual(best, [model.tag(tokens)])
                self.assertAlmostEqual(best_scores[0], scores[0], places=9)
                top3, top3_scores = model.nbest(tokens, 3)
                np.testing.assert_allclose(top3_scores, scores[:3],
                                           rtol=1e-12, atol=1e-12)

    def test_margins_brute_force(self):
        index = {label: y for y, label in enumerate(self.model.labels)}
        for tokens in (["w1"], ["w0", "w4", "w8", "w2"],
                       ["w7", "w7", "w3", "w1", "w5", "w6"]):
            labelings, scores, _ = self.all_labelings(self.model, tokens)
            expected = np.full((len(tokens), 3), -np.inf)
            for labeling, score in zip(labelings, scores):
                for t, label in enumerate(labeling):
                    expected[t, index[label]] = max(expected[t, index[label]],
                                                    score)
            margins = self.model.margins(tokens)
            self.assertEqual(margins.shape, (len(tokens), 3))
            np.testing.assert_allclose(margins, expected, rtol=1e-9,
                                       atol=1e-9)
        self.assertEqual(self.model.margins([]).shape, (0, 3))

    def test_margins_of_second_order_model_unsupported(self):
        with self.assertRaises(NotImplementedError) as raised:
            self.model2.margins(["w1", "w2"])
        self.assertIsInstance(raised.exception, chaintag.Error)
        self.assertEqual(raised.exception.code, "UNIMPLEMENTED")
        # The error names the call, not the marginals behind it.
        self.assertIn("margins are computed for first-order models only",
                      str(raised.exception))
        with self.assertRaisesRegex(
                NotImplementedError,
                "log probabilities are computed for first-order models"):
            self.model2.log_probability(["w1", "w2"], TOY_LABELS[:1] * 2)

    def test_tag_batch_threads_give_one_threads_result(self):
        rng = random.Random(5)
        sentences = [["w%d" % rng.randrange(12) for _ in range(rng.randint(
            0, 30))] for _ in range(500)]
        one = self.model.tag_batch(sentences)
        self.assertEqual(one, [self.model.tag(s) for s in sentences])
        for threads in (2, 3, 8):
            self.assertEqual(self.model.tag_batch(sentences, threads=threads),
                             one)
        self.assertEqual(self.model.tag_document(sentences), one)
        self.assertEqual(self.model.tag_batch([], threads=4), [])

    def test_bad_sentences(self):
        with self.assertRaises(TypeError):
            self.model.tag("w1 w2")  # a string, not a list of tokens
        with self.assertRaises(TypeError):
            self.model.tag(["w1", 2])
        with self.assertRaises(TypeError):
            self.model.tag(None)
        with self.assertRaises(ValueError) as raised:
            self.model.tag([("w1", "NN")])
        self.assertIn("token 0: 2 column(s), the model reads 1",
                      str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            self.model.tag_batch([["w1"], ["w2", ("w3", "x")]], threads=2)
        self.assertIn("sentence 1, token 1", str(raised.exception))
        with self.assertRaises(ValueError):
            self.model.tag(["w1", ""])
        for threads in (0, -1, 257):
            with self.assertRaises(ValueError):
                self.model.tag_batch([["w1"]], threads=threads)
        with self.assertRaises(ValueError):
            self.model.nbest(["w1"], 0)

    def test_bad_model_files(self):
        missing = os.path.join(self.dir, "no_such.model")
        with self.assertRaises(FileNotFoundError) as raised:
            chaintag.Model.load(missing)
        self.assertIsInstance(raised.exception, chaintag.NotFoundError)
        self.assertIn(missing, str(raised.exception))
        good = os.path.join(self.dir, "good.model")
        self.model.save(good)
        with open(good, "rb") as f:
            data = f.read()
        truncated = os.path.join(self.dir, "truncated.model")
        with open(truncated, "wb") as f:
            f.write(data[:len(data) // 2])
        with self.assertRaises(chaintag.Error) as raised:
            chaintag.Model.load(truncated)
        self.assertIn(truncated, str(raised.exception))
        self.assertTrue(raised.exception.code)
        corrupt = os.path.join(self.dir, "corrupt.model")
        with open(corrupt, "wb") as f:
            f.write(data[:-9] + bytes([data[-9] ^ 0xFF]) + data[-8:])
        with self.assertRaises(chaintag.Error):
            chaintag.Model.load(corrupt)
        text = os.path.join(self.dir, "text.model")
        with open(text, "w") as f:
            f.write("not a model\n")
        with self.assertRaises(chaintag.Error) as raised:
            chaintag.Model.load(text)
        self.assertIn(text, str(raised.exception))

    def test_bad_training_input(self):
        with self.assertRaises(ValueError) as raised:
            chaintag.train('name: "x"\ncorpus { train: }', progress=False)
        self.assertIn("config text:2:", str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            chaintag.train(toy_config(self.dir), {"solver.no_such_field": 1},
                           progress=False)
        self.assertIn("no_such_field", str(raised.exception))
        with self.assertRaises(TypeError):
            chaintag.train(toy_config(self.dir), {"solver.lambda": [1]},
                           progress=False)
        with self.assertRaises(FileNotFoundError):
            chaintag.train(os.path.join(self.dir, "missing.textproto"))
        with self.assertRaises(FileNotFoundError) as raised:
            chaintag.train(toy_config(self.dir),
                           {"corpus.train": "/nonexistent/train.txt"},
                           progress=False)
        self.assertIn("/nonexistent/train.txt", str(raised.exception))

    def test_progress_callback_exception_is_raised(self):
        def stop(line):
            raise RuntimeError("stop: " + line)

        with self.assertRaises(RuntimeError):
            chaintag.train(toy_config(self.dir), {"solver.max_passes": 2},
                           progress=stop)

    def test_train_from_path_keeps_files_in_output_dir(self):
        config = os.path.join(self.dir, "toy.textproto")
        with open(config, "w") as f:
            f.write(toy_config(self.dir))
        out = os.path.join(self.dir, "out")
        model, summary = chaintag.train(config, {"solver.max_passes": 2},
                                        output_dir=out, progress=False)
        self.assertEqual(summary["model_path"], os.path.join(out, "toy.model"))
        self.assertTrue(os.path.isfile(summary["model_path"]))
        self.assertTrue(os.path.isfile(summary["log_path"]))
        self.assertEqual(chaintag.Model.load(summary["model_path"]).tag(
            ["w1", "w2"]), model.tag(["w1", "w2"]))


class EvaluateTest(unittest.TestCase):

    def test_figures(self):
        gold = [["B-NP", "I-NP", "O", "B-VP"], ["B-PP", "B-NP"]]
        pred = [["B-NP", "I-NP", "O", "B-NP"], ["B-PP", "I-PP"]]
        result = chaintag.evaluate(gold, pred)
        self.assertEqual(result["tokens"], 6)
        self.assertEqual(result["correct_tags"], 4)
        self.assertEqual(result["phrases"], 4)
        self.assertEqual(result["found"], 3)
        self.assertEqual(result["correct"], 1)
        self.assertAlmostEqual(result["precision"], 100 / 3)
        self.assertAlmostEqual(result["recall"], 25)
        self.assertAlmostEqual(result["f1"], 2 * 25 * 100 / 3 / (25 + 100 / 3))
        self.assertAlmostEqual(result["accuracy"], 400 / 6)
        self.assertEqual(result["by_type"]["NP"]["phrases"], 2)
        self.assertEqual(result["by_type"]["NP"]["found"], 2)
        self.assertEqual(result["by_type"]["VP"]["found"], 0)
        self.assertTrue(result["report"].startswith(
            "processed 6 tokens with 4 phrases; found: 3 phrases; correct: 1."))

    def test_mismatched_input(self):
        with self.assertRaises(ValueError):
            chaintag.evaluate([["O"]], [])
        with self.assertRaises(ValueError) as raised:
            chaintag.evaluate([["O", "O"]], [["O"]])
        self.assertIn("sentence 0", str(raised.exception))


def cli_args_present():
    return all(os.environ.get(name) for name in (
        "CHAINTAG_TAG", "CHAINTAG_EVALUATE", "CHAINTAG_TRAIN",
        "CHAINTAG_CHUNK_CONFIG", "CHAINTAG_POS_CONFIG"))


class Conll2000Test(unittest.TestCase):
    """A small chunker (preset, 300 sentences, 3 passes) and POS tagger,
    compared with the CLIs on the CoNLL-2000 test split."""

    FLAGS = {"corpus.max_train_sentences": 300, "solver.max_passes": 3,
             "eval_every": 0}

    @classmethod
    def setUpClass(cls):
        if not HAVE_CONLL2000:
            raise AssertionError(
                "conll2000/test.txt not found under $CHAINTAG_CORPORA (%s): "
                "this test needs the staged corpora (../shared/corpora beside "
                "the workspace, which ./bazelw passes to tests); leave such "
                "tests out with --test_tag_filters=-requires-corpora"
                % (CORPORA or "unset"))
        if not cli_args_present():
            raise AssertionError("run by chaintag_test.sh, which passes the "
                                 "CLIs and presets in the environment")
        cls.dir = os.path.join(TMP, "conll2000")
        os.makedirs(cls.dir, exist_ok=True)
        cls.tag_cli = os.environ["CHAINTAG_TAG"]
        cls.evaluate_cli = os.environ["CHAINTAG_EVALUATE"]
        cls.model, cls.summary = chaintag.train(
            os.environ["CHAINTAG_CHUNK_CONFIG"], cls.FLAGS, corpora=CORPORA,
            output_dir=os.path.join(cls.dir, "py"), progress=False)
        cls.model_path = cls.summary["model_path"]
        cls.sentences, cls.gold = read_conll(CONLL2000_TEST,
                                             cls.model.attribute_columns)
        cls.cli_tagged = run([cls.tag_cli, "--model=" + cls.model_path,
                              "--input=" + CONLL2000_TEST])
        cls.cli_tags = last_column_by_sentence(cls.cli_tagged)

    def test_train_matches_cli_train(self):
        cli_dir = os.path.join(self.dir, "cli")
        os.makedirs(cli_dir, exist_ok=True)
        report = run([os.environ["CHAINTAG_TRAIN"],
                      "--config=" + os.environ["CHAINTAG_CHUNK_CONFIG"],
                      "--corpora=" + CORPORA, "--quiet",
                      "--model=" + os.path.join(cli_dir, "chunk.model"),
                      "--log=" + os.path.join(cli_dir, "chunk.jsonl"),
                      "--set=" + ",".join("%s=%s" % item
                                          for item in self.FLAGS.items())])
        self.assertEqual(self.summary["test_report"], report)
        self.assertEqual(self.summary["passes"], 3)
        for key in ("primal", "dual", "gap", "f1"):
            self.assertIn(key, self.summary)
        # A model is a function of data, config and seed: the same bytes.
        with open(os.path.join(cli_dir, "chunk.model"), "rb") as cli_model:
            with open(self.model_path, "rb") as py_model:
                self.assertTrue(cli_model.read() == py_model.read(),
                                "the model files differ")

    def test_tags_identical_to_cli(self):
        self.assertEqual(len(self.cli_tags), len(self.sentences))
        self.assertEqual(self.model.tag_batch(self.sentences), self.cli_tags)
        self.assertEqual([self.model.tag(s) for s in self.sentences],
                         self.cli_tags)

    def test_tag_batch_threads(self):
        one = self.model.tag_batch(self.sentences, threads=1)
        for threads in (2, 3):
            self.assertEqual(self.model.tag_batch(self.sentences,
                                                  threads=threads), one)

    def test_evaluate_matches_cli(self):
        cli_report = run([self.evaluate_cli], stdin=self.cli_tagged)
        result = chaintag.evaluate(self.gold, self.cli_tags)
        self.assertEqual(result["report"], cli_report)
        self.assertEqual(cli_report, self.summary["test_report"])
        self.assertAlmostEqual(result["f1"], self.summary["f1"], places=9)
        # The figures themselves, as the CLI prints them.
        first, second = cli_report.splitlines()[:2]
        counts = [int(word.strip(".;")) for word in first.split()
                  if word.strip(".;").isdigit()]
        self.assertEqual(counts, [result["tokens"], result["phrases"],
                                  result["found"], result["correct"]])
        printed = [float(word.strip("%;")) for word in second.split()
                   if word.strip("%;").replace(".", "", 1).isdigit()]
        self.assertEqual(printed, [round(result[key], 2) for key in (
            "accuracy", "precision", "recall", "f1")])

    def test_nbest_and_margins(self):
        for tokens in self.sentences[:40]:
            labelings, scores = self.model.nbest(tokens, 4)
            self.assertEqual(labelings[0], self.model.tag(tokens))
            self.assertEqual(len(set(map(tuple, labelings))), len(labelings))
            self.assertTrue(np.all(np.diff(scores) <= 0))
            margins = self.model.margins(tokens)
            self.assertEqual(margins.shape,
                             (len(tokens), len(self.model.labels)))
            np.testing.assert_allclose(margins.max(axis=1), scores[0],
                                       rtol=1e-9)
            best = [self.model.labels.index(tag) for tag in labelings[0]]
            off_best = margins.copy()
            off_best[np.arange(len(tokens)), best] = -np.inf
            self.assertAlmostEqual(scores[0] - off_best.max(),
                                   scores[0] - scores[1], places=6)

    def test_wrong_column_count(self):
        words = [token[0] for token in self.sentences[0]]
        with self.assertRaises(ValueError) as raised:
            self.model.tag(words)
        self.assertIn("the model reads 2", str(raised.exception))
        with self.assertRaises(ValueError):
            self.model.tag([token + ("x",) for token in self.sentences[0]])

    def test_bundle_tag_text_matches_cli(self):
        bundle_dir = os.path.join(self.dir, "bundle")
        os.makedirs(bundle_dir, exist_ok=True)
        pos, _ = chaintag.train(os.environ["CHAINTAG_POS_CONFIG"],
                                {"corpus.max_train_sentences": 300,
                                 "solver.max_passes": 2, "eval_every": 0},
                                corpora=CORPORA, progress=False)
        pos.save(os.path.join(bundle_dir, "pos.model"))
        shutil.copy(self.model_path, os.path.join(bundle_dir, "chunk.model"))
        with open(os.path.join(bundle_dir, "bundle.textproto"), "w") as f:
            f.write('name: "small"\n'
                    'stages { name: "pos" model: "pos.model" '
                    'inputs { column: "word" } writes: "pos" }\n'
                    'stages { name: "chunk" model: "chunk.model" '
                    'inputs { column: "word" } inputs { column: "pos" } '
                    'writes: "chunk" }\n')
        bundle = chaintag.Bundle.load(bundle_dir)
        self.assertEqual(bundle.columns, ["word", "pos", "chunk"])
        self.assertEqual(bundle.stages, ["pos", "chunk"])
        text = ("Rockwell International Corp. said it signed a tentative "
                "agreement.\n\n  \nHe said it. She didn't, in the U.S.\n"
                "Prices rose 5% to $1,000.50 on Monday.")
        for flags, kwargs in (([], {}),
                              (["--nbest=3", "--margins"],
                               {"nbest": 3, "margins": True}),
                              (["--paragraphs", "--constrained=false"],
                               {"paragraphs": True, "constrained": False})):
            cli = run([self.tag_cli, "--pipeline=" + bundle_dir,
                       "--format=json"] + flags, stdin=text)
            expected = [json.loads(line) for line in cli.splitlines()]
            got = bundle.tag_text(text, **kwargs)
            self.assertEqual(got, expected)
            self.assertEqual(bundle.tag_text(text, threads=2, **kwargs), got)
        first = bundle.tag_text(text)[0]
        line = text.splitlines()[0].encode()
        for token, offset in zip(first["tokens"], first["offsets"]):
            piece = line[offset.get("begin", 0):offset["end"]].decode()
            self.assertEqual(piece, token)
        self.assertTrue(first["stages"][1]["spans"])
        tagged = bundle.tag(first["tokens"])
        self.assertEqual([s["tags"] for s in tagged["stages"]],
                         [s["tags"] for s in first["stages"]])
        with self.assertRaises(FileNotFoundError):
            chaintag.Bundle.load(os.path.join(self.dir, "no_bundle"))


if __name__ == "__main__":
    unittest.main()
