"""sklearn-crfsuite's metrics: scikit-learn's, on label sequences flattened
to one label per token, and whole-sequence accuracy. For chunks and
entities as CoNLL scores them use chaintag.evaluate (conlleval's figures).
"""

from itertools import chain

from sklearn import metrics as _metrics


def _flat(y):
    return list(chain.from_iterable(y))


def _flattened(function, positional=()):
    """`function` on flattened sequences; `positional` names the arguments
    after y_pred that sklearn-crfsuite's wrapper takes by position (beta,
    labels), which scikit-learn takes by keyword only."""
    def flat_function(y_true, y_pred, *args, **kwargs):
        if len(args) > len(positional):
            raise TypeError("flat_%s takes %d positional arguments after "
                            "y_pred (%s), got %d" % (
                                function.__name__, len(positional),
                                ", ".join(positional) or "none", len(args)))
        for name, value in zip(positional, args):
            if name in kwargs:
                raise TypeError("flat_%s got %s twice" % (function.__name__,
                                                          name))
            kwargs[name] = value
        return function(_flat(y_true), _flat(y_pred), **kwargs)
    flat_function.__name__ = "flat_" + function.__name__
    flat_function.__doc__ = ("scikit-learn's %s on the flattened label "
                             "sequences." % function.__name__)
    return flat_function


flat_accuracy_score = _flattened(_metrics.accuracy_score)
flat_precision_score = _flattened(_metrics.precision_score)
flat_recall_score = _flattened(_metrics.recall_score)
flat_f1_score = _flattened(_metrics.f1_score)
flat_fbeta_score = _flattened(_metrics.fbeta_score, ("beta",))
flat_classification_report = _flattened(_metrics.classification_report,
                                        ("labels",))


def sequence_accuracy_score(y_true, y_pred):
    """The fraction of sequences labelled wholly right (lists, tuples or
    numpy arrays of sequences, as predict returns them)."""
    if len(y_true) != len(y_pred):
        raise ValueError("%d true sequences but %d predicted"
                         % (len(y_true), len(y_pred)))
    if len(y_true) == 0:
        return 0.0
    right = sum(1 for a, b in zip(y_true, y_pred) if list(a) == list(b))
    return right / len(y_true)
