"""chaintag: linear-chain structured SVM sequence tagging (type stubs).

A sentence is a sequence of tokens. A token is a ``str`` when the model reads
one column, or a tuple of ``str``, one per column the model reads, in the
order of its attribute columns (a CoNLL-2000 chunker reads ``(word, POS)``).

Every failure raises a subclass of :class:`Error` whose message is the
library's ``absl::Status`` message (naming the file and line at fault) and
whose ``code`` is the status code's name.
"""

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Token = Union[str, Tuple[str, ...]]
Sentence = Sequence[Token]
Tags = List[str]
OverrideValue = Union[bool, int, float, str]


class Error(Exception):
    """Base class of every chaintag error."""
    code: str  # "INVALID_ARGUMENT", "NOT_FOUND", "DATA_LOSS", ...


class InvalidArgumentError(Error, ValueError):
    """Bad input: a malformed file, sentence, config or argument
    (INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE)."""


class NotFoundError(Error, FileNotFoundError):
    """A file that does not exist (NOT_FOUND)."""


class UnimplementedError(Error, NotImplementedError):
    """An operation the model does not support (UNIMPLEMENTED)."""


class StatusError(Error, OSError):
    """Any other failure, e.g. a damaged model file (DATA_LOSS)."""


class Model:
    """A trained chain model (a model file written by ``train``).

    One-sentence calls (``tag``, ``nbest``, ``margins``) hold the GIL and
    reuse the object's buffers; ``tag_batch`` releases the GIL. A Model may
    be shared between Python threads.
    """

    @staticmethod
    def load(path: str) -> "Model":
        """Loads and validates a model file (NotFoundError, StatusError)."""

    def save(self, path: str) -> None:
        """Writes the model file (temporary file + rename)."""

    def tag(self, tokens: Sentence) -> Tags:
        """One tag per token, in the model's output scheme: exactly the tags
        ``tag --model`` appends. Decodes with the training scheme's
        constraints when the model was trained with constrained_decoding.
        A stacked model tags the sentence as a document of its own."""

    def tag_batch(self, sentences: Sequence[Sentence], *,
                  threads: int = 1) -> List[Tags]:
        """``tag`` for every sentence, on ``threads`` threads (1..256) with
        the GIL released; results in input order, the same for any thread
        count. The first failing sentence raises, named by its index."""

    def tag_document(self, sentences: Sequence[Sentence]) -> List[Tags]:
        """Tags the sentences of one document together: a stacked model's
        document attributes are computed over all of them (as ``tag`` does
        between -DOCSTART- lines); other models tag each alone."""

    def nbest(self, tokens: Sentence, k: int, *,
              constrained: Optional[bool] = None
              ) -> Tuple[List[Tags], npt.NDArray[np.float64]]:
        """The k best labelings (output scheme; fewer when fewer exist),
        best first, and their scores <w, phi(x, y)> (descending float64
        array). ``constrained``: only labelings valid in the training scheme
        (default: as ``tag`` decodes). ``nbest(tokens, 1)[0][0] ==
        tag(tokens)``; scores[0] - scores[1] is ``tag --margins``' margin."""

    def margins(self, tokens: Sentence, *,
                constrained: Optional[bool] = None
                ) -> npt.NDArray[np.float64]:
        """Max-marginal scores, a (T, L) float64 array: entry [t, y] is the
        score of the best labeling with label ``labels[y]`` (training
        scheme) at position t. Every row's maximum is the best labeling's
        score, reached at its label; best minus the largest entry off the
        best labeling is the margin to the second-best labeling. -inf where
        constraints forbid every labeling through (t, y). First-order
        models only (UnimplementedError otherwise)."""

    def marginals(self, tokens: Sentence, *,
                  constrained: Optional[bool] = None
                  ) -> npt.NDArray[np.float64]:
        """Label marginals, a (T, L) float64 array whose rows sum to 1:
        P(y_t = labels[y]) under p(y) proportional to exp(<w, phi(x, y)>),
        by forward-backward. A max-margin model's scores are not calibrated
        log-probabilities: rank with them, do not read them as the chance of
        being right. First-order models only."""

    def log_probability(self, tokens: Sentence, labels: Sequence[str], *,
                        constrained: Optional[bool] = None) -> float:
        """log P(labels | tokens) under the same distribution (label names
        as in ``labels``; InvalidArgumentError for others)."""

    def state_features(self) -> Dict[Tuple[str, str], float]:
        """{(attribute, label): weight} for every non-zero attribute weight;
        attributes named when the model keeps names, else "bucket N"."""

    def transition_features(self) -> Dict[Tuple[str, str], float]:
        """{(previous label, next label): weight}."""

    @property
    def reads_items(self) -> bool:
        """Whether a token is an item (a list of attribute names or a dict
        of features; models trained on ItemSequences or CRFsuite files)."""

    @property
    def keeps_feature_names(self) -> bool:
        """Whether the model file keeps its attributes' names."""

    @property
    def labels(self) -> List[str]:
        """Label names in id order (training scheme): margins' columns."""

    @property
    def num_columns(self) -> int:
        """Columns per token (1: a token may be a str)."""

    @property
    def attribute_columns(self) -> List[int]:
        """The CoNLL fields the columns were read from in training."""

    @property
    def order(self) -> int:
        """1 (label pairs) or 2 (label trigrams)."""

    @property
    def format_version(self) -> int:
        """The model file format's version."""

    @property
    def stacked(self) -> bool:
        """A two-stage model with a first stage and document attributes."""

    @property
    def constrained(self) -> bool:
        """Whether ``tag`` decodes only valid labelings."""

    @property
    def train_scheme(self) -> str:
        """"IOB1", "IOB2", "IOBES" or "NONE"."""

    @property
    def output_scheme(self) -> str:
        """The scheme of ``tag``'s tags (the training input's)."""

    @property
    def summary(self) -> Dict[str, Any]:
        """The training summary the model file records (solver, lambda,
        passes, oracle_calls, seconds, primal, dual, gap, stop_reason,
        num_examples, dim)."""


class Bundle:
    """Stacked models (word -> pos -> chunk [-> ner]) that tag raw text: a
    directory holding ``bundle.textproto`` and the model files it names."""

    @staticmethod
    def load(path: str) -> "Bundle":
        """Loads a bundle directory (or its manifest)."""

    def tag_text(self, text: str, *, paragraphs: bool = False,
                 constrained: bool = True, nbest: int = 1,
                 margins: bool = False, threads: int = 1
                 ) -> List[Dict[str, Any]]:
        """Tokenizes (Penn Treebank style) and tags raw text: one sentence
        per line, or with ``paragraphs`` paragraphs (blank-line separated)
        split into sentences. One dict per sentence, exactly the JSON object
        ``tag --pipeline --format=json`` prints: ``line``, ``tokens``,
        ``offsets`` (UTF-8 byte ``begin``/``end`` in the line or paragraph;
        ``begin`` absent when 0), ``stages`` (each ``name``, ``column``,
        ``tags``, ``score``, chunk ``spans`` with ``begin``/``end``/``type``/
        ``text``, and ``margin`` / ``nbest`` when asked for). Lines without
        tokens give nothing."""

    def tag(self, tokens: Sequence[str], *, constrained: bool = True,
            nbest: int = 1, margins: bool = False) -> Dict[str, Any]:
        """Tags already tokenized words: the dict ``tag_text`` gives for a
        sentence, without offsets."""

    @property
    def columns(self) -> List[str]:
        """"word", then each stage's column."""

    @property
    def stages(self) -> List[str]:
        """Stage names, in order."""


def train(config: Union[str, "os.PathLike[str]"],
          overrides: Optional[Mapping[str, OverrideValue]] = None, *,
          corpora: Optional[str] = None,
          output_dir: Optional[str] = None,
          progress: Union[bool, Callable[[str], Any]] = True
          ) -> Tuple[Model, Dict[str, Any]]:
    """Trains a model as ``train --config`` does and returns it with its
    summary.

    config: a PipelineConfig text-proto file, or the config text itself.
    overrides: {"solver.lambda": 1e-4, "corpus.max_train_sentences": 300,
        ...}: any singular field by its dotted path, as ``train --set``.
    corpora: the corpora root that relative corpus paths are read from
        (default: $CHAINTAG_CORPORA, else ../shared/corpora).
    output_dir: keep the model and its JSON-lines log there (default: a
        temporary directory, removed after the model is loaded).
    progress: True prints the progress lines to stderr, False nothing; a
        callable is called (with the GIL) once per line; if it raises, it
        is not called again and its exception is raised after the run.

    The summary holds the solver's summary (solver, lambda, passes,
    oracle_calls, seconds, primal, dual, gap, stop_reason, num_examples,
    dim), num_train_sentences, and when there are such splits f1, accuracy,
    test_report and num_test_sentences (test split), dev_f1, dev_accuracy,
    dev_report (dev split), train/test_letter_error (OCR), train_only_f1
    (retrain_on_train_and_dev), interrupted, and with output_dir model_path
    and log_path. The GIL is released during the run.
    """


Item = Union[Sequence[Union[str, bytes]], Mapping[Union[str, bytes], Any]]


class ItemSequences:
    """Item sequences (python-crfsuite's forms) and labels, converted in C++
    on arrival: a list (tuple, set) of names is attributes of value 1;
    {name: number} gives the value; {name: str} (or bytes, as UTF-8) is
    the attribute "name:str"; True is 1, False 0 (not kept: no feature); a nested dict
    or list prefixes its attributes with "name:". Names are interned."""

    def __init__(self, X: Optional[Sequence[Sequence[Item]]] = None,
                 y: Optional[Sequence[Sequence[str]]] = None) -> None: ...
    def append(self, xseq: Sequence[Item],
               yseq: Optional[Sequence[str]] = None) -> None: ...
    def extend(self, X: Sequence[Sequence[Item]],
               y: Optional[Sequence[Sequence[str]]] = None) -> None: ...
    def add(self, other: "ItemSequences") -> None:
        """Appends copies of another's sequences."""
    def __len__(self) -> int: ...
    @property
    def num_items(self) -> int: ...
    @property
    def num_attributes(self) -> int: ...
    @property
    def num_distinct_names(self) -> int: ...
    def attributes(self, i: int) -> List[List[Tuple[str, float]]]:
        """Sequence i's items as (name, value) lists, as converted."""
    def labels(self, i: int) -> List[str]: ...


def train_sequences(train: ItemSequences, config: Union[str, "os.PathLike[str]"],
                    overrides: Optional[Mapping[str, OverrideValue]] = None, *,
                    dev: Optional[ItemSequences] = None, keep: bool = False,
                    corpora: Optional[str] = None,
                    output_dir: Optional[str] = None,
                    progress: Union[bool, Callable[[str], Any]] = False
                    ) -> Tuple[Model, Dict[str, Any]]:
    """``train`` on item sequences instead of corpus.train and corpus.dev
    (which must be unset; corpus.format.layout must be CRFSUITE). The
    sequences are taken (emptied) unless ``keep``. summary["log"] holds the
    run's JSON log lines."""


def empty_model(config: Union[str, "os.PathLike[str]"]) -> Model:
    """The model a run of ``config`` on no sentences gives: its features
    and input format, no labels, no weights. It tags empty sentences only
    (python-crfsuite's Trainer.train with nothing appended writes one)."""


def item_dicts(xseq: Sequence[Any]) -> List[Dict[str, float]]:
    """One sequence's items as {attribute: value} dicts, read as training
    reads them but with the values as given and those of 0 kept
    (python-crfsuite's ItemSequence.items())."""


def evaluate(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
             *, raw: bool = False, outside: str = "O") -> Dict[str, Any]:
    """conlleval's figures for gold and predicted tags (one list per
    sentence, same lengths), exactly as the ``evaluate`` CLI computes them:
    precision, recall, f1, accuracy (percent; 0 when undefined), tokens,
    correct_tags, phrases (gold chunks), found, correct, by_type
    ({type: {precision, recall, f1, phrases, found, correct}}) and report
    (the script's text output). ``raw``/``outside``: conlleval's -r and -o.
    """
