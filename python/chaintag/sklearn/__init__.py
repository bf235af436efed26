"""A scikit-learn estimator with sklearn-crfsuite's calls, on chaintag.

A script written for sklearn-crfsuite runs after changing its imports:

    import chaintag.sklearn as sklearn_crfsuite
    from chaintag.sklearn import metrics, scorers

X is a list of sequences of items (python-crfsuite's forms: feature dicts
or lists of attribute names, chaintag.ItemSequences), y a list of label
sequences. CRFsuite's options are mapped as chaintag._settings says; the
model is a linear-chain structured SVM (hinge loss), trained by BCFW unless
`solver` says otherwise.
"""

from sklearn.base import BaseEstimator

from chaintag import _chaintag, model_from_bytes, model_to_bytes
from chaintag.crfsuite import TrainingLog, training_run
from chaintag.sklearn import metrics, scorers  # noqa: F401

__all__ = ["CRF", "metrics", "scorers"]


class CRF(BaseEstimator):
    """sklearn-crfsuite's CRF on chaintag.

    CRFsuite's parameters (all optional, as in sklearn-crfsuite):
      algorithm, c1: accepted, one warning (no SSVM counterpart).
      c2: λ = 2·c2 / n_sequences.
      max_iterations: passes over the data (default 30; at most: the run
        stops earlier when the duality gap is below gap_tolerance).
      min_freq: attributes seen at fewer positions get no weight.
      all_possible_states, all_possible_transitions: chaintag always weighs
        every pair (as True); False gives the one warning.
      verbose: progress lines to stderr. model_filename: the model file is
        written there after fit, and read from there before a predict when
        the estimator was not fitted. keep_tempfiles: keep the run's
        directory (its model and JSON log) at `output_dir_`.
      The options of L-BFGS's internals and of CRFsuite's other trainers
      (epsilon, num_memories, calibration_*, pa_type, ...) are refused with
      what chaintag offers instead.
    chaintag's own:
      regularization: λ itself (instead of c2; without either, CRFsuite's
        default c2 = 1, λ = 2/n).
      solver: "bcfw" (default) or any chaintag solver (docs/solvers.md).
      order: 1 or 2. num_threads: training and predict threads (default
        2; results are the same for any count). seed.
      num_buckets: hashed attribute buckets (default 2^20).
      gap_tolerance: stop when the duality gap (absolute, in the
        objective's units) is below it.
      keep_feature_names: keep attribute names in the model (for
        state_features_; default True).
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
                 solver="bcfw", order=1, num_threads=2, seed=1,
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

    def fit(self, X, y, X_dev=None, y_dev=None):
        """Trains on X, y; with X_dev, y_dev the dev sequences are scored
        (token accuracy) after every pass into training_log_."""
        if self.trainer_cls is not None:
            raise ValueError("trainer_cls is pycrfsuite's; chaintag trains "
                             "with its own solvers (solver=)")
        if (X_dev is None) != (y_dev is None):
            raise ValueError("give both X_dev and y_dev, or neither")
        train = _chaintag.ItemSequences(X, y)
        dev = _chaintag.ItemSequences(X_dev, y_dev) if X_dev is not None else None
        settings = self.get_params(deep=False)
        if self.keep_tempfiles:
            import tempfile
            settings["output_dir"] = tempfile.mkdtemp(prefix="chaintag_crf_")
            self.output_dir_ = settings["output_dir"]
        model, summary = training_run(train, settings, dev=dev,
                                      progress=bool(self.verbose))
        self._set_model(model)
        self.training_log_ = TrainingLog(summary["log"])
        self.summary_ = {k: v for k, v in summary.items() if k != "log"}
        if self.model_filename:
            model.save(self.model_filename)
        return self

    def _set_model(self, model):
        self.model_ = model
        self._state_features = None
        self._transition_features = None

    def _model(self):
        if getattr(self, "model_", None) is None:
            if self.model_filename:
                self._set_model(_chaintag.Model.load(self.model_filename))
            else:
                from sklearn.exceptions import NotFittedError
                raise NotFittedError(
                    "This CRF is not fitted yet: call fit, or give "
                    "model_filename of a trained model")
        return self.model_

    # Prediction.

    def predict(self, X):
        """The labels of every sequence (on num_threads threads)."""
        return self._model().tag_batch(X, threads=max(1, int(self.num_threads)))

    def predict_single(self, xseq):
        return self._model().tag(xseq)

    def predict_marginals_single(self, xseq):
        """[{label: P(label at t)}] per item, by forward-backward on the
        model's scores (exp(score) normalised; not calibrated
        probabilities for a max-margin model)."""
        model = self._model()
        labels = model.labels
        return [dict(zip(labels, row.tolist()))
                for row in model.marginals(xseq)]

    def predict_marginals(self, X):
        return [self.predict_marginals_single(xseq) for xseq in X]

    def score(self, X, y):
        """Token accuracy of predict(X) against y, as sklearn-crfsuite's."""
        known = set(self.classes_)
        for i, yseq in enumerate(y):
            for t, label in enumerate(yseq):
                if label not in known:
                    raise ValueError(
                        "y[%d][%d]: %r is not a label the model was trained "
                        "on (classes_: %s)" % (i, t, label,
                                               ", ".join(self.classes_)))
        return metrics.flat_accuracy_score(y, self.predict(X))

    # What the model learnt.

    @property
    def classes_(self):
        return list(self._model().labels)

    @property
    def tagger_(self):
        return self._model()

    @property
    def size_(self):
        """The model file's size in bytes."""
        return len(model_to_bytes(self._model()))

    @property
    def state_features_(self):
        """{(attribute, label): weight}, every non-zero one."""
        if getattr(self, "_state_features", None) is None:
            self._state_features = self._model().state_features()
        return self._state_features

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight}."""
        if getattr(self, "_transition_features", None) is None:
            self._transition_features = self._model().transition_features()
        return self._transition_features

    @property
    def num_attributes_(self):
        """Attributes with a non-zero weight for some label."""
        return len({attribute for attribute, _ in self.state_features_})

    # Pickling: the parameters and the model file's bytes.

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_state_features", None)
        state.pop("_transition_features", None)
        model = state.pop("model_", None)
        if model is not None:
            state["model_bytes_"] = model_to_bytes(model)
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("model_bytes_", None)
        self.__dict__.update(state)
        self._set_model(model_from_bytes(data) if data is not None else None)
