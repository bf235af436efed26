"""sklearn-crfsuite's metrics: scikit-learn's, on label sequences flattened
to one label per token, and whole-sequence accuracy. For chunks and
entities as CoNLL scores them use chaintag.evaluate (conlleval's figures).
"""

from itertools import chain

from sklearn import metrics as _metrics


def _flat(y):
    return list(chain.from_iterable(y))


def _flattened(function):
    def flat_function(y_true, y_pred, *args, **kwargs):
        return function(_flat(y_true), _flat(y_pred), *args, **kwargs)
    flat_function.__name__ = "flat_" + function.__name__
    flat_function.__doc__ = ("scikit-learn's %s on the flattened label "
                             "sequences." % function.__name__)
    return flat_function


flat_accuracy_score = _flattened(_metrics.accuracy_score)
flat_precision_score = _flattened(_metrics.precision_score)
flat_recall_score = _flattened(_metrics.recall_score)
flat_f1_score = _flattened(_metrics.f1_score)
flat_fbeta_score = _flattened(_metrics.fbeta_score)
flat_classification_report = _flattened(_metrics.classification_report)


def sequence_accuracy_score(y_true, y_pred):
    """The fraction of sequences labelled wholly right."""
    if len(y_true) != len(y_pred):
        raise ValueError("%d true sequences but %d predicted"
                         % (len(y_true), len(y_pred)))
    if not y_true:
        return 0.0
    right = sum(1 for a, b in zip(y_true, y_pred) if list(a) == list(b))
    return right / len(y_true)
