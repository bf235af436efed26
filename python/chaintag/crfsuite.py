"""python-crfsuite's Trainer and Tagger on chaintag.

Code that uses pycrfsuite's Trainer and Tagger runs with `import chaintag
as pycrfsuite`: Trainer.append / set_params / train(path) write a chaintag model file, and
Tagger.open / tag / probability / marginal / labels / info read it. Items
are python-crfsuite's (lists of attribute names, or dicts of features;
chaintag.ItemSequences says how each form is read), converted in C++ as they
are appended. What differs is the model: a structured SVM, so `probability`
and `marginal` come from exp(score) normalised by forward-backward, which
ranks labelings but is not a calibrated probability.
"""

import json
import sys

from chaintag import _chaintag, _settings

# Trainer parameters: CRFsuite's names (mapped by chaintag._settings) and
# chaintag's own.
_CRFSUITE_NAMES = {
    "c1": "c1",
    "c2": "c2",
    "max_iterations": "max_iterations",
    "feature.minfreq": "min_freq",
    "feature.possible_states": "all_possible_states",
    "feature.possible_transitions": "all_possible_transitions",
}
_CHAINTAG_NAMES = ("solver", "regularization", "order", "num_threads", "seed",
                   "num_buckets", "gap_tolerance", "keep_feature_names")


class TrainingLog:
    """The per-pass records of a run (the model log's JSON lines).

    `iterations` holds one dict per pass, with sklearn-crfsuite's keys
    where chaintag has the figure ('num': the pass, 'time': its seconds,
    'loss': the primal objective when the pass computed it) beside the
    log's own ('primal', 'dual', 'gap', 'eval_score', ...).
    """

    def __init__(self, lines):
        self.iterations = []
        self.events = []
        previous_seconds = 0.0
        for line in lines:
            record = json.loads(line)
            if "pass" not in record:
                self.events.append(record)
                continue
            seconds = float(record.get("seconds", 0.0))
            record["num"] = record["pass"]
            record["time"] = seconds - previous_seconds
            previous_seconds = seconds
            if "primal" in record:
                record["loss"] = record["primal"]
            self.iterations.append(record)

    @property
    def last_iteration(self):
        return self.iterations[-1] if self.iterations else {}

    def __repr__(self):
        return "<TrainingLog: %d passes>" % len(self.iterations)


def training_run(train, settings, dev=None, keep=False, progress=False):
    """Trains on ItemSequences with CRFsuite-style settings; (model, summary).

    `settings` holds the keys of chaintag.sklearn.CRF's parameters.
    """
    if len(train) == 0:
        raise ValueError("no sequences to train on")
    _settings.refuse_unsupported(settings)
    _settings.compatibility_warning(
        settings.get("algorithm"), settings.get("c1"),
        settings.get("all_possible_states"),
        settings.get("all_possible_transitions"), stacklevel=4)
    lam = _settings.resolve_lambda(settings.get("c2"),
                                   settings.get("regularization"), len(train))
    text = _settings.config_text(
        lam, max_passes=settings.get("max_iterations"),
        min_freq=settings.get("min_freq"),
        solver=settings.get("solver") or "bcfw",
        order=settings.get("order") or 1,
        num_threads=settings.get("num_threads") or 1,
        seed=1 if settings.get("seed") is None else settings["seed"],
        num_buckets=settings.get("num_buckets"),
        gap_tolerance=settings.get("gap_tolerance"),
        keep_feature_names=settings.get("keep_feature_names", True) is not False,
        evaluate_dev=dev is not None and len(dev) > 0)
    return _chaintag.train_sequences(
        train, text, dict(settings.get("overrides") or {}),
        dev=dev if dev is not None and len(dev) > 0 else None, keep=keep,
        output_dir=settings.get("output_dir"), progress=progress)


class Trainer:
    """python-crfsuite's Trainer: append sequences, set parameters, train.

    `algorithm` is accepted as pycrfsuite accepts it (with one warning when
    given: chaintag trains a structured SVM with its own solver). Parameters
    are CRFsuite's names (c1, c2, max_iterations, feature.minfreq,
    feature.possible_states, feature.possible_transitions) and chaintag's
    (solver, regularization, order, num_threads, seed, num_buckets,
    gap_tolerance, keep_feature_names, overrides).
    """

    def __init__(self, algorithm=None, params=None, verbose=True):
        self.verbose = verbose
        self._settings = {"algorithm": algorithm}
        self._groups = {}
        self.logparser = TrainingLog([])
        if params:
            self.set_params(params)

    def append(self, xseq, yseq, group=0):
        """Adds a sequence and its labels (converted now, in C++)."""
        self._groups.setdefault(group, _chaintag.ItemSequences()).append(
            xseq, yseq)

    def clear(self):
        self._groups = {}

    def select(self, algorithm, type="crf1d"):
        if type != "crf1d":
            raise ValueError("chaintag trains linear-chain models only "
                             "(type='crf1d'), got %r" % (type,))
        self._settings["algorithm"] = algorithm

    def _key(self, name):
        if name in _CRFSUITE_NAMES:
            return _CRFSUITE_NAMES[name]
        if name in _CHAINTAG_NAMES or name in _settings.REFUSED or name == "overrides":
            return name
        raise ValueError("unknown parameter %r; chaintag's are %s" % (
            name, ", ".join(sorted(set(_CRFSUITE_NAMES) | set(_CHAINTAG_NAMES)))))

    def set(self, name, value):
        key = self._key(name)
        if key in _settings.REFUSED:
            _settings.refuse_unsupported({key: value})
        self._settings[key] = value

    def get(self, name):
        return self._settings.get(self._key(name))

    def set_params(self, params):
        for name, value in params.items():
            self.set(name, value)

    def get_params(self):
        return {name: self.get(name)
                for name in list(_CRFSUITE_NAMES) + list(_CHAINTAG_NAMES)
                if self.get(name) is not None}

    def params(self):
        return list(_CRFSUITE_NAMES) + list(_CHAINTAG_NAMES)

    def message(self, message):
        """Receives each progress line; prints it when verbose."""
        if self.verbose:
            print(message, file=sys.stderr)

    def train(self, model, holdout=-1):
        """Trains on the appended sequences (group `holdout` held out and
        scored after each pass) and writes the model file `model`."""
        train = _chaintag.ItemSequences()
        dev = _chaintag.ItemSequences()
        for group, sequences in self._groups.items():
            (dev if group == holdout else train).add(sequences)
        trained, summary = training_run(
            train, self._settings, dev=dev, keep=False, progress=self.message)
        self.logparser = TrainingLog(summary["log"])
        trained.save(model)
        return trained


class ParsedDump:
    """What Tagger.info() returns, as pycrfsuite's: labels, attributes,
    transitions {(from, to): w}, state_features {(attr, label): w}, header."""

    def __init__(self, model):
        self.labels = {name: i for i, name in enumerate(model.labels)}
        self.state_features = model.state_features()
        self.transitions = model.transition_features()
        attributes = sorted({attribute for attribute, _ in self.state_features})
        self.attributes = {name: i for i, name in enumerate(attributes)}
        self.header = {"order": model.order, "num_labels": len(model.labels)}
        self.header.update(model.summary)


class Tagger:
    """python-crfsuite's Tagger on a chaintag model file."""

    def __init__(self):
        self._model = None
        self._xseq = None
        self._marginals = None  # of _xseq, computed when first asked

    def open(self, name):
        self.close()
        self._model = _chaintag.Model.load(name)
        return self

    def open_inmemory(self, value):
        from chaintag import model_from_bytes
        self.close()
        self._model = model_from_bytes(value)
        return self

    def close(self):
        self._model = None
        self._xseq = None
        self._marginals = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _opened(self):
        if self._model is None:
            raise ValueError("no model: call open(path) first")
        return self._model

    def labels(self):
        return list(self._opened().labels)

    def set(self, xseq):
        self._opened()
        self._xseq = xseq
        self._marginals = None

    def _sequence(self):
        if self._xseq is None:
            raise ValueError("no sequence: call set(xseq) or tag(xseq) first")
        return self._xseq

    def tag(self, xseq=None):
        if xseq is not None:
            self.set(xseq)
        return self._opened().tag(self._sequence())

    def probability(self, yseq):
        """P(yseq | the set sequence) ∝ exp(score(yseq))."""
        import math
        return math.exp(self._opened().log_probability(self._sequence(), yseq))

    def marginal(self, y, pos):
        """P(label y at position pos | the set sequence), by forward-backward."""
        model = self._opened()
        labels = model.labels
        if y not in labels:
            raise ValueError("%r is not a label of the model" % (y,))
        if self._marginals is None:
            self._marginals = model.marginals(self._sequence())
        marginals = self._marginals
        if not 0 <= pos < marginals.shape[0]:
            raise IndexError("position %d outside a sequence of %d items"
                             % (pos, marginals.shape[0]))
        return float(marginals[pos, labels.index(y)])

    def info(self):
        return ParsedDump(self._opened())
