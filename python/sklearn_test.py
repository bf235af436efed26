"""chaintag.ItemSequences, chaintag.sklearn.CRF and the python-crfsuite
Trainer/Tagger on a generated corpus, against hand-computed attributes,
brute force over labelings and the train/tag CLIs."""

import itertools
import math
import os
import pathlib
import pickle
import random
import signal
import subprocess
import tempfile
import time
import unittest
import warnings

import numpy

import chaintag
import chaintag.sklearn as sklearn_crfsuite
from chaintag import _settings
from chaintag.sklearn import metrics, scorers
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

# Scratch folders under the test's TEST_TMPDIR, which Bazel removes.
TMP = os.environ.get("TEST_TMPDIR")

WORDS = ["the", "a", "dog", "cat", "runs", "sleeps", "Paris", "Rome", "in",
         "big", "small", "Anna", "Bob"]
TAGS = {"the": "D", "a": "D", "dog": "N", "cat": "N", "runs": "V",
        "sleeps": "V", "Paris": "L", "Rome": "L", "in": "P", "big": "A",
        "small": "A", "Anna": "N", "Bob": "N"}


def corpus(count, seed):
    rng = random.Random(seed)
    sentences = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 7))]
        sentences.append(words)
    return sentences


def item(words, i):
    word = words[i]
    features = {"bias": 1.0, "w": word.lower(), "suffix": word[-2:],
                "title": word.istitle(), "len": float(len(word)) / 4}
    if i > 0:
        features["-1"] = {"w": words[i - 1].lower()}
    else:
        features["BOS"] = True
    return features


def featurise(sentences):
    X = [[item(s, i) for i in range(len(s))] for s in sentences]
    y = [[TAGS[w] for w in s] for s in sentences]
    return X, y


def escape(name):
    return name.replace("\\", "\\\\").replace(":", "\\:")


def write_crfsuite(path, X, y):
    """The CRFsuite attribute file of X, y (the CLI's input)."""
    sequences = chaintag.ItemSequences(X, y)
    with open(path, "w") as f:
        for i in range(len(sequences)):
            for label, attributes in zip(y[i], sequences.attributes(i)):
                fields = [label] + [
                    escape(n) if v == 1.0 else "%s:%r" % (escape(n), v)
                    for n, v in attributes]
                f.write("\t".join(fields) + "\n")
            f.write("\n")


class ItemFormsTest(unittest.TestCase):

    def attributes(self, xseq):
        return chaintag.ItemSequences([xseq]).attributes(0)

    def test_every_form_as_python_crfsuite_reads_it(self):
        got = self.attributes([
            ["a", "b"],
            ("c",),
            {"f": 2.5, "i": 3, "s": "x", "t": True, "u": False},
            {"n": {"p": 1.5, "q": "r", "deep": {"z": 0.5}}},
            {"l": ["u", "v"], b"raw": 1.0},
            {"e": "", "b": "не светит".encode()},
            set(["only"]),
        ])
        self.assertEqual(got, [
            [("a", 1.0), ("b", 1.0)],
            [("c", 1.0)],
            [("f", 2.5), ("i", 3.0), ("s:x", 1.0), ("t", 1.0)],  # u: 0
            [("n:p", 1.5), ("n:q:r", 1.0), ("n:deep:z", 0.5)],
            [("l:u", 1.0), ("l:v", 1.0), ("raw", 1.0)],
            [("e:", 1.0), ("b:не светит", 1.0)],
            [("only", 1.0)],
        ])

    def test_item_sequence_keeps_values_as_given(self):
        # python-crfsuite's ItemSequence.items(): the same attributes, with
        # zeros kept and the values unrounded (training keeps float32).
        seq = chaintag.crfsuite.ItemSequence(
            [{"f": -0.1, "t": True, "u": False, "n": {"b": b"x", "k": ["y"]}},
             ["a", "a2"], {}])
        self.assertEqual(len(seq), 3)
        self.assertEqual(seq.items(), [
            {"f": -0.1, "t": 1.0, "u": 0.0, "n:b:x": 1.0, "n:k:y": 1.0},
            {"a": 1.0, "a2": 1.0}, {}])
        self.assertEqual(
            chaintag.crfsuite.ItemSequence(seq.items()).items(), seq.items())
        self.assertEqual(chaintag.ItemSequences([seq.items()]).attributes(0),
                         self.attributes(seq._items))

    def test_non_ascii_names_are_utf8(self):
        self.assertEqual(self.attributes([{"w": "Zürich", "é": 1.0}]),
                         [[("w:Zürich", 1.0), ("é", 1.0)]])

    def test_names_are_interned_but_read_back_per_sequence(self):
        sequences = chaintag.ItemSequences([[["a", "b"]], [["b", "c"]]],
                                           [["X"], ["Y"]])
        self.assertEqual(sequences.num_distinct_names, 3)
        self.assertEqual(sequences.num_attributes, 4)
        self.assertEqual(sequences.num_items, 2)
        self.assertEqual(sequences.attributes(1), [[("b", 1.0), ("c", 1.0)]])
        self.assertEqual(sequences.labels(1), ["Y"])

    def test_errors_name_the_sequence_and_item(self):
        with self.assertRaisesRegex(TypeError, r"X\[0\]\[1\]: attribute names"):
            chaintag.ItemSequences([[{"a": 1.0}, {3: 1.0}]])
        with self.assertRaisesRegex(TypeError, r"X\[0\]\[0\]: an item is"):
            chaintag.ItemSequences([["word"]])
        with self.assertRaisesRegex(TypeError, r"value of 'a' must be"):
            chaintag.ItemSequences([[{"a": object()}]])
        with self.assertRaisesRegex(ValueError, r"X\[0\]\[0\]: the value of 'a'"):
            chaintag.ItemSequences([[{"a": float("nan")}]])
        with self.assertRaisesRegex(ValueError, r"'a' is too large for a float"):
            chaintag.ItemSequences([[{"a": 10**400}]])
        with self.assertRaisesRegex(ValueError, r"y\[1\] has 1 labels for 2 items"):
            chaintag.ItemSequences([[["a"]], [["a"], ["b"]]], [["X"], ["Y"]])
        with self.assertRaisesRegex(ValueError, "X has 2 sequences but y has 1"):
            chaintag.ItemSequences([[["a"]], [["b"]]], [["X"]])
        with self.assertRaisesRegex(TypeError,
                                    r"y\[0\]\[0\]: labels must be str or bytes"):
            chaintag.ItemSequences([[["a"]]], [[1]])
        # Bytes labels are UTF-8, read back as str (python-crfsuite's).
        self.assertEqual(chaintag.ItemSequences(
            [[["a"], ["b"]]], [["X", "\u00e9".encode()]]).labels(0), ["X", "\u00e9"])
        with self.assertRaisesRegex(ValueError, r"y\[0\]\[1\]: a bytes label"):
            chaintag.ItemSequences([[["a"], ["b"]]], [["X", b"\xff"]])
        # Finite, but beyond the float32 the model keeps.
        with self.assertRaisesRegex(ValueError, r"within float32's range"):
            chaintag.ItemSequences([[{"a": 1e39}]])


class EstimatorTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.X, cls.y = featurise(corpus(120, 1))
        cls.X_test, cls.y_test = featurise(corpus(40, 2))

    def crf(self, **kwargs):
        kwargs.setdefault("algorithm", "pa")  # the structured SVM
        kwargs.setdefault("regularization", 0.01)
        kwargs.setdefault("max_iterations", 15)
        return sklearn_crfsuite.CRF(**kwargs)

    def test_fit_predict_matches_the_cli_on_the_crfsuite_file(self):
        # pa: the structured SVM (hinge, BCFW).
        self.check_against_cli(self.crf(keep_feature_names=False),
                               _settings.config_text(0.01, max_passes=15,
                                                     keep_feature_names=False))

    def test_lbfgs_trains_the_crf_with_c1_and_c2_as_crfsuite(self):
        # CRFsuite's Σ NLL + c1‖w‖₁ + c2‖w‖² divided by n: λ = 2·c2/n and
        # l1 = c1/n, the CRF loss, solved by lbfgs (OWL-QN) with L-BFGS's
        # memory and line search trials as given.
        n = len(self.X)
        crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.5, c2=0.25,
                                   max_iterations=15, num_memories=4,
                                   max_linesearch=7, period=3, delta=1e-3,
                                   epsilon=1e-4, keep_feature_names=False)
        self.check_against_cli(crf, _settings.config_text(
            2 * 0.25 / n, max_passes=15, keep_feature_names=False,
            loss=_settings.CRF, solver="lbfgs", l1=0.5 / n,
            lbfgs={"num_memories": 4, "max_linesearch": 7, "period": 3,
                   "delta": 1e-3, "epsilon": 1e-4}))
        self.assertEqual(crf.summary_["solver"], "lbfgs")
        # l2sgd: the same objective by sag.
        sgd = sklearn_crfsuite.CRF(algorithm="l2sgd", c2=0.25,
                                   max_iterations=5, keep_feature_names=False)
        self.check_against_cli(sgd, _settings.config_text(
            2 * 0.25 / n, max_passes=5, keep_feature_names=False,
            loss=_settings.CRF, solver="sag"))
        self.assertEqual(sgd.summary_["solver"], "sag")
        self.assertAlmostEqual(crf.summary_["lambda"], 0.5 / n)
        # A CRF's marginals are its probabilities: each row sums to 1 and
        # the labeling's probability is the product along a chain.
        self.assertAlmostEqual(
            sum(crf.predict_marginals_single(self.X_test[0])[0].values()), 1.0)

    def test_all_possible_states_false_weighs_the_seen_labels(self):
        # CRFsuite's all_possible_states=False with lbfgs or l2sgd (sag):
        # model.states OBSERVED_STATES, fewer state features than with
        # every label, and the CLI's model from the same config; unset,
        # every label. With pa (the structured SVM) too.
        n = len(self.X)

        def names(features, prefix=""):
            for key, value in features.items():
                if isinstance(value, dict):
                    yield from names(value, prefix + key + ":")
                else:
                    yield prefix + key + (
                        ":" + value if isinstance(value, str) else "")

        observed = {(name, label) for x, ys in zip(self.X, self.y)
                    for features, label in zip(x, ys)
                    for name in names(features)}
        for algorithm, solver, passes in (("lbfgs", "lbfgs", 15),
                                          ("l2sgd", "sag", 5)):
            with self.subTest(algorithm=algorithm):
                kwargs = dict(algorithm=algorithm, c2=0.25,
                              max_iterations=passes, keep_feature_names=True)
                seen = sklearn_crfsuite.CRF(all_possible_states=False,
                                            **kwargs)
                self.check_against_cli(seen, _settings.config_text(
                    2 * 0.25 / n, max_passes=passes, loss=_settings.CRF,
                    solver=solver, states="OBSERVED_STATES"))
                every = sklearn_crfsuite.CRF(**kwargs).fit(self.X, self.y)
                self.assertLess(len(seen.state_features_),
                                len(every.state_features_))
                self.assertEqual(
                    len(sklearn_crfsuite.CRF(all_possible_states=True,
                                             **kwargs)
                        .fit(self.X, self.y).state_features_),
                    len(every.state_features_))
                # Every state feature of the restricted model is an
                # (attribute, label) pair of the training data; the other
                # model has others.
                self.assertTrue(set(seen.state_features_) <= observed)
                self.assertFalse(set(every.state_features_) <= observed)
        # The structured SVM (pa: BCFW) of the seen labels likewise.
        kwargs = dict(algorithm="pa", max_iterations=10,
                      keep_feature_names=True)
        seen = sklearn_crfsuite.CRF(all_possible_states=False,
                                    **kwargs).fit(self.X, self.y)
        every = sklearn_crfsuite.CRF(all_possible_states=True,
                                     **kwargs).fit(self.X, self.y)
        self.assertTrue(set(seen.state_features_) <= observed)
        self.assertFalse(set(every.state_features_) <= observed)
        self.assertLess(len(seen.state_features_), len(every.state_features_))

    def test_hundreds_of_labels_weigh_the_seen_labels_by_default(self):
        # all_possible_states unset with lbfgs: every label below 100
        # labels (the test above), each attribute's seen labels from 100
        # up, as with False; True still weighs every label.
        rng = random.Random(3)
        labels = ["T%d" % k for k in range(120)]
        X, y = [], []
        for _ in range(60):
            tags = [rng.choice(labels) for _ in range(rng.randint(2, 6))]
            X.append([{"w": "x%d" % (int(tag[1:]) // 3),
                       "r": "r%d" % rng.randint(0, 9)} for tag in tags])
            y.append(tags)
        observed = {("%s:%s" % (name, value), tag)
                    for xs, tags in zip(X, y)
                    for features, tag in zip(xs, tags)
                    for name, value in features.items()}
        kwargs = dict(algorithm="lbfgs", c2=0.1, max_iterations=5)
        unset = sklearn_crfsuite.CRF(**kwargs).fit(X, y)
        seen = sklearn_crfsuite.CRF(all_possible_states=False,
                                    **kwargs).fit(X, y)
        every = sklearn_crfsuite.CRF(all_possible_states=True,
                                     **kwargs).fit(X, y)
        self.assertTrue(set(unset.state_features_) <= observed)
        self.assertEqual(unset.state_features_, seen.state_features_)
        self.assertFalse(set(every.state_features_) <= observed)
        # From 100 labels the transitions are the training labelings'
        # pairs (model.transitions AUTO): the others have no feature and
        # are left out, as CRFsuite leaves them, not listed at the score
        # that forbids them.
        pairs = {(a, b) for tags in y for a, b in zip(tags, tags[1:])}
        self.assertEqual(set(unset.transition_features_), pairs)
        self.assertGreater(min(unset.transition_features_.values()), -1e3)

    def check_against_cli(self, crf, config_text):
        crf.fit(self.X, self.y)
        directory = tempfile.mkdtemp(dir=TMP)
        train = os.path.join(directory, "train.crfsuite")
        test = os.path.join(directory, "test.crfsuite")
        write_crfsuite(train, self.X, self.y)
        write_crfsuite(test, self.X_test, self.y_test)
        config = os.path.join(directory, "config.textproto")
        with open(config, "w") as f:
            f.write(config_text)
        model = os.path.join(directory, "cli.model")
        subprocess.run([os.environ["CHAINTAG_TRAIN"], "--config=" + config,
                        "--set=corpus.train=" + train, "--model=" + model],
                       check=True, capture_output=True)
        with open(test) as f:
            tagged = subprocess.run(
                [os.environ["CHAINTAG_TAG"], "--model=" + model], stdin=f,
                check=True, capture_output=True, text=True).stdout
        cli = [block.split("\n") for block in tagged.strip("\n").split("\n\n")]
        self.assertEqual(crf.predict(self.X_test).tolist(), cli)
        self.assertEqual(chaintag.Model.load(model).tag(self.X_test[0]),
                         crf.predict_single(self.X_test[0]))

    def test_learns_the_corpus_and_reports_what_it_learnt(self):
        crf = self.crf().fit(self.X, self.y, X_dev=self.X_test, y_dev=self.y_test)
        self.assertEqual(sorted(crf.classes_), ["A", "D", "L", "N", "P", "V"])
        self.assertEqual(crf.score(self.X_test, self.y_test), 1.0)
        self.assertGreater(crf.state_features_[("w:dog", "N")], 0)
        self.assertEqual(len(crf.transition_features_), 36)
        self.assertGreater(crf.num_attributes_, 10)
        self.assertGreater(crf.size_, 1000)
        log = crf.training_log_
        self.assertEqual(len(log.iterations), log.last_iteration["num"])
        self.assertIn("eval_score", log.last_iteration)  # the dev scores

    def test_marginals_are_distributions_that_agree_with_predict(self):
        crf = self.crf().fit(self.X, self.y)
        marginals = crf.predict_marginals(self.X_test[:5])
        for xseq, rows, tags in zip(self.X_test, marginals,
                                    crf.predict(self.X_test[:5]).tolist()):
            self.assertEqual(len(rows), len(xseq))
            for row, tag in zip(rows, tags):
                self.assertEqual(set(row), set(crf.classes_))
                self.assertAlmostEqual(sum(row.values()), 1.0, places=12)
                self.assertEqual(max(row, key=row.get), tag)

    def test_score_counts_labels_the_model_does_not_know_as_errors(self):
        crf = self.crf().fit(self.X, self.y)
        y = [list(s) for s in self.y_test]
        predicted = crf.predict(self.X_test)
        tokens = sum(len(s) for s in y)
        right = sum(a == b for s, p in zip(y, predicted) for a, b in zip(s, p))
        self.assertAlmostEqual(crf.score(self.X_test, y), right / tokens)
        was_right = y[3][0] == predicted[3][0]
        y[3][0] = "UNSEEN"
        self.assertAlmostEqual(crf.score(self.X_test, y),
                               (right - was_right) / tokens)

    def test_empty_sequences(self):
        X = [[{"w": "a"}, {"w": "b"}], [], [{"w": "a"}]]
        y = [["A", "B"], [], ["A"]]
        crf = self.crf().fit(X, y)  # the empty one is left out
        self.assertEqual(crf.predict([[], [{"w": "a"}]]).tolist(), [[], ["A"]])
        self.assertEqual(crf.predict_marginals_single([]), [])
        with self.assertRaisesRegex(ValueError, "no sentences to train on"):
            self.crf().fit([[]], [[]])

    def test_thread_counts_outside_1_to_256_are_refused(self):
        X, y = [[{"w": "a"}, {"w": "b"}]], [["A", "B"]]
        for threads in (0, -3, 257, 100000):
            with self.assertRaisesRegex(
                    ValueError, "num_threads must be between 1 and 256"):
                self.crf(num_threads=threads).fit(X, y)

    def test_ragged_x_and_y_are_refused(self):
        with self.assertRaisesRegex(ValueError, "has 1 labels for"):
            self.crf().fit([[{"a": 1.0}, {"b": 1.0}]], [["X"]])

    def test_pickle_carries_the_model(self):
        crf = self.crf().fit(self.X, self.y)
        copy = pickle.loads(pickle.dumps(crf))
        self.assertEqual(copy.get_params(), crf.get_params())
        self.assertEqual(copy.predict(self.X_test).tolist(),
                         crf.predict(self.X_test).tolist())
        self.assertEqual(copy.state_features_, crf.state_features_)
        model = pickle.loads(pickle.dumps(crf.model_))  # a Model alone
        self.assertEqual(model.tag_batch(self.X_test),
                         crf.predict(self.X_test).tolist())
        unfitted = pickle.loads(pickle.dumps(self.crf()))
        # sklearn-crfsuite's unfitted attributes are None.
        for name in ("classes_", "size_", "tagger_", "attributes_",
                     "num_attributes_", "state_features_",
                     "transition_features_"):
            self.assertIsNone(getattr(unfitted, name), name)

    def test_clone_grid_search_and_pipeline(self):
        grid = [1.0, 0.01]
        search = GridSearchCV(self.crf(max_iterations=2),
                              {"regularization": grid}, cv=2,
                              scoring=scorers.flat_accuracy)
        search.fit(self.X, self.y)
        # Each candidate's score is the mean over the two folds of a CRF
        # fitted on one half and scored on the other.
        half = len(self.X) // 2
        folds = [(slice(half, None), slice(0, half)),
                 (slice(0, half), slice(half, None))]
        for lam, score in zip(grid, search.cv_results_["mean_test_score"]):
            expected = []
            for fit, held in folds:
                crf = self.crf(max_iterations=2, regularization=lam)
                crf.fit(self.X[fit], self.y[fit])
                expected.append(metrics.flat_accuracy_score(
                    self.y[held], crf.predict(self.X[held])))
            self.assertAlmostEqual(score, sum(expected) / 2)
        self.assertIn(search.best_params_["regularization"], grid)
        self.assertEqual(clone(search.best_estimator_).get_params(),
                         search.best_estimator_.get_params())
        pipeline = Pipeline([("crf", self.crf())]).fit(self.X, self.y)
        self.assertEqual(pipeline.predict(self.X_test).tolist(), self.y_test)

    def test_crfsuite_options(self):
        n = len(self.X)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every option means something
            crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.5,
                                       max_iterations=5,
                                       all_possible_transitions=True,
                                       epsilon=1e-5)  # CRFsuite's default
            crf.fit(self.X, self.y)
        self.assertAlmostEqual(crf.summary_["lambda"], 2 * 0.5 / n)
        self.assertEqual(crf.summary_["solver"], "lbfgs")
        self.assertEqual(len(crf.training_log_.iterations), 5)  # the cap
        # pa's c is the block weight bound 1/(λn).
        pa = sklearn_crfsuite.CRF(algorithm="passive-aggressive", c=4.0,
                                  max_iterations=2).fit(self.X, self.y)
        self.assertEqual(pa.summary_["solver"], "bcfw")
        self.assertAlmostEqual(pa.summary_["lambda"], 1 / (4.0 * n))
        # The run stops on its certificate before max_iterations.
        loose = sklearn_crfsuite.CRF(c2=1.0, max_iterations=200,
                                     gap_tolerance=0.05).fit(self.X, self.y)
        self.assertEqual(loose.summary_["stop_reason"], "gap_tolerance")
        self.assertLess(loose.summary_["passes"], 200)
        self.assertLess(loose.summary_["gap"], 0.05)
        with self.assertRaisesRegex(ValueError, "unknown algorithm 'bad'"):
            sklearn_crfsuite.CRF(algorithm="bad").fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "'c1' is not a parameter of pa"):
            sklearn_crfsuite.CRF(algorithm="pa", c1=1.0).fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "gap_tolerance"):
            self.crf(algorithm="l2sgd", delta=1e-3).fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "not both"):
            self.crf(algorithm="lbfgs", c2=0.1).fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "trains the structured SVM"):
            self.crf(algorithm="lbfgs", solver="bcfw").fit(self.X, self.y)
        with self.assertRaisesRegex(ValueError, "unknown solver 'nonsense'"):
            self.crf(solver="nonsense").fit(self.X, self.y)
        for name, value in (("order", 0), ("order", 3), ("seed", -5),
                            ("num_buckets", -1), ("num_buckets", 2.5)):
            with self.assertRaisesRegex(ValueError, "%s must be" % name):
                self.crf(**{name: value}).fit(self.X, self.y)
        # numpy integers (as a parameter grid gives them) are integers.
        self.crf(seed=numpy.int64(3), max_iterations=2).fit(self.X, self.y)

    def test_min_freq_drops_rare_attributes(self):
        rare = [[{"w": "x", "once": 1.0}], [{"w": "x"}], [{"w": "y"}]]
        labels = [["A"], ["A"], ["B"]]
        crf = self.crf(min_freq=2).fit(rare, labels)
        names = {attribute for attribute, _ in crf.state_features_}
        self.assertIn("w:x", names)
        self.assertNotIn("once", names)
        self.assertNotIn("w:y", names)

    def test_model_filename_is_written_and_read(self):
        folder = tempfile.mkdtemp(dir=TMP)
        path = os.path.join(folder, "crf.model")
        crf = self.crf(model_filename=path).fit(self.X, self.y)
        loaded = sklearn_crfsuite.CRF(model_filename=path)
        self.assertEqual(loaded.predict(self.X_test).tolist(),
                         crf.predict(self.X_test).tolist())
        # os.PathLike too; a missing folder is refused before training.
        as_path = pathlib.Path(folder) / "crf2.model"
        self.crf(model_filename=as_path).fit(self.X, self.y)
        self.assertEqual(
            sklearn_crfsuite.CRF(model_filename=as_path).predict(
                self.X_test).tolist(),
            crf.predict(self.X_test).tolist())
        unfitted = self.crf(model_filename=os.path.join(folder, "no", "m"))
        self.assertIsNone(unfitted.training_log_)
        with self.assertRaisesRegex(FileNotFoundError, "no such folder"):
            unfitted.fit(self.X, self.y)
        self.assertIsNone(unfitted.training_log_)
        self.assertEqual(
            len(pickle.loads(pickle.dumps(crf)).training_log_.iterations),
            len(crf.training_log_.iterations))
        trainer = chaintag.Trainer()
        for xseq, yseq in zip(self.X, self.y):
            trainer.append(xseq, yseq)
        with self.assertRaises(FileNotFoundError):
            trainer.train(pathlib.Path(folder) / "no" / "m")
        trainer.train(pathlib.Path(folder) / "trainer.model")
        tagger = chaintag.Tagger().open(pathlib.Path(folder) / "trainer.model")
        self.assertEqual(len(tagger.tag(self.X[0])), len(self.X[0]))

    def test_c2_zero_is_refused_with_what_to_give(self):
        for params in ({"c1": 0.1, "c2": 0.0}, {"c1": 0, "c2": 0}):
            with self.assertRaisesRegex(ValueError, r"c2=0(\.0)?: .*small c2"):
                self.crf(algorithm="lbfgs", regularization=None,
                         **params).fit(self.X, self.y)

    def test_metrics(self):
        y_true = [["A", "B"], ["B"]]
        y_pred = [["A", "A"], ["B"]]
        self.assertAlmostEqual(metrics.flat_accuracy_score(y_true, y_pred), 2 / 3)
        self.assertAlmostEqual(metrics.sequence_accuracy_score(y_true, y_pred), 0.5)
        # numpy arrays as predict returns them: ragged (1-D of objects) and
        # of equal lengths (2-D).
        ragged = numpy.empty(2, dtype=object)
        ragged[:] = [["A", "B"], ["B"]]
        self.assertAlmostEqual(metrics.sequence_accuracy_score(ragged, y_pred), 0.5)
        square = numpy.array([["A", "B"], ["B", "B"]])
        self.assertAlmostEqual(metrics.sequence_accuracy_score(
            square, numpy.array([["A", "B"], ["B", "A"]])), 0.5)
        self.assertEqual(metrics.sequence_accuracy_score(numpy.array([]), []), 0)
        # beta and labels by position, as sklearn-crfsuite takes them.
        # A: precision 1/2, recall 1; B: precision 1, recall 1/2.
        self.assertAlmostEqual(
            metrics.flat_fbeta_score(y_true, y_pred, 2, average="macro"),
            (5 / 9 + 5 / 6) / 2)
        self.assertIn("A", metrics.flat_classification_report(
            y_true, y_pred, ["A"]))
        self.assertNotIn("B", metrics.flat_classification_report(
            y_true, y_pred, ["A"]))
        with self.assertRaises(TypeError):
            metrics.flat_fbeta_score(y_true, y_pred, 2, beta=2)


class CrfsuiteApiTest(unittest.TestCase):

    def test_trainer_and_tagger(self):
        X, y = featurise(corpus(60, 3))
        trainer = chaintag.Trainer(verbose=False)
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        trainer.set_params({"regularization": 0.05, "max_iterations": 10,
                            "feature.minfreq": 0, "gap_tolerance": 1e-12})
        self.assertEqual(trainer.get("max_iterations"), 10)
        # Strings, as python-crfsuite's set() takes them, read back typed.
        typed = chaintag.Trainer()
        typed.set("c1", "0.5")
        typed.set("feature.possible_states", "1")
        typed.set("max_iterations", b"7")
        self.assertEqual(typed.get("c1"), 0.5)
        self.assertIs(typed.get("feature.possible_states"), True)
        self.assertEqual(typed.get("max_iterations"), 7)
        self.assertIsInstance(typed.get_params()["max_iterations"], int)
        path = os.path.join(tempfile.mkdtemp(dir=TMP), "model")
        trainer.train(path)
        self.assertEqual(len(trainer.logparser.iterations), 10)
        tagger = chaintag.Tagger().open(path)
        xseq = X[0][:3]
        tags = tagger.tag(xseq)
        labels = tagger.labels()
        # Brute force over every labeling: the probabilities sum to 1, the
        # tagged labeling is the most probable, and each marginal is the
        # sum over the labelings through it.
        total = 0.0
        best = None
        marginal = {}
        for labeling in itertools.product(labels, repeat=len(xseq)):
            p = tagger.probability(list(labeling))
            total += p
            if best is None or p > best[0]:
                best = (p, list(labeling))
            for t, label in enumerate(labeling):
                marginal[(t, label)] = marginal.get((t, label), 0.0) + p
        self.assertAlmostEqual(total, 1.0, places=10)
        self.assertEqual(best[1], tags)
        for (t, label), p in marginal.items():
            self.assertAlmostEqual(tagger.marginal(label, t), p, places=10)
        info = tagger.info()
        self.assertEqual(set(info.labels), set(labels))
        # Ids as text and a header with pycrfsuite's keys, as its dump
        # parser reads them.
        self.assertEqual(sorted(info.labels.values(), key=int),
                         [str(i) for i in range(len(labels))])
        self.assertEqual(info.header["size"], str(os.path.getsize(path)))
        self.assertEqual(info.header["magic"], "chaintag")
        self.assertTrue(info.header["version"].isdigit())
        self.assertEqual(len(info.transitions), len(labels) ** 2)
        self.assertIn(("w:dog", "N"), info.state_features)
        with self.assertRaisesRegex(ValueError, "unknown parameter"):
            trainer.set("feature.nonsense", 1)
        trainer.set("num_memories", 10)  # solver.lbfgs.num_memories
        trainer.set("delta", 1e-4)  # solver.lbfgs.delta
        trainer.set("linesearch", "MoreThuente")  # the default: no effect
        with self.assertRaisesRegex(ValueError, "no chaintag counterpart"):
            trainer.set("linesearch", "Backtracking")
        # set() converts: a one-shot iterator, or a list cleared after,
        # leaves the set sequence as it was.
        tagger.set(iter(xseq))
        self.assertEqual(tagger.tag(), tags)
        self.assertEqual(tagger.tag(), tags)
        self.assertAlmostEqual(tagger.probability(best[1]), best[0], places=10)
        changing = list(xseq)
        self.assertEqual(tagger.tag(iter(changing)), tags)
        tagger.set(changing)
        changing.clear()
        self.assertEqual(tagger.tag(), tags)
        self.assertAlmostEqual(tagger.marginal(tags[0], 0),
                               marginal[(0, tags[0])], places=10)
        # The errors python-crfsuite raises, beside chaintag's own.
        for error in (IndexError, ValueError):
            with self.assertRaises(error):
                tagger.marginal(tags[0], len(xseq))
        for error in (ValueError, RuntimeError):
            with self.assertRaises(error):
                tagger.marginal("no such label", 0)

    def test_trainer_algorithms_and_their_parameters(self):
        trainer = chaintag.Trainer(verbose=False)
        self.assertEqual(trainer.get("c2"), 1.0)  # lbfgs, CRFsuite's default
        self.assertIn("c1", trainer.params())
        self.assertIn("L1", trainer.help("c1"))
        self.assertIn("c1/n", trainer.help("c1"))
        trainer.set("c2", 0.5)
        trainer.select("l2sgd")  # back to l2sgd's defaults
        self.assertEqual(trainer.get("c2"), 1.0)
        self.assertNotIn("c1", trainer.params())
        with self.assertRaisesRegex(ValueError, "not a parameter of l2sgd"):
            trainer.help("c1")
        for algorithm in ("ap", "pa", "arow", "lbfgs", "l2sgd"):
            trainer.select(algorithm)
            params = trainer.get_params()
            trainer.set_params(params)
            self.assertEqual(trainer.get_params(), params)
        with self.assertRaisesRegex(ValueError, "unknown algorithm 'foo'"):
            trainer.select("foo")

    def test_trainer_messages_and_algorithms(self):
        X, y = featurise(corpus(30, 4))
        for algorithm, solver in (("lbfgs", "lbfgs"), ("l2sgd", "sag"),
                                  ("arow", "bcfw")):
            lines = []

            class Capturing(chaintag.Trainer):
                def __init__(self):  # python-crfsuite allows skipping super
                    pass

                def message(self, message):
                    lines.append(message)

            trainer = Capturing()
            trainer.select(algorithm)
            for xseq, yseq in zip(X, y):
                trainer.append(chaintag.crfsuite.ItemSequence(xseq), yseq)
            path = os.path.join(tempfile.mkdtemp(dir=TMP), "model")
            trainer.train(path)
            self.assertIn("type: CRF1d\n", lines)
            self.assertTrue(all(line.endswith("\n") for line in lines))
            self.assertIn("training: solver %s" % solver, "".join(lines))
            tagger = chaintag.Tagger().open(path)
            self.assertEqual(tagger.tag(X[0]), y[0])
            dump = os.path.join(tempfile.mkdtemp(dir=TMP), "dump")
            tagger.dump(dump)
            with open(dump, encoding="utf-8") as f:
                text = f.read()
            self.assertIn("LABELS = {", text)
            self.assertIn("w:dog --> N: ", text)
            info = tagger.info()
            self.assertEqual(info.header["num_labels"], str(len(info.labels)))
            tagger.close()
            with self.assertRaises(RuntimeError):
                tagger.info()
            with self.assertRaises(ValueError):
                tagger.labels()

    def test_ctrl_c_stops_training_at_once_and_raises_keyboard_interrupt(self):
        # SIGINT on the second pass line. Python's own handler would only
        # run once training returned: the run's handler takes the signal,
        # the run stops at its next step, and fit raises KeyboardInterrupt.
        X, y = featurise(corpus(30, 4))
        for algorithm in ("pa", "l2sgd", "lbfgs"):
            lines, after_kill = [], []

            class Interrupting(chaintag.Trainer):
                def __init__(self):
                    pass

                def message(self, message):
                    if after_kill:
                        after_kill.append(message)
                    lines.append(message)
                    if sum(m.startswith("pass ") for m in lines) == 2:
                        os.kill(os.getpid(), signal.SIGINT)
                        after_kill.append("kill returned")

            trainer = Interrupting()
            trainer.select(algorithm)
            trainer.set("max_iterations", 100000)
            trainer.set_params({"gap_tolerance": 0})
            for xseq, yseq in zip(X, y):
                trainer.append(xseq, yseq)
            path = os.path.join(tempfile.mkdtemp(dir=TMP), "model")
            with self.assertRaises(KeyboardInterrupt):
                trainer.train(path)
            self.assertEqual(after_kill[:1], ["kill returned"], algorithm)
            passes_after = [m for m in after_kill if m.startswith("pass ")]
            self.assertLessEqual(len(passes_after), 1, after_kill)
            self.assertFalse(os.path.exists(path))
        # Python's handler is back, and the next run is not interrupted.
        with self.assertRaises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                time.sleep(0.001)
        trainer = chaintag.Trainer()
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        trainer.train(os.path.join(tempfile.mkdtemp(dir=TMP), "model"))
        self.assertNotEqual(trainer.logparser.last_iteration, None)


if __name__ == "__main__":
    unittest.main()
