"""sklearn-crfsuite's scorers, for GridSearchCV(scoring=...)."""

from sklearn.metrics import make_scorer

from chaintag.sklearn import metrics

flat_accuracy = make_scorer(metrics.flat_accuracy_score)
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)
