"""sklearn-crfsuite's NER tutorial on CoNLL-2003 English, on chaintag.

The tutorial's steps (its word2features over word and POS, CRF(c1, c2,
max_iterations=100, all_possible_transitions=True), fit, predict, the
metrics, the learnt transitions and state features) with only the import
changed, plus conlleval's report from chaintag.evaluate.

    ~/venvs/tagging/bin/python python/examples/conll2003_tutorial.py [CORPORA]

with chaintag installed there (pip install --no-index ./python), or with
PYTHONPATH=$(./bazelw info bazel-bin)/python/site after
./bazelw build //python:site.

CORPORA defaults to $CHAINTAG_CORPORA, else ../shared/corpora.
"""

import os
import sys
import time
from collections import Counter

import chaintag
import chaintag.sklearn as sklearn_crfsuite  # was: import sklearn_crfsuite
from chaintag.sklearn import metrics  # was: from sklearn_crfsuite import metrics


def read_conll(path):
    """Sentences of (word, POS, NER tag), -DOCSTART- lines skipped."""
    sentences, sentence = [], []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields:
                if sentence:
                    sentences.append(sentence)
                sentence = []
            elif fields[0] != "-DOCSTART-":
                sentence.append((fields[0], fields[1], fields[3]))
    if sentence:
        sentences.append(sentence)
    return sentences


def word2features(sent, i):
    word = sent[i][0]
    postag = sent[i][1]
    features = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }
    if i > 0:
        word1 = sent[i - 1][0]
        postag1 = sent[i - 1][1]
        features.update({
            "-1:word.lower()": word1.lower(),
            "-1:word.istitle()": word1.istitle(),
            "-1:word.isupper()": word1.isupper(),
            "-1:postag": postag1,
            "-1:postag[:2]": postag1[:2],
        })
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1 = sent[i + 1][0]
        postag1 = sent[i + 1][1]
        features.update({
            "+1:word.lower()": word1.lower(),
            "+1:word.istitle()": word1.istitle(),
            "+1:word.isupper()": word1.isupper(),
            "+1:postag": postag1,
            "+1:postag[:2]": postag1[:2],
        })
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def sent2labels(sent):
    return [label for _, _, label in sent]


def main():
    corpora = (sys.argv[1] if len(sys.argv) > 1 else
               os.environ.get("CHAINTAG_CORPORA", "../shared/corpora"))
    train_sents = read_conll(os.path.join(corpora, "conll2003/eng.train"))
    test_sents = read_conll(os.path.join(corpora, "conll2003/eng.testb"))
    X_train = [sent2features(s) for s in train_sents]
    y_train = [sent2labels(s) for s in train_sents]
    X_test = [sent2features(s) for s in test_sents]
    y_test = [sent2labels(s) for s in test_sents]

    crf = sklearn_crfsuite.CRF(
        algorithm="lbfgs",
        c1=0.1,
        c2=0.1,
        max_iterations=100,
        all_possible_transitions=True,
    )
    start = time.perf_counter()
    crf.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start

    labels = list(crf.classes_)
    labels.remove("O")
    start = time.perf_counter()
    y_pred = crf.predict(X_test)
    predict_seconds = time.perf_counter() - start
    tokens = sum(len(s) for s in X_test)

    print("fit: %.2f s (%d passes); predict: %.3f s for %d tokens"
          % (fit_seconds, len(crf.training_log_.iterations), predict_seconds,
             tokens))
    print("flat F1 (weighted, without O): %.4f"
          % metrics.flat_f1_score(y_test, y_pred, average="weighted",
                                  labels=labels))
    print(metrics.flat_classification_report(
        y_test, y_pred, labels=sorted(labels, key=lambda n: (n[1:], n[0])),
        digits=3))
    print(chaintag.evaluate(y_test, y_pred)["report"])

    def print_transitions(trans_features):
        for (label_from, label_to), weight in trans_features:
            print("%-6s -> %-7s %0.6f" % (label_from, label_to, weight))

    print("Top likely transitions:")
    print_transitions(Counter(crf.transition_features_).most_common(5))
    print("Top positive state features:")
    for (attr, label), weight in Counter(crf.state_features_).most_common(5):
        print("%0.6f %-8s %s" % (weight, label, attr))


if __name__ == "__main__":
    main()
