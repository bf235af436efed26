#include "fuzz/solver_setups.h"

#include <string>
#include <vector>

namespace chaintag {
namespace fuzzing {

MulticlassProblem SolverSetupProblem() {
  constexpr int kExamples = 12, kFeatures = 3, kClasses = 3;
  std::vector<std::vector<double>> inputs(kExamples,
                                          std::vector<double>(kFeatures));
  std::vector<int> gold(kExamples);
  for (int i = 0; i < kExamples; ++i) {
    for (int j = 0; j < kFeatures; ++j) {
      // Deterministic, varied, no RNG: ((7i + 3j) mod 11) scaled to [-1, 1].
      inputs[i][j] = ((7 * i + 3 * j) % 11) / 5.0 - 1.0;
    }
    gold[i] = i % kClasses;
  }
  return MulticlassProblem(inputs, gold, kClasses);
}

std::vector<SolverConfig> SolverSetupConfigs() {
  std::vector<SolverConfig> configs;
  auto add = [&configs](const std::string& name) -> SolverConfig& {
    configs.emplace_back();
    SolverConfig& c = configs.back();
    c.set_name(name);
    c.set_lambda(0.05);
    c.set_gap_check(2);
    c.set_max_passes(6);
    c.set_gap_tolerance(1e-12);
    c.set_num_threads(1);  // no thread start-up in every fuzzed run
    return c;
  };
  add("bcfw");
  SolverConfig& gap = add("bcfw");
  gap.set_sampling(SolverConfig::GAP);
  gap.set_weighted_averaging(false);
  gap.mutable_bcfw()->set_step(SolverConfig::PAIRWISE);
  gap.mutable_bcfw()->set_cache(true);
  gap.mutable_bcfw()->set_max_cache_size(3);
  SolverConfig& best = add("bcfw");
  best.set_sampling(SolverConfig::PERMUTATION);
  best.mutable_bcfw()->set_step(SolverConfig::BEST);
  SolverConfig& box = add("bcfw");
  SolverConfig::Box* range = box.mutable_bcfw()->add_box();
  range->set_begin(3);
  range->set_end(9);
  range->set_lower(0);
  SolverConfig& rounds = add("bcfw");
  rounds.set_minibatch(4);
  add("active_set_bcfw").mutable_bcfw()->set_cache(true);
  add("mp_bcfw").mutable_mp_bcfw()->set_max_approx_passes(2);
  add("fw");
  add("ssg");
  add("svrg").mutable_svrg()->set_learning_rate(0.05);
  SolverConfig& casimir = add("casimir_svrg");
  casimir.mutable_svrg()->set_learning_rate(0.05);
  casimir.mutable_casimir()->set_variant(SolverConfig::CASIMIR_ADAPT);
  casimir.mutable_casimir()->set_warm_start(SolverConfig::EXTRAPOLATION);
  return configs;
}

}  // namespace fuzzing
}  // namespace chaintag
