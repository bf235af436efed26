"""Training settings shared by chaintag.sklearn.CRF and chaintag.Trainer.

CRFsuite's options (as sklearn-crfsuite and python-crfsuite name them) are
mapped to chaintag's config here, in one place, each to a documented
meaning or refused with what to use instead (docs/python.md lists them):

  c2               λ = 2·c2 / n (n training sequences): CRFsuite minimises
                   -log-likelihood + c2‖w‖², chaintag λ/2‖w‖² + the mean
                   hinge loss, so the same weight on ‖w‖² per sequence.
  max_iterations   solver.max_passes: one pass over the data, as one L-BFGS
                   iteration is one gradient over the data.
  min_freq         features.min_feature_count: attributes seen at fewer
                   positions get no weight.
  c1, algorithm    no counterpart (no L1 term; a structured SVM trained by
                   the chaintag solver): accepted with one warning.
  all_possible_transitions, all_possible_states
                   chaintag always weighs every label pair and every
                   (attribute, label) pair (CRFsuite's True); False is
                   accepted with the same warning.
"""

import math
import warnings

# The estimator's defaults: what a user of sklearn-crfsuite gets without
# options (docs/experiments.md has the grid on CoNLL-2003).
DEFAULT_BUCKETS = 1 << 20
DEFAULT_C2 = 1.0  # CRFsuite's
DEFAULT_PASSES = 30
DEFAULT_GAP_TOLERANCE = 0.01

# CRFsuite options of its other algorithms' and L-BFGS's inner workings:
# refused, with what chaintag offers instead.
REFUSED = {
    "num_memories": "L-BFGS's memory; chaintag's solvers need none",
    "epsilon": "L-BFGS's stopping rule; chaintag stops when the duality gap "
               "is below gap_tolerance (a certificate), or after "
               "max_iterations passes",
    "period": "L-BFGS's stopping rule; use gap_tolerance",
    "delta": "L-BFGS's stopping rule; use gap_tolerance",
    "linesearch": "L-BFGS's line search; chaintag's BCFW steps are exact "
                  "line searches",
    "max_linesearch": "L-BFGS's line search; chaintag's BCFW steps are "
                      "exact line searches",
    "calibration_eta": "SGD's step size; chaintag's solvers need none",
    "calibration_rate": "SGD's step size; chaintag's solvers need none",
    "calibration_samples": "SGD's step size; chaintag's solvers need none",
    "calibration_candidates": "SGD's step size; chaintag's solvers need none",
    "calibration_max_trials": "SGD's step size; chaintag's solvers need none",
    "pa_type": "the passive-aggressive trainer's; use solver= and "
               "regularization=",
    "c": "the passive-aggressive trainer's; use regularization=",
    "error_sensitive": "the passive-aggressive trainer's; use solver=",
    "averaging": "the averaged perceptron's and PA's; BCFW averages its "
                 "iterates (weighted_averaging in config/overrides)",
    "variance": "AROW's; use regularization=",
    "gamma": "AROW's; use regularization=",
}


def refuse_unsupported(options):
    """ValueError for the first refused CRFsuite option that is set."""
    for name, why in REFUSED.items():
        if options.get(name) is not None:
            raise ValueError(
                "%s=%r has no chaintag counterpart (%s)" % (name, options[name], why))


def compatibility_warning(algorithm=None, c1=None, all_possible_states=None,
                          all_possible_transitions=None, stacklevel=3):
    """The one warning for CRFsuite options accepted but not applied."""
    notes = []
    if algorithm is not None:
        notes.append(
            "algorithm=%r: chaintag trains a structured SVM (hinge loss) "
            "with its own solver (solver=, default BCFW), not CRFsuite's "
            "%s" % (algorithm, algorithm))
    if c1 is not None and c1 != 0:
        notes.append(
            "c1=%r: chaintag has no L1 term; the L2 term (c2 or "
            "regularization) is the only regulariser and c1 is not used"
            % (c1,))
    if all_possible_states is False:
        notes.append(
            "all_possible_states=False: chaintag weighs every (attribute, "
            "label) pair, as CRFsuite does with True")
    if all_possible_transitions is False:
        notes.append(
            "all_possible_transitions=False: chaintag weighs every label "
            "transition, as CRFsuite does with True")
    if notes:
        warnings.warn("; ".join(notes), UserWarning, stacklevel=stacklevel)


def resolve_lambda(c2, regularization, num_sequences):
    """λ from c2 (λ = 2·c2/n) or regularization; both set is an error; neither
    is CRFsuite's default c2 = 1."""
    if c2 is not None and regularization is not None:
        raise ValueError(
            "give c2 (CRFsuite's L2 coefficient, converted to λ = 2·c2/n) or "
            "regularization (λ itself), not both")
    if regularization is not None:
        value = float(regularization)
    else:
        value = 2.0 * float(DEFAULT_C2 if c2 is None else c2) / num_sequences
    if not value > 0 or math.isinf(value):
        raise ValueError("the L2 regularisation must be positive and finite; "
                         "got λ = %r" % (value,))
    return value


def gap_check_passes(passes):
    """Passes between duality-gap checks: every 10, or a quarter of the run
    when longer (a check costs a pass; at max_iterations=100 checking every
    25 instead of 10 saves 3-10% of fit, the same model)."""
    return min(passes, max(10, passes // 4))


def config_text(lam, max_passes=None, min_freq=None, solver="bcfw", order=1,
                num_threads=1, seed=1, num_buckets=None, gap_tolerance=None,
                keep_feature_names=True, evaluate_dev=False):
    """The PipelineConfig text of a run on item sequences."""
    min_count = 0
    if min_freq is not None and min_freq > 0:
        min_count = int(math.ceil(min_freq))
    passes = DEFAULT_PASSES if max_passes is None else int(max_passes)
    if passes < 1:
        raise ValueError("max_iterations must be >= 1, got %r" % (passes,))
    tolerance = (DEFAULT_GAP_TOLERANCE if gap_tolerance is None
                 else float(gap_tolerance))
    return "\n".join([
        'name: "items"',
        "corpus { format { layout: CRFSUITE tag_scheme: NONE } }",
        "features { num_buckets: %d hash_seed: 0 bias: true "
        "min_feature_count: %d }"
        % (num_buckets or DEFAULT_BUCKETS, min_count),
        "model { order: %d train_scheme: NONE normalize_loss: false "
        "keep_feature_names: %s }"
        % (int(order), "true" if keep_feature_names else "false"),
        'solver { name: "%s" lambda: %r max_passes: %d gap_tolerance: %r '
        "gap_check: %d seed: %d num_threads: %d }"
        % (solver, lam, passes, tolerance, gap_check_passes(passes), int(seed),
           int(num_threads)),
        "eval_every: %d" % (1 if evaluate_dev else 0),
    ])
