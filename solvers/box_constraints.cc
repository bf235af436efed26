#include "solvers/box_constraints.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace chaintag {

absl::Status BoxConstraints::Initialize(const SolverConfig& config, int64_t dim,
                                        double* w) {
  std::vector<char> boxed(config.bcfw().box_size() > 0 ? dim : 0, 0);
  for (const SolverConfig::Box& box : config.bcfw().box()) {
    if (box.begin() < 0 || box.end() > dim || box.begin() >= box.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.name(), ": box [", box.begin(), ", ", box.end(),
                       ") is empty or outside [0, ", dim, ")"));
    }
    if (!(box.lower() <= box.upper())) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.name(), ": box lower bound ", box.lower(),
                       " exceeds its upper bound ", box.upper()));
    }
    for (int64_t j = box.begin(); j < box.end(); ++j) {
      if (boxed[j]) {
        return absl::InvalidArgumentError(
            absl::StrCat(config.name(), ": boxes overlap at coordinate ", j));
      }
      boxed[j] = 1;
      index_.push_back(j);
      lower_.push_back(box.lower());
      upper_.push_back(box.upper());
      v_.push_back(0);
      w[j] = std::clamp(0.0, box.lower(), box.upper());
    }
  }
  return absl::OkStatus();
}

void BoxConstraints::Untruncate(double* w) const {
  for (size_t k = 0; k < index_.size(); ++k) w[index_[k]] = v_[k];
}

void BoxConstraints::Truncate(double* w) {
  for (size_t k = 0; k < index_.size(); ++k) {
    double& x = w[index_[k]];
    v_[k] = x;
    x = std::clamp(x, lower_[k], upper_[k]);
  }
}

void BoxConstraints::ClearAverage() { v_average_.assign(index_.size(), 0.0); }

void BoxConstraints::TruncateAverage(double* average) {
  for (size_t k = 0; k < index_.size(); ++k) {
    double& x = average[index_[k]];
    v_average_[k] = x;
    x = std::clamp(x, lower_[k], upper_[k]);
  }
}

double BoxConstraints::Term(double lambda, bool averaged) const {
  double sum = 0;
  for (size_t k = 0; k < index_.size(); ++k) {
    const double v = averaged ? v_average_[k] : v_[k];
    const double w = std::clamp(v, lower_[k], upper_[k]);
    sum += (v - w) * w;
  }
  return lambda * sum;
}

}  // namespace chaintag
