"""CRFsuite's training algorithms and parameters, mapped onto chaintag's.

chaintag.sklearn.CRF and chaintag.crfsuite.Trainer share this table, so
that `algorithm`, `c1`, `c2` and the rest mean what they mean in
python-crfsuite and sklearn-crfsuite (docs/python.md lists them all):

  lbfgs, l2sgd   the CRF: model.loss LOG (the negative log-likelihood),
                 trained by chaintag's lbfgs (L-BFGS, OWL-QN with c1, as
                 CRFsuite) and by sag. CRFsuite minimises
                 Σ_i NLL_i + c1‖w‖₁ + c2‖w‖², chaintag
                 1/n Σ_i NLL_i + l1‖w‖₁ + λ/2‖w‖²: the same objective
                 divided by n with λ = 2·c2/n and l1 = c1/n.
  pa             the structured SVM (hinge with the Hamming loss, BCFW):
                 PA-I's step is a block's dual step clipped at c, and
                 BCFW's block weight is at most 1/(λn), so λ = 1/(c·n).
  ap, arow       the structured SVM too (BCFW, averaged iterates): they
                 have no regulariser, chaintag needs one, so λ = 2/n
                 (CRFsuite's default c2 = 1 converted), or `regularization`.

Every algorithm's parameters are listed with CRFsuite's defaults. The
solvers' own internals (L-BFGS's line search kind and stopping rule,
SGD's calibration, the online learners' epsilon) have no chaintag
counterpart: their default values are accepted (so that get_params and
set_params round-trip) and have no effect; another value is refused with
what to use instead.
"""

import math
import numbers

# The estimator's defaults: what a user of sklearn-crfsuite gets without
# options (docs/experiments.md has the grid on CoNLL-2003). Attributes are
# exact (a weight row each, as in CRFsuite) unless num_buckets asks for the
# hashing trick.
DEFAULT_C2 = 1.0  # CRFsuite's
DEFAULT_PASSES = 30
# CRFsuite runs L-BFGS until its own tests (delta, epsilon) stop it, often
# after hundreds of iterations; chaintag runs the same tests, at most this
# many iterations.
DEFAULT_LBFGS_ITERATIONS = 100
DEFAULT_GAP_TOLERANCE = 0.01

CRF = "crf"
HINGE = "hinge"

# CRFsuite's names of an algorithm (and its aliases) to its canonical name.
ALGORITHM_NAMES = {
    "lbfgs": "lbfgs",
    "l2sgd": "l2sgd",
    "ap": "ap",
    "averaged-perceptron": "ap",
    "pa": "pa",
    "passive-aggressive": "pa",
    "arow": "arow",
}
LOSS = {"lbfgs": CRF, "l2sgd": CRF, "ap": HINGE, "pa": HINGE, "arow": HINGE}

_FEATURES = [
    ("feature.minfreq", 0.0,
     "The minimum frequency of features: attributes seen at fewer positions "
     "get no weight (chaintag: features.min_feature_count)"),
    ("feature.possible_states", False,
     "Force to generate possible state features. True: chaintag weighs "
     "every (attribute, label) pair of the training attributes; False: an "
     "attribute has weights for the labels it is seen with in training "
     "only, as CRFsuite's default (model.states OBSERVED_STATES); unset: "
     "every pair below 100 labels, the seen ones from 100 up (lbfgs; "
     "STATES_AUTO), every pair with the other solvers"),
    ("feature.possible_transitions", False,
     "Force to generate possible transition features. chaintag weighs every "
     "label pair, as CRFsuite does with True; either value is accepted"),
]

_STOP = "the run stops when its duality gap is below gap_tolerance (a " \
        "certificate), or after max_iterations passes"

# (name, CRFsuite's default, help) per algorithm, in CRFsuite's order.
PARAMETERS = {
    "lbfgs": _FEATURES + [
        ("c1", 0.0, "Coefficient for L1 regularization (chaintag: "
         "solver.l1 = c1/n, the elastic net, n the training sequences)"),
        ("c2", 1.0, "Coefficient for L2 regularization (chaintag: "
         "lambda = 2*c2/n)"),
        ("max_iterations", DEFAULT_LBFGS_ITERATIONS,
         "The maximum number of iterations (passes; chaintag's default); "
         "the run stops earlier on CRFsuite's tests (epsilon, period, "
         "delta) or when its duality gap is below gap_tolerance"),
        ("num_memories", 6, "The number of limited memories for "
         "approximating the inverse Hessian (chaintag: "
         "solver.lbfgs.num_memories)"),
        ("epsilon", 1e-5, "Epsilon for testing the convergence of the "
         "objective: stop when the gradient is below epsilon times "
         "max(1, |w|) (chaintag: solver.lbfgs.epsilon); the run also stops "
         "on its duality gap"),
        ("period", 10, "The duration of iterations to test the stopping "
         "criterion (chaintag: solver.lbfgs.period)"),
        ("delta", 1e-5, "The threshold for the stopping criterion; an "
         "L-BFGS iteration stops when the improvement of the log likelihood "
         "over the last ${period} iterations is no greater than this "
         "threshold (chaintag: solver.lbfgs.delta)"),
        ("linesearch", "MoreThuente",
         "L-BFGS's line search; chaintag's lbfgs backtracks until Armijo's "
         "condition holds, as CRFsuite does when c1 > 0"),
        ("max_linesearch", 20, "The maximum number of trials for the line "
         "search (chaintag: solver.lbfgs.max_linesearch)"),
    ],
    "l2sgd": _FEATURES + [
        ("c2", 1.0, "Coefficient for L2 regularization (chaintag: "
         "lambda = 2*c2/n)"),
        ("max_iterations", DEFAULT_PASSES,
         "The maximum number of epochs (passes over the data); chaintag's "
         "default; the run stops earlier when its duality gap is below "
         "gap_tolerance"),
        ("period", 10, "SGD's stopping rule; " + _STOP),
        ("delta", 1e-6, "SGD's stopping rule; " + _STOP),
        ("calibration.eta", 0.1, "SGD's step-size calibration; sag's step "
         "is solver.sag.learning_rate (overrides)"),
        ("calibration.rate", 2.0, "SGD's step-size calibration; sag's step "
         "is solver.sag.learning_rate (overrides)"),
        ("calibration.samples", 1000.0, "SGD's step-size calibration; sag's "
         "step is solver.sag.learning_rate (overrides)"),
        ("calibration.candidates", 10, "SGD's step-size calibration; sag's "
         "step is solver.sag.learning_rate (overrides)"),
        ("calibration.max_trials", 20, "SGD's step-size calibration; sag's "
         "step is solver.sag.learning_rate (overrides)"),
    ],
    "ap": _FEATURES + [
        ("max_iterations", 100, "The maximum number of passes; the run "
         "stops earlier when its duality gap is below gap_tolerance"),
        ("epsilon", 0.0, "The perceptron's stopping rule (the ratio of "
         "wrong labels); " + _STOP),
    ],
    "pa": _FEATURES + [
        ("type", 1, "The update: 1, PA type I, is the structured SVM's "
         "(a block's dual step clipped at c); 0 and 2 have no chaintag "
         "counterpart"),
        ("c", 1.0, "The aggressiveness parameter (chaintag: lambda = "
         "1/(c*n), a block's weight bound 1/(lambda*n) being PA-I's c)"),
        ("error_sensitive", True, "Count the wrong labels in the cost: "
         "the structured SVM's Hamming loss (True only)"),
        ("averaging", True, "Average the weights: BCFW's weighted "
         "averaging (solver.weighted_averaging)"),
        ("max_iterations", 100, "The maximum number of passes; the run "
         "stops earlier when its duality gap is below gap_tolerance"),
        ("epsilon", 0.0, "PA's stopping rule (the mean loss); " + _STOP),
    ],
    "arow": _FEATURES + [
        ("variance", 1.0, "AROW's initial variance; the structured SVM's "
         "regulariser is regularization= (lambda)"),
        ("gamma", 1.0, "AROW's trade-off; the structured SVM's regulariser "
         "is regularization= (lambda)"),
        ("max_iterations", 100, "The maximum number of passes; the run "
         "stops earlier when its duality gap is below gap_tolerance"),
        ("epsilon", 0.0, "AROW's stopping rule (the mean loss); " + _STOP),
    ],
}

# Parameters with no chaintag counterpart: only their default is accepted.
# name -> what to use instead.
INTERNALS = {  # for every algorithm but those REAL lists
    "epsilon": "use gap_tolerance: " + _STOP,
    "period": "use gap_tolerance: " + _STOP,
    "delta": "use gap_tolerance: " + _STOP,
    "linesearch": "chaintag's lbfgs backtracks (Armijo's condition)",
    "calibration.eta": "sag's step is solver.sag.learning_rate (overrides=)",
    "calibration.rate": "sag's step is solver.sag.learning_rate (overrides=)",
    "calibration.samples":
        "sag's step is solver.sag.learning_rate (overrides=)",
    "calibration.candidates":
        "sag's step is solver.sag.learning_rate (overrides=)",
    "calibration.max_trials":
        "sag's step is solver.sag.learning_rate (overrides=)",
    "type": "chaintag's structured SVM is PA type I (type=1)",
    "error_sensitive": "chaintag's structured SVM counts wrong labels "
                       "(the Hamming loss)",
    "variance": "use regularization= (lambda)",
    "gamma": "use regularization= (lambda)",
}

# Parameters an algorithm maps onto a chaintag setting although another
# algorithm's same name is an internal.
REAL = {"lbfgs": {"epsilon", "period", "delta"}}


def is_internal(algorithm, name):
    return name in INTERNALS and name not in REAL.get(algorithm, ())


# chaintag's own parameters (beside CRFsuite's), with their help.
CHAINTAG_PARAMETERS = {
    "regularization": "lambda itself (instead of c2 or c)",
    "solver": "the solver: lbfgs (lbfgs's default), sag (l2sgd's default), "
              "svrg or casimir_svrg for the CRF; "
              "bcfw (default) or any other chaintag solver for the "
              "structured SVM (docs/solvers.md)",
    "order": "1 or 2: a first- or second-order chain",
    "num_threads": "training threads (results are the same for any count)",
    "seed": "the solver's seed",
    "num_buckets": "hashed attribute buckets (default: none, every "
                   "attribute its own weights)",
    "gap_tolerance": "stop when the duality gap (absolute, in the "
                     "objective's units) is below it (default 0.01)",
    "keep_feature_names": "keep attribute names in the model (default True)",
    "overrides": "{dotted.config.path: value}, as `train --set`",
}


def canonical_algorithm(algorithm):
    """CRFsuite's canonical name of `algorithm` (None: lbfgs, its default);
    ValueError naming the choices for any other."""
    if algorithm is None:
        return "lbfgs"
    name = ALGORITHM_NAMES.get(str(algorithm).lower())
    if name is None:
        raise ValueError(
            "unknown algorithm %r; CRFsuite's are %s (docs/python.md says "
            "what each trains in chaintag)"
            % (algorithm, ", ".join(sorted(ALGORITHM_NAMES))))
    return name


def defaults(algorithm):
    """{name: CRFsuite's default} of the algorithm's parameters."""
    return {name: value for name, value, _ in PARAMETERS[algorithm]}


def help_text(algorithm, name):
    for parameter, default, text in PARAMETERS[algorithm]:
        if parameter == name:
            if is_internal(algorithm, name):
                text += (" (accepted at CRFsuite's default %r only, with no "
                         "effect in chaintag)" % (default,))
            return text
    if name in CHAINTAG_PARAMETERS:
        return "chaintag's: " + CHAINTAG_PARAMETERS[name]
    raise ValueError("%r is not a parameter of %s; its parameters are %s"
                     % (name, algorithm,
                        ", ".join(defaults(algorithm))))


def flag(value):
    """A CRFsuite boolean parameter given as a bool, a number or a string
    ("1", "true", "0", "false", as pycrfsuite's set() passes them)."""
    if isinstance(value, (bytes, str)):
        text = value.decode() if isinstance(value, bytes) else value
        return text.strip().lower() in ("1", "true", "yes")
    return bool(value)


def typed(value, default):
    """A checked parameter's value in the type of CRFsuite's default, as
    python-crfsuite's get() returns it after set() took a string."""
    if isinstance(default, bool):
        return flag(value)
    text = value.decode() if isinstance(value, bytes) else value
    if isinstance(default, (int, float)):
        number = float(text)
        return int(number) if isinstance(default, int) else number
    return text


def _same(value, default):
    if isinstance(default, bool):
        return bool(value) == default
    if isinstance(default, str):
        return value == default
    try:
        return float(value) == float(default)
    except (TypeError, ValueError):
        return False


def _check_number(name, value, default):
    """ValueError naming `name` when a numeric parameter's value is not a
    finite number (a whole one where CRFsuite's is an integer), as it is
    set rather than when the run starts."""
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        return
    text = value.decode() if isinstance(value, bytes) else value
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise ValueError("%s must be a number, got %r" % (name, value))
    if not math.isfinite(number):
        raise ValueError("%s must be a finite number, got %r" % (name, value))
    if isinstance(default, int) and number != int(number):
        raise ValueError("%s must be a whole number, got %r" % (name, value))


def check_parameters(algorithm, params):
    """ValueError for a parameter the algorithm lacks, and for an internal
    set to a value other than CRFsuite's default (with what to use)."""
    known = defaults(algorithm)
    for name, value in params.items():
        if name not in known:
            raise ValueError(
                "%r is not a parameter of %s; its parameters are %s"
                % (name, algorithm, ", ".join(known)))
        _check_number(name, value, known[name])
        if is_internal(algorithm, name) and not _same(value, known[name]):
            raise ValueError(
                "%s=%r has no chaintag counterpart (%s); only its default "
                "%r is accepted" % (name, value, INTERNALS[name], known[name]))


# The solvers of each loss (docs/solvers.md).
CRF_SOLVERS = ("lbfgs", "sag", "svrg", "casimir_svrg")
SVM_SOLVERS = ("bcfw", "active_set_bcfw", "fw", "ssg", "mp_bcfw", "svrg",
               "casimir_svrg")


def run_settings(algorithm, params, options, num_sequences):
    """config_text's arguments for CRFsuite's `algorithm` with CRFsuite's
    `params` (those set; the rest take CRFsuite's defaults) and chaintag's
    `options` (regularization, solver, ...; None = default)."""
    algorithm = canonical_algorithm(algorithm)
    check_parameters(algorithm, params)
    values = defaults(algorithm)
    values.update(params)
    n = num_sequences
    loss = LOSS[algorithm]
    regularization = options.get("regularization")
    if regularization is not None and (
            "c2" in params or "c" in params):
        raise ValueError(
            "give %s (CRFsuite's coefficient, converted to lambda) or "
            "regularization (lambda itself), not both"
            % ("c2" if "c2" in params else "c"))
    if regularization is not None:
        lam = float(regularization)
    elif algorithm == "pa":
        c = float(values["c"])
        if not c > 0:
            raise ValueError("c must be positive, got %r" % (values["c"],))
        lam = 1.0 / (c * n)
    else:
        lam = 2.0 * float(values.get("c2", DEFAULT_C2)) / n
    if not lam > 0 or math.isinf(lam):
        given = ("regularization=%r" % (regularization,)
                 if regularization is not None else
                 "c=%r" % (values["c"],) if algorithm == "pa" else
                 "c2=%r" % (values.get("c2", DEFAULT_C2),))
        raise ValueError(
            "%s: chaintag needs a positive, finite L2 term (its solvers "
            "certify the optimum by a duality gap, which an L2 term bounds); "
            "for a sparse model keep c1 and give a small c2 such as 1e-4, "
            "which changes the model little (lambda = %r here)"
            % (given, lam))
    l1 = float(values.get("c1", 0.0)) / n
    if l1 < 0 or math.isinf(l1):
        raise ValueError("c1 must be >= 0 and finite, got %r"
                         % (values["c1"],))
    solver = options.get("solver")
    if solver is not None and solver not in CRF_SOLVERS + SVM_SOLVERS:
        raise ValueError("unknown solver %r; the CRF's are %s, the structured "
                         "SVM's %s" % (solver, ", ".join(CRF_SOLVERS),
                                       ", ".join(SVM_SOLVERS)))
    if loss == CRF:
        solver = solver or ("lbfgs" if algorithm == "lbfgs" else "sag")
        if solver not in CRF_SOLVERS:
            raise ValueError(
                "solver=%r trains the structured SVM (hinge); %s trains the "
                "CRF with lbfgs, sag, svrg or casimir_svrg (or choose "
                "algorithm='pa' for the structured SVM)" % (solver, algorithm))
    else:
        solver = solver or "bcfw"
    for name, low in (("order", 1), ("seed", 0), ("num_buckets", 1)):
        value = options.get(name)
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, numbers.Integral) or
                                  value < low):
            raise ValueError("%s must be an integer >= %d, got %r"
                             % (name, low, value))
    if options.get("order") not in (None, 1, 2):
        raise ValueError("order must be 1 or 2, got %r" % (options["order"],))
    return dict(
        lam=lam, l1=l1, loss=loss, solver=solver,
        states=states_of(params),
        max_passes=values["max_iterations"],
        min_freq=values["feature.minfreq"],
        averaging=values.get("averaging", True) is not False,
        order=options.get("order") or 1,
        num_threads=(1 if options.get("num_threads") is None
                     else options["num_threads"]),
        seed=1 if options.get("seed") is None else options["seed"],
        num_buckets=options.get("num_buckets"),
        gap_tolerance=options.get("gap_tolerance"),
        keep_feature_names=options.get("keep_feature_names", True)
        is not False,
        lbfgs={"num_memories": int(values.get("num_memories", 6)),
               "max_linesearch": int(values.get("max_linesearch", 20)),
               "period": int(values.get("period", 10)),
               "delta": float(values.get("delta", 1e-5)),
               "epsilon": float(values.get("epsilon", 1e-5))})


def states_of(params):
    """model.states for CRFsuite's feature.possible_states: False (as
    CRFsuite's default) restricts each attribute to its seen labels, with
    any solver; True weighs every label; None leaves the pipeline's
    default, which for lbfgs is every label below 100 labels and the seen
    ones from 100 up (STATES_AUTO), where every label's rows would hold
    rows x L weights in each of L-BFGS's vectors, and for the other
    solvers every label."""
    if "feature.possible_states" not in params:
        return None
    if flag(params["feature.possible_states"]):
        return "ALL_STATES"
    return "OBSERVED_STATES"


def gap_check_passes(passes):
    """Passes between duality-gap checks of the structured SVM: every 10, or
    a quarter of the run when longer (a check costs a pass; at
    max_iterations=100 checking every 25 instead of 10 saves 3-10% of fit,
    the same model). sag checks every pass: its check also refreshes its
    stored gradients, which speeds the next pass up."""
    return min(passes, max(10, passes // 4))


def config_text(lam, max_passes=None, min_freq=None, solver="bcfw", order=1,
                num_threads=1, seed=1, num_buckets=None, gap_tolerance=None,
                keep_feature_names=True, evaluate_dev=False, loss=HINGE,
                l1=0.0, averaging=True, lbfgs=None, states=None):
    """The PipelineConfig text of a run on item sequences. No bias feature:
    CRFsuite has none, and the attributes are then exactly the items'."""
    min_count = 0
    if min_freq is not None and min_freq > 0:
        min_count = int(math.ceil(min_freq))
    passes = DEFAULT_PASSES if max_passes is None else int(max_passes)
    if passes < 1:
        raise ValueError("max_iterations must be >= 1, got %r" % (passes,))
    tolerance = (DEFAULT_GAP_TOLERANCE if gap_tolerance is None
                 else float(gap_tolerance))
    crf = loss == CRF
    solver_fields = [
        'name: "%s"' % solver, "lambda: %r" % lam, "max_passes: %d" % passes,
        "gap_tolerance: %r" % tolerance,
        "gap_check: %d" % (1 if crf else gap_check_passes(passes)),
        "seed: %d" % int(seed), "num_threads: %d" % int(num_threads)]
    if crf and solver == "sag":
        solver_fields.append("minibatch: 8")  # the pipeline's CRF default
    if solver == "lbfgs" and lbfgs:
        # L-BFGS's own parameters (solver.lbfgs; the solver checks them).
        solver_fields.append("lbfgs { %s }" % " ".join(
            "%s: %r" % (name, lbfgs[name]) for name in sorted(lbfgs)))
    if l1:
        solver_fields.append("l1: %r" % l1)
    if not averaging:
        solver_fields.append("weighted_averaging: false")
    return "\n".join([
        'name: "items"',
        "corpus { format { layout: CRFSUITE tag_scheme: NONE } }",
        "features { %s hash_seed: 0 bias: false min_feature_count: %d }"
        % ("num_buckets: %d" % num_buckets if num_buckets else "exact: true",
           min_count),
        "model { order: %d train_scheme: NONE normalize_loss: false "
        "keep_feature_names: %s%s%s }"
        % (int(order), "true" if keep_feature_names else "false",
           " loss: LOG" if crf else "",
           " states: %s" % states if states else ""),
        "solver { %s }" % " ".join(solver_fields),
        "eval_every: %d" % (1 if evaluate_dev else 0),
    ])
