"""What python-crfsuite's and sklearn-crfsuite's own test suites check,
restated on chaintag.crfsuite and chaintag.sklearn (their files are not
copied: each behaviour is written here on data of this test's own).
docs/python.md has the table of their calls; the tests of theirs that
chaintag does not pass are named there, with why."""

import os
import pickle
import tempfile
import unittest

import numpy as np
from sklearn.model_selection import cross_val_score

import chaintag.crfsuite as pycrfsuite
import chaintag.sklearn as sklearn_crfsuite
from chaintag.sklearn import metrics

# One sequence: weighted attributes, an empty item and a bytes value (the
# attribute "небо:серое"), as the peers' fixtures mix them.
XSEQ = [
    {"sun": 1, "wind": 0.5},
    {"sun": 1},
    {"sun": 1, "cloud": 0.5},
    {"wind": 0.5, "cloud": 0.5},
    {"sun": 0.5, "cloud": 1},
    {"cloud": 1, "wind": 0.1},
    {"sun": 1, "wind": 0.5},
    {},
    {"cloud": 1},
    {"небо": "серое".encode(), "cloud": 1},
]
YSEQ = ["dry", "dry", "dry", "wet", "wet", "wet", "dry", "dry", "wet", "wet"]
ALGORITHMS = ["lbfgs", "l2sgd", "pa", "ap", "arow"]


# Under `bazel test` the scratch files go to the test's own TEST_TMPDIR,
# which Bazel removes; run directly, to a folder removed at exit.
_SCRATCH = os.environ.get("TEST_TMPDIR")
if _SCRATCH is None:
    _SCRATCH_FOLDER = tempfile.TemporaryDirectory(prefix="compat_")
    _SCRATCH = _SCRATCH_FOLDER.name


def scratch(name):
    folder = tempfile.mkdtemp(prefix="compat_", dir=_SCRATCH)
    return os.path.join(folder, name)


def train_model(algorithm="lbfgs", xseq=XSEQ, yseq=YSEQ, **params):
    trainer = pycrfsuite.Trainer(algorithm, verbose=False)
    trainer.set_params(params)
    trainer.append(xseq, yseq)
    path = scratch("model")
    trainer.train(path)
    return path


class ItemSequenceTest(unittest.TestCase):

    def test_length_and_items(self):
        self.assertEqual(len(pycrfsuite.ItemSequence([])), 0)
        self.assertEqual(pycrfsuite.ItemSequence([]).items(), [])
        seq = pycrfsuite.ItemSequence([["x", "y"], ("y",)])
        self.assertEqual(len(seq), 2)
        self.assertEqual(seq.items(), [{"x": 1.0, "y": 1.0}, {"y": 1.0}])

    def test_values_bools_zeros_and_nesting(self):
        seq = pycrfsuite.ItemSequence([
            {"on": True, "off": False, "n": {"a": -2, "b": False},
             "s": "txt", "l": ["p", "q"], "set": {"r"}, "d": {"z": -0.3}},
        ])
        self.assertEqual(seq.items(), [{
            "on": 1.0, "off": 0.0, "n:a": -2.0, "n:b": 0.0, "s:txt": 1.0,
            "l:p": 1.0, "l:q": 1.0, "set:r": 1.0, "d:z": -0.3}])

    def test_unicode_and_bytes(self):
        seq = pycrfsuite.ItemSequence(
            [{"город": "Рим", "ключ": 2.0, "k": "знач".encode()}])
        self.assertEqual(seq.items(),
                         [{"город:Рим": 1.0, "ключ": 2.0, "k:знач": 1.0}])

    def test_items_round_trip(self):
        seq = pycrfsuite.ItemSequence(
            [{"a": {"b": "c", "d": 0.25}}, ["e"], {"f": {"g", "h"}}])
        self.assertEqual(pycrfsuite.ItemSequence(seq.items()).items(),
                         seq.items())

    def test_version_says_chaintag(self):
        self.assertTrue(pycrfsuite.CRFSUITE_VERSION.startswith("chaintag "))


class TrainerTest(unittest.TestCase):

    def test_train_writes_the_model_with_or_without_select(self):
        for algorithm in (None, "lbfgs"):
            trainer = pycrfsuite.Trainer(algorithm, verbose=False)
            trainer.append(XSEQ, YSEQ)
            path = scratch("model")
            self.assertFalse(os.path.exists(path))
            trainer.train(path)
            self.assertTrue(os.path.isfile(path))

    def test_train_without_sequences_writes_a_model_without_labels(self):
        for algorithm in (None, "lbfgs", "pa"):
            trainer = pycrfsuite.Trainer(algorithm, verbose=False)
            path = scratch("model")
            trainer.train(path)
            with pycrfsuite.Tagger().open(path) as tagger:
                self.assertEqual(tagger.labels(), [])
                self.assertEqual(tagger.tag([]), [])
                with self.assertRaisesRegex(ValueError, "no labels"):
                    tagger.tag(XSEQ)

    def test_messages_reach_a_subclass_that_skips_init(self):
        class Capturing(pycrfsuite.Trainer):
            def __init__(self):
                self.lines = []

            def message(self, message):
                self.lines.append(message)

        trainer = Capturing()
        trainer.select("lbfgs")
        trainer.append(XSEQ, YSEQ)
        self.assertEqual(trainer.lines, [])
        trainer.train(scratch("model"))
        self.assertIn("type: CRF1d\n", trainer.lines)
        self.assertTrue(any(line.startswith("pass ") for line in trainer.lines))

    def test_an_exception_in_message_reaches_the_caller(self):
        class Boom(Exception):
            pass

        class Raising(pycrfsuite.Trainer):
            def message(self, message):
                raise Boom(message)

        trainer = Raising()
        trainer.append(XSEQ, YSEQ)
        with self.assertRaises(Boom):
            trainer.train(scratch("model"))

    def test_select_refuses_an_unknown_algorithm(self):
        with self.assertRaisesRegex(ValueError, "unknown algorithm 'nope'"):
            pycrfsuite.Trainer().select("nope")

    def test_every_algorithm_round_trips_its_parameters(self):
        for algorithm in ["lbfgs", "l2sgd", "ap", "averaged-perceptron",
                          "pa", "passive-aggressive", "arow"]:
            trainer = pycrfsuite.Trainer(algorithm)
            params = trainer.get_params()
            self.assertIn("feature.minfreq", params)
            trainer.set_params(params)
            self.assertEqual(trainer.get_params(), params)
            for value in (True, False):
                trainer.set("feature.possible_states", value)
                self.assertEqual(
                    trainer.get_params()["feature.possible_states"], value)
            with self.assertRaises(ValueError):
                trainer.set_params(dict(params, nonsense=1))

    def test_params_and_help_follow_the_algorithm(self):
        trainer = pycrfsuite.Trainer()
        trainer.select("lbfgs")
        for name in ("c1", "c2", "num_memories"):
            self.assertIn(name, trainer.params())
        self.assertIn("L1", trainer.help("c1"))
        trainer.select("l2sgd")
        self.assertIn("c2", trainer.params())
        self.assertNotIn("c1", trainer.params())
        self.assertIn("L2", trainer.help("c2"))
        for name in ("nonsense", "c1"):
            with self.assertRaises(ValueError):
                trainer.help(name)

    def test_get_and_set(self):
        trainer = pycrfsuite.Trainer()
        trainer.select("l2sgd")
        self.assertEqual(trainer.get("c2"), 1.0)  # CRFsuite's default
        trainer.set("c2", 0.3)
        self.assertEqual(trainer.get("c2"), 0.3)
        self.assertEqual(pycrfsuite.Trainer(params={"c2": 42}).get("c2"), 42)
        trainer.set("c2", "0.5")  # pycrfsuite passes strings through
        self.assertEqual(float(trainer.get("c2")), 0.5)
        # A value that is no number is refused when set, by name, not when
        # train() reads it.
        for name, value, why in (("c2", "abc", "c2 must be a number"),
                                 ("c2", float("inf"), "c2 must be a finite"),
                                 ("max_iterations", "1.5",
                                  "max_iterations must be a whole number")):
            with self.assertRaisesRegex(ValueError, why):
                trainer.set(name, value)
        self.assertEqual(float(trainer.get("c2")), 0.5)


class TaggerTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.model = train_model()

    def test_labels_only_while_open(self):
        tagger = pycrfsuite.Tagger()
        with self.assertRaises(ValueError):
            tagger.labels()
        with tagger.open(self.model):
            self.assertEqual(set(tagger.labels()), {"dry", "wet"})
        with self.assertRaises(ValueError):
            tagger.labels()

    def test_open_errors(self):
        with self.assertRaises(IOError):
            pycrfsuite.Tagger().open(scratch("missing"))
        short = scratch("short")
        for content in (b"xyz", b"lCRFxyz", open(__file__, "rb").read()):
            with open(short, "wb") as f:
                f.write(content)
            with self.assertRaises(ValueError):
                pycrfsuite.Tagger().open(short)
        for content in (b"", b"lCRFxyz"):
            with self.assertRaises(ValueError) as raised:
                pycrfsuite.Tagger().open_inmemory(content)
            # Named as bytes, not by the temporary file that held them.
            self.assertIn("the bytes given", str(raised.exception))
            self.assertNotIn("chaintag_model_", str(raised.exception))
        with self.assertRaisesRegex(ValueError, "a CRFsuite model"):
            pycrfsuite.Tagger().open_inmemory(b"lCRFxyz")

    def test_open_inmemory_tags_as_open(self):
        with open(self.model, "rb") as f:
            data = f.read()
        with pycrfsuite.Tagger().open_inmemory(data) as tagger:
            self.assertEqual(tagger.tag(XSEQ), YSEQ)

    def test_tag_forms(self):
        with pycrfsuite.Tagger().open(self.model) as tagger:
            self.assertEqual(tagger.tag(XSEQ), YSEQ)
            self.assertEqual(tagger.tag(pycrfsuite.ItemSequence(XSEQ)), YSEQ)
            # 0 and 1 as bools read the same.
            as_bools = [{k: bool(v) if v in (0, 1) else v
                         for k, v in item.items()} for item in XSEQ]
            self.assertEqual(tagger.tag(as_bools), YSEQ)
            # Names alone drop the weights: the scores change.
            tagger.set(XSEQ)
            weighted = [tagger.marginal("dry", t) for t in range(len(XSEQ))]
            tagger.set([list(item) for item in XSEQ])
            unweighted = [tagger.marginal("dry", t) for t in range(len(XSEQ))]
            self.assertNotEqual(weighted, unweighted)

    def test_names_only_model_tags_names_only(self):
        ones = [{name: 1 for name in item} for item in XSEQ]
        path = train_model(None, ones, YSEQ, c2=1e-6)
        with pycrfsuite.Tagger().open(path) as tagger:
            self.assertEqual(tagger.tag(ones), YSEQ)
            self.assertEqual(tagger.tag([list(item) for item in ones]), YSEQ)

    def test_probability(self):
        with pycrfsuite.Tagger().open(self.model) as tagger:
            best = tagger.probability(tagger.tag(XSEQ))
            flat = tagger.probability(["dry"] * len(YSEQ))
            self.assertGreater(best, flat)
            self.assertTrue(0 < best < 1 and 0 < flat < 1)

    def test_dump_and_info(self):
        tagger = pycrfsuite.Tagger().open(self.model)
        path = scratch("dump.txt")
        tagger.dump(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("LABELS = {", text)
        self.assertIn("небо:серое --> wet:", text)
        info = tagger.info()
        self.assertGreater(info.transitions[("dry", "dry")],
                           info.transitions[("dry", "wet")])
        self.assertGreater(info.state_features[("sun", "dry")],
                           info.state_features[("sun", "wet")])
        self.assertIn(("небо:серое", "wet"), info.state_features)
        self.assertEqual(info.header["num_labels"], "2")
        self.assertEqual(set(info.labels), {"dry", "wet"})
        self.assertEqual(set(info.attributes),
                         {"sun", "wind", "cloud", "небо:серое"})
        tagger.close()
        with self.assertRaises(RuntimeError):
            tagger.info()
        with self.assertRaises(RuntimeError):
            tagger.dump(path)

    def test_string_values_and_nesting_become_attributes(self):
        path = train_model(None, [{"k": "v"}, {"z": False},
                                  {"k": "v", "z": True}, {"z": 0.3}],
                           ["A", "B", "A", "A"])
        info = pycrfsuite.Tagger().open(path).info()
        self.assertEqual(set(info.attributes), {"k:v", "z"})
        self.assertGreater(info.state_features[("k:v", "A")], 0)
        path = train_model(None, [
            {"o": {"s": "t", "w": 0.5, "l": ["a", "b"], "m": {"a": -0.5}}},
            {"o": {"s": "u", "w": -0.5, "m": {"a", "b"}}},
        ], ["one", "two"])
        info = pycrfsuite.Tagger().open(path).info()
        self.assertEqual(set(info.attributes), {
            "o:s:t", "o:w", "o:l:a", "o:l:b", "o:m:a", "o:s:u", "o:m:b"})
        for name in ("o:s:t", "o:w", "o:l:a", "o:l:b"):
            self.assertGreater(info.state_features[(name, "one")], 0)
            self.assertLessEqual(info.state_features.get((name, "two"), 0), 0)
        for name in ("o:s:u", "o:m:a", "o:m:b"):
            self.assertGreater(info.state_features[(name, "two")], 0)
            self.assertLessEqual(info.state_features.get((name, "one"), 0), 0)


class EstimatorTest(unittest.TestCase):

    def test_every_algorithm_fits_predicts_and_scores(self):
        for algorithm in ALGORITHMS:
            crf = sklearn_crfsuite.CRF(algorithm).fit([XSEQ], [YSEQ])
            predicted = crf.predict([XSEQ])
            self.assertIsInstance(predicted, np.ndarray)  # as 0.5 returns
            self.assertTrue((predicted == YSEQ).all(), algorithm)
            self.assertEqual(crf.score([XSEQ], [YSEQ]), 1.0)

    def test_verbose_fit_with_and_without_dev(self):
        for algorithm in ALGORITHMS:
            for dev in (None, ([XSEQ], [YSEQ])):
                crf = sklearn_crfsuite.CRF(algorithm, verbose=True)
                X_dev, y_dev = dev if dev else (None, None)
                crf.fit(X=[XSEQ, XSEQ], y=[YSEQ, YSEQ], X_dev=X_dev,
                        y_dev=y_dev)
                self.assertTrue((crf.predict([XSEQ]) == [YSEQ]).all())

    def test_marginals_are_distributions_over_the_labels(self):
        for algorithm in ALGORITHMS:
            crf = sklearn_crfsuite.CRF(algorithm).fit([XSEQ], [YSEQ])
            marginals = crf.predict_marginals([XSEQ])
            self.assertEqual(len(marginals), 1)
            self.assertEqual(len(marginals[0]), len(YSEQ))
            for row in marginals[0]:
                self.assertEqual(set(row), set(crf.tagger_.labels()))
                self.assertAlmostEqual(sum(row.values()), 1.0, places=6)

    def test_predict_before_fit_raises(self):
        with self.assertRaises(Exception):
            sklearn_crfsuite.CRF("pa").predict([XSEQ])

    def test_pickle_keeps_the_algorithm_and_the_model(self):
        for algorithm in ALGORITHMS:
            crf = sklearn_crfsuite.CRF(algorithm=algorithm).fit([XSEQ], [YSEQ])
            copy = pickle.loads(
                pickle.dumps(crf, protocol=pickle.HIGHEST_PROTOCOL))
            self.assertEqual(copy.score([XSEQ], [YSEQ]), 1.0)
            self.assertEqual(copy.algorithm, algorithm)

    def test_model_filename(self):
        path = scratch("weather.model")
        sklearn_crfsuite.CRF(model_filename=path).fit([XSEQ], [YSEQ])
        self.assertTrue(os.path.exists(path))
        loaded = sklearn_crfsuite.CRF(model_filename=path)
        self.assertEqual(loaded.score([XSEQ], [YSEQ]), 1.0)
        copy = pickle.loads(pickle.dumps(loaded))
        self.assertEqual(copy.score([XSEQ], [YSEQ]), 1.0)

    def test_cross_validation_in_worker_processes(self):
        scores = cross_val_score(sklearn_crfsuite.CRF(), [XSEQ] * 10,
                                 [YSEQ] * 10, n_jobs=2, cv=5)
        self.assertEqual(list(scores), [1.0] * 5)

    def test_dev_needs_both_halves(self):
        with self.assertRaises(ValueError):
            sklearn_crfsuite.CRF().fit([XSEQ] * 4, [YSEQ] * 4, [XSEQ] * 4)

    def test_attributes_none_before_fit_then_the_model(self):
        path = scratch("weather.model")
        crf = sklearn_crfsuite.CRF(model_filename=path + ".later")
        crf.model_filename = None  # not fitted, and no file to read
        for name in ("tagger_", "size_", "classes_", "num_attributes_",
                     "attributes_", "state_features_",
                     "transition_features_"):
            self.assertIsNone(getattr(crf, name), name)
        crf.model_filename = path
        crf.fit([XSEQ] * 5, [YSEQ] * 5)
        self.assertEqual(set(crf.classes_), {"dry", "wet"})
        self.assertEqual(crf.size_, os.path.getsize(path))  # the file's bytes
        self.assertEqual(crf.tagger_.tag(XSEQ), YSEQ)
        self.assertEqual(len(crf.attributes_), crf.num_attributes_)
        self.assertIn("cloud", crf.attributes_)
        self.assertTrue(all(crf.attributes_))
        for (attribute, label), weight in crf.state_features_.items():
            self.assertIn(attribute, crf.attributes_)
            self.assertIn(label, crf.classes_)
            self.assertIsInstance(weight, float)
        self.assertEqual(set(crf.transition_features_),
                         {(a, b) for a in crf.classes_ for b in crf.classes_})


class MetricsTest(unittest.TestCase):
    TRUE = [["a", "c", "b"], ["a", "a"]]
    PRED = [["b", "c", "b"], ["a", "b"]]

    def test_flat_scores(self):
        self.assertEqual(metrics.flat_accuracy_score(self.TRUE, self.PRED), 0.6)
        self.assertEqual(metrics.flat_precision_score(
            self.TRUE, self.PRED, average="micro"), 0.6)
        self.assertEqual(metrics.flat_recall_score(
            self.TRUE, self.PRED, average="micro"), 0.6)
        f1 = metrics.flat_f1_score(self.TRUE, self.PRED, average="macro")
        self.assertAlmostEqual(f1, 2 / 3)
        self.assertEqual(metrics.flat_fbeta_score(
            self.TRUE, self.PRED, beta=1, average="macro"), f1)

    def test_sequence_accuracy(self):
        self.assertEqual(metrics.sequence_accuracy_score(self.TRUE, self.PRED), 0)
        self.assertEqual(metrics.sequence_accuracy_score([], []), 0)
        self.assertAlmostEqual(metrics.sequence_accuracy_score(
            [[1], [2, 3], [4]], [[1], [2, 3], [5]]), 2 / 3)


if __name__ == "__main__":
    unittest.main()
