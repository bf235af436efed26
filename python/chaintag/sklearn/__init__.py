"""A scikit-learn estimator with sklearn-crfsuite's calls, on chaintag.

A script written for sklearn-crfsuite runs after changing its imports:

    import chaintag.sklearn as sklearn_crfsuite
    from chaintag.sklearn import metrics, scorers

X is a list of sequences of items (python-crfsuite's forms: feature dicts
or lists of attribute names, chaintag.ItemSequences), y a list of label
sequences. CRFsuite's algorithms and options are mapped as
chaintag._settings says: lbfgs (the default) and l2sgd train the CRF, ap,
pa and arow the structured SVM (hinge loss).
"""

import os

import numpy as np
from sklearn.base import BaseEstimator

from chaintag import _chaintag, model_from_bytes, model_to_bytes
from chaintag.crfsuite import Tagger, TrainingLog, output_path, training_run
from chaintag.sklearn import metrics, scorers  # noqa: F401

__all__ = ["CRF", "metrics", "scorers"]

# The estimator's parameters that are CRFsuite's, by CRFsuite's names.
_CRFSUITE_NAMES = {
    "min_freq": "feature.minfreq",
    "all_possible_states": "feature.possible_states",
    "all_possible_transitions": "feature.possible_transitions",
    "c1": "c1",
    "c2": "c2",
    "max_iterations": "max_iterations",
    "num_memories": "num_memories",
    "epsilon": "epsilon",
    "period": "period",
    "delta": "delta",
    "linesearch": "linesearch",
    "max_linesearch": "max_linesearch",
    "calibration_eta": "calibration.eta",
    "calibration_rate": "calibration.rate",
    "calibration_samples": "calibration.samples",
    "calibration_candidates": "calibration.candidates",
    "calibration_max_trials": "calibration.max_trials",
    "pa_type": "type",
    "c": "c",
    "error_sensitive": "error_sensitive",
    "averaging": "averaging",
    "variance": "variance",
    "gamma": "gamma",
}
# chaintag's own.
_CHAINTAG_OPTIONS = ("regularization", "solver", "order", "num_threads",
                     "seed", "num_buckets", "gap_tolerance",
                     "keep_feature_names", "overrides")


class CRF(BaseEstimator):
    """sklearn-crfsuite's CRF on chaintag.

    CRFsuite's parameters (all optional, as in sklearn-crfsuite; None is
    CRFsuite's default), mapped as chaintag._settings says:
      algorithm: 'lbfgs' (default) or 'l2sgd': the CRF (model.loss LOG,
        trained by chaintag's lbfgs, OWL-QN when c1 > 0, and by sag);
        'pa', 'ap', 'arow': the structured SVM (hinge, BCFW). An unknown
        name raises ValueError.
      c1, c2 (lbfgs; l2sgd: c2): l1 = c1/n and λ = 2·c2/n, n the training
        sequences (CRFsuite's objective divided by n). c (pa): λ = 1/(c·n).
      max_iterations: passes over the data, at most (default 100 for
        lbfgs, 30 for l2sgd, 100 for ap, pa, arow); the run stops earlier
        when its duality gap is below gap_tolerance, and lbfgs also on
        CRFsuite's tests (epsilon, period, delta).
      min_freq: attributes seen at fewer positions get no weight.
      all_possible_states: True: every attribute has weights for every
        label; False: for the labels it is seen with in training only, as
        CRFsuite's default (model.states OBSERVED_STATES, any algorithm);
        None (the default): with lbfgs every label below 100 labels, the
        seen ones from 100 up; with the others every label. docs/python.md
        compares the two.
      all_possible_transitions: chaintag weighs every label pair, as
        CRFsuite does with True; False has no effect.
      pa_type (1 only), error_sensitive (True only), averaging (pa: BCFW's
        weighted averaging).
      verbose: progress lines to stderr. model_filename: the model file is
        written there after fit, and read from there before a predict when
        the estimator was not fitted. keep_tempfiles: keep the run's
        directory (its model and JSON log) at `output_dir_`.
      num_memories, max_linesearch (lbfgs): L-BFGS's memory and line
        search trials. The other internals of L-BFGS, SGD and the online
        learners (epsilon, period, delta, linesearch, calibration_*,
        variance, gamma) are accepted at CRFsuite's defaults, with no
        effect, and refused otherwise with what chaintag offers instead. A parameter
      the algorithm does not have raises ValueError, as in CRFsuite.
    chaintag's own:
      regularization: λ itself (instead of c2 or c).
      solver: lbfgs (lbfgs's default), sag (l2sgd's), svrg or
        casimir_svrg for the CRF;
        bcfw (the structured SVM's default) or another chaintag solver for
        the structured SVM (docs/solvers.md).
      order: 1 or 2. num_threads: training and predict threads (default
        2; results are the same for any count). seed.
      num_buckets: hashed attribute buckets (default: none, every
        attribute its own weights, as in CRFsuite).
      gap_tolerance: stop when the duality gap (absolute, in the
        objective's units) is below it.
      keep_feature_names: keep attribute names in the model (for
        state_features_ and attributes_; default True).
      overrides: {dotted.config.path: value}, as `train --set`.
    """

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None,
                 all_possible_transitions=None, c1=None, c2=None,
                 max_iterations=None, num_memories=None, epsilon=None,
                 period=None, delta=None, linesearch=None, max_linesearch=None,
                 calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None,
                 calibration_max_trials=None, pa_type=None, c=None,
                 error_sensitive=None, averaging=None, variance=None,
                 gamma=None, verbose=False, model_filename=None,
                 keep_tempfiles=None, trainer_cls=None, regularization=None,
                 solver=None, order=1, num_threads=2, seed=1,
                 num_buckets=None, gap_tolerance=None, keep_feature_names=True,
                 overrides=None):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.regularization = regularization
        self.solver = solver
        self.order = order
        self.num_threads = num_threads
        self.seed = seed
        self.num_buckets = num_buckets
        self.gap_tolerance = gap_tolerance
        self.keep_feature_names = keep_feature_names
        self.overrides = overrides

    # Training.

    def _crfsuite_params(self):
        """The CRFsuite parameters given (not None), by CRFsuite's names."""
        params = {}
        for attribute, name in _CRFSUITE_NAMES.items():
            value = getattr(self, attribute)
            if value is not None:
                params[name] = value
        return params

    def fit(self, X, y, X_dev=None, y_dev=None):
        """Trains on X, y; with X_dev, y_dev the dev sequences are scored
        (token accuracy) after every pass into training_log_."""
        if self.trainer_cls is not None:
            raise ValueError("trainer_cls is pycrfsuite's; chaintag trains "
                             "with its own solvers (solver=)")
        if (X_dev is None) != (y_dev is None):
            raise ValueError("give both X_dev and y_dev, or neither")
        model_filename = (output_path(self.model_filename)
                          if self.model_filename else None)
        train = _chaintag.ItemSequences(X, y)
        dev = _chaintag.ItemSequences(X_dev, y_dev) if X_dev is not None else None
        options = {name: getattr(self, name) for name in _CHAINTAG_OPTIONS}
        if self.keep_tempfiles:
            import tempfile
            options["output_dir"] = tempfile.mkdtemp(prefix="chaintag_crf_")
            self.output_dir_ = options["output_dir"]
        progress = False
        if self.verbose:
            import sys
            progress = lambda line: print(line, file=sys.stderr)
        model, summary = training_run(
            train, self.algorithm, self._crfsuite_params(), options, dev=dev,
            progress=progress)
        self._set_model(model)
        self._training_log = TrainingLog(summary["log"])
        self.summary_ = {k: v for k, v in summary.items() if k != "log"}
        if model_filename:
            model.save(model_filename)
        return self

    def _set_model(self, model):
        self.model_ = model
        self._tagger = None
        self._state_features = None
        self._transition_features = None

    def _fitted_model(self):
        """The model, read from model_filename when not fitted; None when
        there is neither."""
        if getattr(self, "model_", None) is None and self.model_filename:
            self._set_model(
                _chaintag.Model.load(os.fspath(self.model_filename)))
        return getattr(self, "model_", None)

    def _model(self):
        model = self._fitted_model()
        if model is None:
            from sklearn.exceptions import NotFittedError
            raise NotFittedError(
                "This CRF is not fitted yet: call fit, or give "
                "model_filename of a trained model")
        return model

    # Prediction.

    def predict(self, X):
        """The labels of every sequence (on num_threads threads), as
        sklearn-crfsuite 0.5 returns them: a numpy object array of the
        sequences' label lists (2-D when all have one length)."""
        tags = self._model().tag_batch(X, threads=max(1, int(self.num_threads)))
        return np.array(tags, dtype=object)

    def predict_single(self, xseq):
        return self._model().tag(xseq)

    def predict_marginals_single(self, xseq):
        """[{label: P(label at t)}] per item, by forward-backward on the
        model's scores: the CRF's probabilities (lbfgs, l2sgd); for the
        structured SVM exp(score) normalised, not calibrated."""
        model = self._model()
        labels = model.labels
        return [dict(zip(labels, row.tolist()))
                for row in model.marginals(xseq)]

    def predict_marginals(self, X):
        """predict_marginals_single of every sequence, in a numpy object
        array as sklearn-crfsuite 0.5 returns them."""
        return np.array([self.predict_marginals_single(xseq) for xseq in X],
                        dtype=object)

    def score(self, X, y):
        """Token accuracy of predict(X) against y, as sklearn-crfsuite's.

        A label of y the model was not trained on counts as an error, as
        there: a cross-validation fold may hold a rare label that its
        training folds lack.
        """
        return metrics.flat_accuracy_score(y, self.predict(X))

    # What the model learnt: None before fit, as sklearn-crfsuite's.

    @property
    def training_log_(self):
        """The fit's per-pass records (chaintag.crfsuite.TrainingLog)."""
        return getattr(self, "_training_log", None)

    @property
    def tagger_(self):
        """A chaintag.crfsuite.Tagger opened on the model."""
        model = self._fitted_model()
        if model is None:
            return None
        if getattr(self, "_tagger", None) is None:
            self._tagger = Tagger.from_model(model)
        return self._tagger

    @property
    def classes_(self):
        model = self._fitted_model()
        return None if model is None else list(model.labels)

    @property
    def size_(self):
        """The model file's size in bytes."""
        model = self._fitted_model()
        return None if model is None else len(model_to_bytes(model))

    @property
    def state_features_(self):
        """{(attribute, label): weight}, every non-zero one."""
        model = self._fitted_model()
        if model is None:
            return None
        if getattr(self, "_state_features", None) is None:
            self._state_features = model.state_features()
        return self._state_features

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight}."""
        model = self._fitted_model()
        if model is None:
            return None
        if getattr(self, "_transition_features", None) is None:
            self._transition_features = model.transition_features()
        return self._transition_features

    @property
    def attributes_(self):
        """The attributes with a non-zero weight for some label, sorted."""
        features = self.state_features_
        if features is None:
            return None
        return sorted({attribute for attribute, _ in features})

    @property
    def num_attributes_(self):
        """Attributes with a non-zero weight for some label."""
        attributes = self.attributes_
        return None if attributes is None else len(attributes)

    # Pickling: the parameters and the model file's bytes.

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_tagger", None)
        state.pop("_state_features", None)
        state.pop("_transition_features", None)
        model = state.pop("model_", None)
        if model is not None:
            state["model_bytes_"] = model_to_bytes(model)
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("model_bytes_", None)
        if "training_log_" in state:  # pickled before it became a property
            state["_training_log"] = state.pop("training_log_")
        self.__dict__.update(state)
        self._set_model(model_from_bytes(data) if data is not None else None)
