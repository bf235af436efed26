// The bcfw option grid (sampling × step × cache × averaging) and
// active_set_bcfw on small multiclass SVMs: every combination must reach the
// same certified optimum, keep its dual bookkeeping exact, and line-search
// exactly.

#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "solvers/bcfw.h"
#include "solvers/duality_gap.h"
#include "solvers/multiclass_problem_testing.h"
#include "solvers/registry.h"
#include "solvers/solver_testing.h"

namespace chaintag {
namespace {

struct Variant {
  std::string name = "bcfw";
  SolverConfig::Sampling sampling = SolverConfig::UNIFORM;
  SolverConfig::Step step = SolverConfig::FW;
  bool cache = false;
  bool averaging = false;

  std::string Label() const {
    return absl::StrCat(name, " sampling=", sampling, " step=", step,
                        " cache=", cache, " averaging=", averaging);
  }
  SolverConfig Config() const {
    SolverConfig config;
    config.set_name(name);
    config.set_sampling(sampling);
    config.mutable_bcfw()->set_step(step);
    config.mutable_bcfw()->set_cache(cache);
    config.set_weighted_averaging(averaging);
    config.set_num_threads(1);
    return config;
  }
};

std::vector<Variant> AllVariants() {
  std::vector<Variant> variants;
  for (auto sampling :
       {SolverConfig::UNIFORM, SolverConfig::PERMUTATION, SolverConfig::GAP}) {
    for (auto step : {SolverConfig::FW, SolverConfig::PAIRWISE,
                      SolverConfig::AWAY, SolverConfig::BEST}) {
      for (bool cache : {false, true}) {
        for (bool averaging : {false, true}) {
          Variant v;
          v.sampling = sampling;
          v.step = step;
          v.cache = cache;
          v.averaging = averaging;
          variants.push_back(v);
        }
      }
    }
    for (bool cache : {false, true}) {
      Variant v;
      v.name = "active_set_bcfw";
      v.sampling = sampling;
      v.cache = cache;
      variants.push_back(v);
    }
  }
  return variants;
}

// The dual iterate's bookkeeping after a run: w = Σ_i w_i, α on the simplex,
// v_i = Σ α ψ and ℓ_i = Σ α L/n.
void ExpectExactBookkeeping(const BcfwInvariants& invariants,
                            const std::string& label) {
  EXPECT_LT(invariants.max_weight_error, 1e-9) << label;
  EXPECT_LT(invariants.max_alpha_sum_error, 1e-12) << label;
  EXPECT_GE(invariants.min_alpha, 0) << label;
  EXPECT_LT(invariants.max_state_error, 1e-9) << label;
  EXPECT_LT(invariants.max_ell_error, 1e-11) << label;
}

// One example x = 1, two classes, gold 0 (see bcfw_test.cc): P* = λ/4 for
// λ ≤ 2, else 1 − 1/λ. With two classes the block dual is one-dimensional,
// so an exact line search reaches the optimum in one step.
TEST(BcfwVariantsTest, OneExampleOptimumInOneExactStep) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  for (const Variant& variant : AllVariants()) {
    if (variant.averaging) continue;  // w̄ mixes in the start point
    for (double lambda : {0.5, 4.0}) {
      SolverConfig config = variant.Config();
      config.set_lambda(lambda);
      config.set_max_passes(1);
      config.set_gap_check(1);
      config.set_gap_tolerance(1e-12);
      BcfwSolver solver(config);
      std::vector<double> w;
      absl::StatusOr<TrainingSummary> summary =
          solver.Solve(problem, nullptr, &w);
      ASSERT_TRUE(summary.ok()) << summary.status();
      const double primal = lambda <= 2 ? lambda / 4 : 1 - 1 / lambda;
      EXPECT_NEAR(summary->primal(), primal, 1e-12) << variant.Label();
      EXPECT_NEAR(summary->gap(), 0, 1e-12) << variant.Label();
    }
  }
}

// Every combination reaches the optimum (BCFW with best steps run to a gap
// of 1e-11) within its certified gap: ≤ 1e-9 for the linearly convergent
// active-set variants without averaging, ≤ 1e-5 for plain FW steps and for
// averaged iterates (sublinear: that is what 20,000 passes buy them here);
// and every exact gap it reports is a certificate.
TEST(BcfwVariantsTest, AllCombinationsAgreeOnTheCertifiedOptimum) {
  MulticlassProblem problem = RandomMulticlassProblem(30, 4, 3, 11);
  const double lambda = 0.05;
  SolverConfig reference_config;
  reference_config.set_lambda(lambda);
  reference_config.set_max_passes(100000);
  reference_config.set_gap_check(10);
  reference_config.set_gap_tolerance(1e-11);
  reference_config.set_weighted_averaging(false);
  reference_config.mutable_bcfw()->set_step(SolverConfig::BEST);
  std::vector<double> reference_w;
  BcfwSolver reference(reference_config);
  absl::StatusOr<TrainingSummary> best =
      reference.Solve(problem, nullptr, &reference_w);
  ASSERT_TRUE(best.ok());
  ASSERT_EQ(best->stop_reason(), "gap_tolerance");
  const double optimum = best->primal();

  for (const Variant& variant : AllVariants()) {
    SolverConfig config = variant.Config();
    config.set_lambda(lambda);
    const bool linear =
        !variant.averaging &&
        (variant.step != SolverConfig::FW || variant.name != "bcfw");
    config.set_max_passes(20000);
    config.set_gap_check(5);
    config.set_gap_tolerance(linear ? 1e-9 : 1e-5);
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    BcfwSolver solver(config);
    BcfwInvariants invariants;
    solver.set_invariants_output(&invariants);
    std::vector<double> w;
    absl::StatusOr<TrainingSummary> summary =
        solver.Solve(problem, &monitor, &w);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason(), "gap_tolerance")
        << variant.Label() << " gap " << summary->gap();
    EXPECT_NEAR(summary->primal(), optimum, config.gap_tolerance())
        << variant.Label();
    // The certificate is about the returned w, recomputed independently.
    const double primal = 0.5 * lambda * SquaredNorm(w.data(), w.size()) +
                          AverageHingeLoss(problem, w.data(), 1);
    EXPECT_NEAR(primal, summary->primal(), 1e-12) << variant.Label();
    EXPECT_LE(primal - optimum, summary->gap() + 1e-12) << variant.Label();
    {
      SCOPED_TRACE(variant.Label());
      ExpectExactGapsAreCertificates(monitor.records());
    }
    ExpectExactBookkeeping(invariants, variant.Label());
    if (variant.name == "bcfw" && variant.step == SolverConfig::FW &&
        variant.cache) {
      // The store never fills (4 classes, 50 slots): every block reads
      // ⟨v_i, w⟩ and ‖v_i − ψ_i(y)‖² from α and the stored inner products.
      EXPECT_EQ(invariants.blocks_checked, problem.NumExamples())
          << variant.Label();
      EXPECT_LT(invariants.max_distance_error, 1e-9) << variant.Label();
    }
  }
}

// FW steps with the cache read a block from its α while the store holds
// all of it; a full store that evicts a corner with α > 0 sends the block
// back to its state (until a full step). Either way the bookkeeping stays
// exact, and the two readings of ‖v_i − ψ_i(y)‖² agree.
TEST(BcfwVariantsTest, FwCacheReadsBlocksFromAlphaOnlyWhileComplete) {
  MulticlassProblem problem = RandomMulticlassProblem(40, 3, 6, 5);
  for (int max_cache_size : {50, 2, -50}) {
    // Negative: the same with offset states (a gold state that is not 0).
    problem.set_offset_states(max_cache_size < 0);
    max_cache_size = std::abs(max_cache_size);
    SolverConfig config;
    config.set_lambda(0.01);
    config.mutable_bcfw()->set_step(SolverConfig::FW);
    config.mutable_bcfw()->set_cache(true);
    config.mutable_bcfw()->set_max_cache_size(max_cache_size);
    config.set_weighted_averaging(false);
    config.set_max_passes(200);
    config.set_gap_check(1000);
    config.set_final_gap(false);
    config.set_gap_tolerance(0);
    BcfwSolver solver(config);
    BcfwInvariants invariants;
    solver.set_invariants_output(&invariants);
    std::vector<double> w;
    ASSERT_TRUE(solver.Solve(problem, nullptr, &w).ok());
    const std::string label = absl::StrCat("max_cache_size ", max_cache_size);
    ExpectExactBookkeeping(invariants, label);
    EXPECT_LT(invariants.max_distance_error, 1e-9) << label;
    if (max_cache_size == 50) {
      EXPECT_EQ(invariants.blocks_checked, problem.NumExamples()) << label;
    } else {
      // Six classes through two slots: some blocks lost α to eviction.
      EXPECT_LT(invariants.blocks_checked, problem.NumExamples()) << label;
    }
  }
}

// Thousands of steps with many drop steps: α stays on the simplex, and
// w = Σ_i w_i, v_i = Σ α ψ, ℓ_i = Σ α L/n hold to 1e-9.
TEST(BcfwVariantsTest, BookkeepingStaysExactOverThousandsOfSteps) {
  MulticlassProblem problem = RandomMulticlassProblem(40, 3, 6, 5);
  for (auto step :
       {SolverConfig::PAIRWISE, SolverConfig::AWAY, SolverConfig::BEST}) {
    for (int cache_and_offset = 0; cache_and_offset < 4; ++cache_and_offset) {
      const bool cache = cache_and_offset % 2 == 1;
      problem.set_offset_states(cache_and_offset >= 2);
      SolverConfig config;
      config.set_lambda(0.01);
      config.mutable_bcfw()->set_step(step);
      config.mutable_bcfw()->set_cache(cache);
      config.mutable_bcfw()->set_max_cache_size(
          3);  // forces evictions and growth
      config.set_weighted_averaging(false);
      config.set_max_passes(300);  // 12,000 steps
      config.set_gap_check(1000);
      config.set_final_gap(false);
      config.set_gap_tolerance(0);
      BcfwSolver solver(config);
      BcfwInvariants invariants;
      solver.set_invariants_output(&invariants);
      std::vector<double> w;
      ASSERT_TRUE(solver.Solve(problem, nullptr, &w).ok());
      ExpectExactBookkeeping(
          invariants, absl::StrCat("step ", step, " cache ", cache, " offset ",
                                   cache_and_offset >= 2));
    }
  }
}

// The block dual along each step's direction is a concave quadratic; the
// dual after one step must equal the best value on a fine grid of step
// sizes (brute force), for FW (γ ∈ [0, 1]). One example, three classes.
TEST(BcfwVariantsTest, FirstStepIsTheExactLineSearchOptimum) {
  MulticlassProblem problem({{1.0, -0.5}}, {1}, 3);
  const double lambda = 0.3;
  SolverConfig config;
  config.set_lambda(lambda);
  config.set_max_passes(1);
  config.set_gap_check(1000);
  config.set_final_gap(false);
  config.set_weighted_averaging(false);
  Monitor monitor;
  monitor.set_progress_stream(nullptr);
  BcfwSolver solver(config);
  std::vector<double> w;
  ASSERT_TRUE(solver.Solve(problem, &monitor, &w).ok());
  // From w = 0, the FW corner is the first class of largest loss (class 0).
  OracleResult oracle;
  std::vector<double> zero(problem.Dim(), 0.0);
  problem.MaxOracle(0, zero.data(), &oracle);
  const std::vector<double> psi = problem.Psi(0, oracle.corner[0]);
  double best = -1e300;
  for (int k = 0; k <= 100000; ++k) {
    const double gamma = k / 100000.0;
    double norm = 0;
    for (double x : psi) norm += (gamma * x / lambda) * (gamma * x / lambda);
    best = std::max(best, gamma * oracle.loss - 0.5 * lambda * norm);
  }
  ASSERT_EQ(monitor.records().size(), 1u);
  EXPECT_NEAR(monitor.records()[0].dual(), best, 1e-9);
  EXPECT_GE(monitor.records()[0].dual(), best - 1e-15);
}

TEST(BcfwVariantsTest, CacheSavesOracleCallsAndGapSamplingIsDeterministic) {
  MulticlassProblem problem = RandomMulticlassProblem(50, 4, 4, 9);
  SolverConfig config;
  config.set_lambda(0.01);
  config.set_sampling(SolverConfig::GAP);
  config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  config.set_weighted_averaging(false);
  config.set_max_passes(60);
  config.set_gap_check(10);
  config.set_gap_tolerance(0);
  auto run = [&](bool cache, std::vector<double>* w) {
    SolverConfig c = config;
    c.mutable_bcfw()->set_cache(cache);
    Monitor monitor;
    monitor.set_progress_stream(nullptr);
    BcfwSolver solver(c);
    absl::StatusOr<TrainingSummary> summary =
        solver.Solve(problem, &monitor, w);
    EXPECT_TRUE(summary.ok());
    double hit_rate = 0;
    for (const PassRecord& r : monitor.records())
      hit_rate += r.cache_hit_rate();
    return std::make_pair(*summary, hit_rate);
  };
  std::vector<double> w1, w2, w3;
  auto [with_cache, hits] = run(true, &w1);
  auto [without_cache, no_hits] = run(false, &w2);
  auto [again, hits_again] = run(true, &w3);
  EXPECT_GT(hits, 0);
  EXPECT_EQ(no_hits, 0);
  EXPECT_LT(with_cache.oracle_calls(), without_cache.oracle_calls());
  EXPECT_EQ(w1, w3);  // same seed, same iterates
  EXPECT_EQ(with_cache.oracle_calls(), again.oracle_calls());
}

TEST(BcfwVariantsTest, RejectsStepsWithoutLineSearch) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  SolverConfig config;
  config.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  config.set_line_search(false);
  BcfwSolver solver(config);
  std::vector<double> w;
  absl::StatusOr<TrainingSummary> summary = solver.Solve(problem, nullptr, &w);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("line_search"), std::string::npos);
}

}  // namespace
}  // namespace chaintag

namespace chaintag {
namespace {

// Box constraints (App. H), by hand: one example x = 1, two classes, gold 0,
// λ = 0.5, and w_0 ≤ 0.2. P(w) = λ/2(w_0² + w_1²) + max(0, 1 − w_0 + w_1):
// w_0 sits on its bound, and w_1 = -0.8 puts the hinge at its kink (the
// subgradient λw_1 + s = 0 needs s = 0.4 ∈ [0, 1]); P* = 0.25·0.68 = 0.17.
TEST(BcfwBoxTest, HandComputedBoxedOptimum) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  for (auto step :
       {SolverConfig::FW, SolverConfig::PAIRWISE, SolverConfig::BEST}) {
    for (bool averaging : {false, true}) {
      SolverConfig config;
      config.set_lambda(0.5);
      config.mutable_bcfw()->set_step(step);
      config.set_weighted_averaging(averaging);
      config.set_max_passes(200000);
      config.set_gap_check(10);
      config.set_gap_tolerance(1e-7);
      SolverConfig::Box* box = config.mutable_bcfw()->add_box();
      box->set_begin(0);
      box->set_end(1);
      box->set_upper(0.2);
      Monitor monitor;
      monitor.set_progress_stream(nullptr);
      BcfwSolver solver(config);
      std::vector<double> w;
      absl::StatusOr<TrainingSummary> summary =
          solver.Solve(problem, &monitor, &w);
      ASSERT_TRUE(summary.ok()) << summary.status();
      EXPECT_EQ(summary->stop_reason(), "gap_tolerance") << step;
      EXPECT_LE(w[0], 0.2);
      EXPECT_NEAR(w[0], 0.2, 1e-12);
      EXPECT_NEAR(w[1], -0.8, 1e-3);
      EXPECT_NEAR(summary->primal(), 0.17, 1e-7);
      EXPECT_LE(summary->primal() - 0.17, summary->gap() + 1e-12);
      EXPECT_GE(summary->dual(), 0.17 - 1e-7 - 1e-12);
      for (const PassRecord& record : monitor.records()) {
        if (!record.gap_exact()) continue;
        // A lower bound on P* = 0.17 at every check: the dual is valid.
        EXPECT_LE(record.dual(), 0.17 + 1e-12);
        EXPECT_GE(record.primal(), 0.17 - 1e-12);
      }
    }
  }
}

// Non-negative weights on a random problem: every variant returns a
// feasible w, and they agree on the boxed optimum within their gaps.
TEST(BcfwBoxTest, VariantsAgreeOnARandomBoxedProblem) {
  MulticlassProblem problem = RandomMulticlassProblem(20, 3, 3, 21);
  std::vector<double> primal;
  for (auto step : {SolverConfig::FW, SolverConfig::PAIRWISE,
                    SolverConfig::AWAY, SolverConfig::BEST}) {
    SolverConfig config;
    config.set_lambda(0.1);
    config.mutable_bcfw()->set_step(step);
    config.set_weighted_averaging(false);
    config.set_max_passes(50000);
    config.set_gap_check(10);
    config.set_gap_tolerance(1e-7);
    SolverConfig::Box* box = config.mutable_bcfw()->add_box();
    box->set_begin(0);
    box->set_end(problem.Dim());
    box->set_lower(0);
    BcfwSolver solver(config);
    std::vector<double> w;
    absl::StatusOr<TrainingSummary> summary =
        solver.Solve(problem, nullptr, &w);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->stop_reason(), "gap_tolerance") << step;
    for (double x : w) EXPECT_GE(x, 0);
    EXPECT_NEAR(0.05 * SquaredNorm(w.data(), w.size()) +
                    AverageHingeLoss(problem, w.data(), 1),
                summary->primal(), 1e-12);
    primal.push_back(summary->primal());
  }
  for (double p : primal) EXPECT_NEAR(p, primal[0], 2e-7);
}

TEST(BcfwBoxTest, RejectsBadBoxes) {
  MulticlassProblem problem({{1.0}}, {0}, 2);
  for (auto [begin, end, lower, upper] :
       std::vector<std::tuple<int, int, double, double>>{
           {0, 3, 0, 1}, {1, 1, 0, 1}, {0, 1, 1, 0}}) {
    SolverConfig config;
    SolverConfig::Box* box = config.mutable_bcfw()->add_box();
    box->set_begin(begin);
    box->set_end(end);
    box->set_lower(lower);
    box->set_upper(upper);
    BcfwSolver solver(config);
    std::vector<double> w;
    EXPECT_FALSE(solver.Solve(problem, nullptr, &w).ok());
  }
  SolverConfig config;
  config.set_name("ssg");
  config.mutable_bcfw()->add_box()->set_end(1);
  EXPECT_FALSE(CreateSolver(config).ok());
}

}  // namespace
}  // namespace chaintag
