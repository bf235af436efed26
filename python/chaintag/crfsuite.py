"""python-crfsuite's calls on chaintag: ItemSequence, Trainer, Tagger.

Code written for pycrfsuite runs with `import chaintag.crfsuite as
pycrfsuite`: Trainer.append / select / set_params / train(path) write a
chaintag model file, and Tagger.open / tag / probability / marginal /
labels / info / dump read it. Items are python-crfsuite's (lists of
attribute names, or dicts of features; chaintag.ItemSequences says how each
form is read), converted in C++ as they are appended. The algorithms map
onto chaintag's losses and solvers as chaintag._settings says: lbfgs and
l2sgd train the CRF, whose `probability` and `marginal` are its own; ap,
pa and arow the structured SVM, whose exp(score) normalised by
forward-backward ranks labelings but is not a calibrated probability.
"""

import errno
import json
import os
import sys

from chaintag import _chaintag, _settings

try:
    from chaintag import __version__ as _VERSION
except ImportError:  # a package without a version
    _VERSION = "unknown"

# python-crfsuite's CRFSUITE_VERSION names the CRFsuite library it wraps;
# here it is chaintag's version.
CRFSUITE_VERSION = "chaintag " + _VERSION


class _UnknownLabelError(ValueError, RuntimeError):
    """A label the model does not have (python-crfsuite: RuntimeError)."""


class _PositionError(IndexError, ValueError):
    """A position outside the sequence (python-crfsuite: ValueError)."""


def output_path(path):
    """`path` (a str or os.PathLike) as a str; FileNotFoundError, before any
    training, when its folder does not exist."""
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "no such folder for the model "
                                "file", folder)
    return path


class ItemSequence:
    """python-crfsuite's ItemSequence: one sequence's items, read as
    training reads them (chaintag.ItemSequences says how each form is read).

    `items()` gives each item as a dict {attribute: value}, the values as
    given (those of 0 kept); Trainer.append and Tagger.tag take it in place
    of the items.
    """

    def __init__(self, xseq):
        self._items = _chaintag.item_dicts(xseq)

    def items(self):
        return [dict(item) for item in self._items]

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return "<ItemSequence (%d items)>" % len(self._items)


def _plain(xseq):
    """The items of an ItemSequence, or xseq itself."""
    return xseq._items if isinstance(xseq, ItemSequence) else xseq


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


def describe(algorithm, run):
    """The lines that open a run's messages: CRFsuite's model type and what
    the algorithm trains in chaintag."""
    what = ("the CRF (model.loss LOG)" if run["loss"] == _settings.CRF
            else "the structured SVM (hinge loss)")
    lines = [
        "chaintag %s: algorithm %s trains %s with solver %s" % (
            _VERSION, algorithm, what, run["solver"]),
        "type: CRF1d",
        "lambda: %r" % run["lam"],
    ]
    if run["l1"]:
        lines.append("l1: %r" % run["l1"])
    lines.append("max_passes: %s" % run["max_passes"])
    return lines


def training_run(train, algorithm, params, options, dev=None, keep=False,
                 progress=False):
    """Trains on ItemSequences; (model, summary).

    `algorithm` and `params` are CRFsuite's (those set; _settings maps
    them), `options` chaintag's own (regularization, solver, order, ...).
    """
    if len(train) == 0:
        raise ValueError("no sequences to train on")
    run = _settings.run_settings(algorithm, params, options, len(train))
    if callable(progress):
        for line in describe(_settings.canonical_algorithm(algorithm), run):
            progress(line)
    text = _settings.config_text(
        run["lam"], max_passes=run["max_passes"], min_freq=run["min_freq"],
        solver=run["solver"], order=run["order"],
        num_threads=run["num_threads"], seed=run["seed"],
        num_buckets=run["num_buckets"], gap_tolerance=run["gap_tolerance"],
        keep_feature_names=run["keep_feature_names"],
        evaluate_dev=dev is not None and len(dev) > 0, loss=run["loss"],
        l1=run["l1"], averaging=run["averaging"], lbfgs=run["lbfgs"],
        states=run["states"])
    return _chaintag.train_sequences(
        train, text, dict(options.get("overrides") or {}),
        dev=dev if dev is not None and len(dev) > 0 else None, keep=keep,
        output_dir=options.get("output_dir"), progress=progress)


class Trainer:
    """python-crfsuite's Trainer: append sequences, select an algorithm,
    set its parameters, train.

    The algorithms and their parameters are CRFsuite's (select(); params()
    and help() list them; _settings says what each maps to in chaintag),
    beside chaintag's own (regularization, solver, order, num_threads,
    seed, num_buckets, gap_tolerance, keep_feature_names, overrides).
    """

    def __new__(cls, *args, **kwargs):
        # The state lives here, so that a subclass whose __init__ does not
        # call Trainer.__init__ (as python-crfsuite allows) still works.
        self = super().__new__(cls)
        self.verbose = True
        self._algorithm = "lbfgs"
        self._params = {}
        self._options = {}
        self._groups = {}
        self.logparser = TrainingLog([])
        return self

    def __init__(self, algorithm=None, params=None, verbose=True):
        self.verbose = verbose
        if algorithm is not None:
            self.select(algorithm)
        if params:
            self.set_params(params)

    def append(self, xseq, yseq, group=0):
        """Adds a sequence and its labels (converted now, in C++)."""
        self._groups.setdefault(group, _chaintag.ItemSequences()).append(
            _plain(xseq), yseq)

    def clear(self):
        self._groups = {}

    def select(self, algorithm, type="crf1d"):
        """Chooses CRFsuite's training algorithm (lbfgs, l2sgd, ap, pa,
        arow); its parameters start at CRFsuite's defaults."""
        if type != "crf1d":
            raise ValueError("chaintag trains linear-chain models only "
                             "(type='crf1d'), got %r" % (type,))
        self._algorithm = _settings.canonical_algorithm(algorithm)
        self._params = {}

    def _check(self, name):
        if name in _settings.CHAINTAG_PARAMETERS:
            return
        known = _settings.defaults(self._algorithm)
        if name not in known:
            raise ValueError(
                "unknown parameter %r of %s; its parameters are %s, and "
                "chaintag's %s" % (
                    name, self._algorithm, ", ".join(known),
                    ", ".join(_settings.CHAINTAG_PARAMETERS)))

    def set(self, name, value):
        self._check(name)
        if name in _settings.CHAINTAG_PARAMETERS:
            self._options[name] = value
        else:
            _settings.check_parameters(self._algorithm, {name: value})
            self._params[name] = _settings.typed(
                value, _settings.defaults(self._algorithm)[name])

    def get(self, name):
        self._check(name)
        if name in _settings.CHAINTAG_PARAMETERS:
            return self._options.get(name)
        return self._params.get(name,
                                _settings.defaults(self._algorithm)[name])

    def set_params(self, params):
        for name, value in params.items():
            self.set(name, value)

    def get_params(self):
        """The algorithm's parameters (CRFsuite's defaults where not set)
        and chaintag's that are set."""
        params = {name: self.get(name)
                  for name in _settings.defaults(self._algorithm)}
        params.update({name: value for name, value in self._options.items()
                       if value is not None})
        return params

    def params(self):
        return (list(_settings.defaults(self._algorithm)) +
                list(_settings.CHAINTAG_PARAMETERS))

    def help(self, name):
        return _settings.help_text(self._algorithm, name)

    def message(self, message):
        """Receives each progress line (with its newline); writes it to
        stderr when verbose."""
        if self.verbose:
            sys.stderr.write(message)

    def train(self, model, holdout=-1):
        """Trains on the appended sequences (group `holdout` held out and
        scored after each pass) and writes the model file `model`; with
        nothing appended, a model without labels."""
        model = output_path(model)
        train = _chaintag.ItemSequences()
        dev = _chaintag.ItemSequences()
        for group, sequences in self._groups.items():
            (dev if group == holdout else train).add(sequences)
        if len(train) == 0:
            # As python-crfsuite: a model of no labels, which tags only
            # empty sequences. The parameters are checked all the same.
            run = _settings.run_settings(self._algorithm, self._params,
                                         self._options, 1)
            self.message("no sequences appended: the model has no labels\n")
            # Hashed: exact features need a key table, and there are no
            # attributes to make one of.
            _chaintag.empty_model(_settings.config_text(
                run["lam"], num_buckets=run["num_buckets"] or 1,
                loss=run["loss"])).save(model)
            self.logparser = TrainingLog([])
            return None
        trained, summary = training_run(
            train, self._algorithm, self._params, self._options, dev=dev,
            keep=False, progress=lambda line: self.message(line + "\n"))
        self.logparser = TrainingLog(summary["log"])
        trained.save(model)
        return trained


class BaseTrainer(Trainer):
    """python-crfsuite's BaseTrainer: a Trainer whose message() ignores
    the progress lines (override it to receive them)."""

    def message(self, message):
        pass


# python-crfsuite's error class: here the base of chaintag's errors.
CRFSuiteError = _chaintag.Error


class ParsedDump:
    """What Tagger.info() returns, as pycrfsuite's: labels and attributes
    {name: id}, the ids text as pycrfsuite reads them from its dump,
    transitions {(from, to): w}, state_features {(attribute, label): w}
    and header {field: text} (`magic` chaintag, `size` the model file's
    bytes, `version` its format version)."""

    def __init__(self, model):
        self.labels = {name: str(i) for i, name in enumerate(model.labels)}
        self.state_features = model.state_features()
        self.transitions = model.transition_features()
        attributes = sorted({attribute for attribute, _ in self.state_features})
        self.attributes = {name: str(i) for i, name in enumerate(attributes)}
        from chaintag import model_to_bytes
        header = {"magic": "chaintag", "size": len(model_to_bytes(model)),
                  "version": model.format_version, "type": "CRF1d",
                  "order": model.order, "num_labels": len(model.labels),
                  "num_attrs": len(attributes),
                  "num_features": len(self.state_features) +
                  len(self.transitions)}
        header.update(model.summary)
        self.header = {key: str(value) for key, value in header.items()}


def write_dump(model, out):
    """The model as `crfsuite dump` prints one: its header, labels,
    attributes, transitions and state features (non-zero weights)."""
    dump = ParsedDump(model)
    out.write("FILEHEADER = {\n")
    for key, value in dump.header.items():
        out.write("  %s: %s\n" % (key, value))
    out.write("}\n\nLABELS = {\n")
    for name, i in dump.labels.items():
        out.write("%7s: %s\n" % (i, name))
    out.write("}\n\nATTRIBUTES = {\n")
    for name, i in dump.attributes.items():
        out.write("%7s: %s\n" % (i, name))
    out.write("}\n\nTRANSITIONS = {\n")
    for (source, target), weight in dump.transitions.items():
        out.write("  (%d) %s --> %s: %f\n" % (1, source, target, weight))
    out.write("}\n\nSTATE_FEATURES = {\n")
    for (attribute, label), weight in sorted(
            dump.state_features.items(),
            key=lambda item: (int(dump.attributes[item[0][0]]),
                              int(dump.labels[item[0][1]]))):
        out.write("  (%d) %s --> %s: %f\n" % (0, attribute, label, weight))
    out.write("}\n\n")


class Tagger:
    """python-crfsuite's Tagger on a chaintag model file."""

    def __init__(self):
        self._model = None
        self._xseq = None
        self._marginals = None  # of _xseq, computed when first asked

    @classmethod
    def from_model(cls, model):
        """A Tagger opened on a chaintag.Model (sklearn's tagger_)."""
        tagger = cls()
        tagger._model = model
        return tagger

    def open(self, name):
        """Opens a model file: FileNotFoundError (an IOError) when it is
        missing, ValueError when it is not a valid chaintag model."""
        self.close()
        try:
            self._model = _chaintag.Model.load(os.fspath(name))
        except _chaintag.NotFoundError:
            raise
        except _chaintag.Error as e:
            raise ValueError("%s is not a chaintag model file: %s"
                             % (name, e)) from e
        return self

    def open_inmemory(self, value):
        """Opens a model file's bytes (ValueError when not a valid one)."""
        from chaintag import model_from_bytes
        self.close()
        try:
            self._model = model_from_bytes(value)
        except _chaintag.Error as e:
            raise ValueError("not a chaintag model file's bytes: %s"
                             % (e,)) from e
        return self

    def close(self):
        self._model = None
        self._xseq = None
        self._marginals = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _opened(self, error=ValueError):
        if self._model is None:
            raise error("no model: call open(path) first")
        return self._model

    def labels(self):
        return list(self._opened().labels)

    def set(self, xseq):
        """Sets the sequence that tag(), probability() and marginal() read.
        Its items are taken now, as python-crfsuite takes them: a one-shot
        iterator, or a list changed later, leaves it as it was. (Copying
        the list, not converting the items, keeps tag(xseq) as fast as the
        model's own tag.)"""
        self._opened()
        self._xseq = list(_plain(xseq))
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
        """P(label y at position pos | the set sequence), by forward-backward.
        An unknown label raises an error that is both a ValueError and
        python-crfsuite's RuntimeError; a position outside the sequence one
        that is both an IndexError and its ValueError."""
        model = self._opened()
        labels = model.labels
        if y not in labels:
            raise _UnknownLabelError("%r is not a label of the model" % (y,))
        if self._marginals is None:
            self._marginals = model.marginals(self._sequence())
        marginals = self._marginals
        if not 0 <= pos < marginals.shape[0]:
            raise _PositionError("position %d outside a sequence of %d items"
                                 % (pos, marginals.shape[0]))
        return float(marginals[pos, labels.index(y)])

    def info(self):
        """The model's labels, attributes, weights and header (RuntimeError
        when no model is open, as python-crfsuite's)."""
        return ParsedDump(self._opened(RuntimeError))

    def dump(self, filename=None):
        """Writes the model as `crfsuite dump` prints one, to `filename`
        (default: stdout); RuntimeError when no model is open."""
        model = self._opened(RuntimeError)
        if filename is None:
            write_dump(model, sys.stdout)
            return
        with open(filename, "w", encoding="utf-8") as out:
            write_dump(model, out)
