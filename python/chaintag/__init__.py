"""chaintag: linear-chain structured SVM and CRF sequence tagging.

The C++ extension (chaintag._chaintag) trains, tags and evaluates; this
package adds python-crfsuite's Trainer and Tagger (chaintag.crfsuite) and a
scikit-learn estimator with sklearn-crfsuite's calls (chaintag.sklearn,
which imports scikit-learn when it is imported). docs/python.md has the
whole API.
"""

import os
import tempfile

__version__ = "0.1.0"

from chaintag._chaintag import (Bundle, Error, InvalidArgumentError,
                                ItemSequences, Model, NotFoundError,
                                StatusError, UnimplementedError, evaluate,
                                train, train_sequences)


def model_to_bytes(model):
    """The model file's bytes (what Model.save writes)."""
    with tempfile.TemporaryDirectory(prefix="chaintag_model_") as directory:
        path = os.path.join(directory, "model")
        model.save(path)
        with open(path, "rb") as f:
            return f.read()


def model_from_bytes(data):
    """A Model from a model file's bytes, validated as Model.load does."""
    with tempfile.TemporaryDirectory(prefix="chaintag_model_") as directory:
        path = os.path.join(directory, "model")
        with open(path, "wb") as f:
            f.write(data)
        try:
            return Model.load(path)
        except Error as e:
            # The temporary file means nothing to the caller.
            e.args = tuple(str(a).replace(path, "the bytes given")
                           for a in e.args)
            raise


# A Model pickles as its model file's bytes.
Model.__reduce__ = lambda self: (model_from_bytes, (model_to_bytes(self),))

from chaintag.crfsuite import Tagger, Trainer  # noqa: E402

__all__ = [
    "Bundle", "Error", "InvalidArgumentError", "ItemSequences", "Model",
    "NotFoundError", "StatusError", "Tagger", "Trainer", "UnimplementedError",
    "evaluate", "model_from_bytes", "model_to_bytes", "train",
    "train_sequences",
]
