// BcfwRun's state as a whole: every array a later pass reads, saved to and
// loaded from a checkpoint (pass_driver.h; a resumed run continues to the
// bit), and the check that the dual state is consistent (CheckInvariants:
// w against the block states, the states and ℓ_i against the corners' α).
//
// Thread-safety: BcfwRun's, one thread at a time.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "solvers/bcfw_internal.h"
#include "solvers/bcfw_run.h"
#include "solvers/checkpoint.h"

namespace chaintag {

using bcfw_internal::kInfinity;

// Everything a later pass reads: the iterate, the block states, averaging,
// block gaps and the sampler, the corners, the counters. (w̄ is formed again
// from the sums when read.)
absl::Status BcfwRun::SaveState(CheckpointWriter* writer) const {
  writer->Reals("w", w_);
  writer->Real("ell", ell_);
  writer->Reals("ell_block", ell_block_);
  writer->Reals("states", states_);
  writer->Reals("average_state_sums", block_average_.sums());
  writer->Integers("averaged_through", block_average_.averaged_through());
  writer->Real("ell_accumulator", block_average_.ell_accumulator());
  writer->Integer("steps", steps_);
  writer->Real("lambda", lambda_);
  writer->Reals("block_gap", block_gap_);
  writer->Integer("num_unvisited", num_unvisited_);
  writer->Integer("next_unvisited", next_unvisited_);
  writer->Real("cache_global_gap", cache_global_gap_);
  writer->Integer("oracle_calls", oracle_calls_);
  writer->Reals("state_dots", state_dots_);
  writer->Integer("state_dots_steps", state_dots_steps_);
  writer->Integer("exact_gaps_steps", exact_gaps_steps_);
  writer->Reals("visit_state_dots", visit_state_dots_);
  writer->Reals("box_v", boxes_.v());
  writer->Integer("refresh_block_gaps", refresh_block_gaps_ ? 1 : 0);
  writer->Random("random", random_);
  if (keep_corners_) SaveCorners(writer);
  return absl::OkStatus();
}

// Per block its corner count; per corner its labels, loss, α and (dots
// kept) its dots row; with FW steps and the cache, which blocks' α are
// complete.
void BcfwRun::SaveCorners(CheckpointWriter* writer) const {
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, alphas, dots;
  for (const CornerStore& store : corners_) {
    counts.push_back(store.size());
    for (const StoredCorner& entry : store.entries()) {
      labels.insert(labels.end(), entry.corner.begin(), entry.corner.end());
      losses.push_back(entry.loss);
      alphas.push_back(entry.alpha);
      dots.insert(dots.end(), entry.dots.begin(), entry.dots.end());
    }
  }
  writer->Integers("corner_counts", counts);
  writer->Integers("corner_labels", labels);
  writer->Reals("corner_losses", losses);
  writer->Reals("corner_alphas", alphas);
  if (!alpha_complete_.empty()) {
    writer->Integers("alpha_complete", alpha_complete_);
  }
  writer->Reals("corner_dots", dots);
}

absl::Status BcfwRun::LoadState(const CheckpointReader& reader) {
  const int64_t n = n_;
  absl::Status status = reader.Reals("w", dim_, &w_);
  auto next = [&status](absl::Status read) {
    if (status.ok()) status = std::move(read);
  };
  next(reader.Real("ell", &ell_));
  next(reader.Reals("ell_block", n, &ell_block_));
  next(reader.Reals("states", static_cast<int64_t>(states_.size()), &states_));
  next(reader.Reals("average_state_sums",
                    static_cast<int64_t>(block_average_.sums().size()),
                    block_average_.mutable_sums()));
  next(reader.Integers(
      "averaged_through",
      static_cast<int64_t>(block_average_.averaged_through().size()),
      block_average_.mutable_averaged_through()));
  next(
      reader.Real("ell_accumulator", block_average_.mutable_ell_accumulator()));
  next(reader.Integer("steps", &steps_));
  next(reader.Real("lambda", &lambda_));
  next(reader.Reals("block_gap", n, &block_gap_));
  next(reader.Integer("num_unvisited", &num_unvisited_));
  next(reader.Integer("next_unvisited", &next_unvisited_));
  next(reader.Real("cache_global_gap", &cache_global_gap_));
  next(reader.Integer("oracle_calls", &oracle_calls_));
  next(reader.Reals("state_dots", -1, &state_dots_));
  next(reader.Integer("state_dots_steps", &state_dots_steps_));
  next(reader.Integer("exact_gaps_steps", &exact_gaps_steps_));
  next(reader.Reals("visit_state_dots", n, &visit_state_dots_));
  next(reader.Reals("box_v", static_cast<int64_t>(boxes_.v().size()),
                    boxes_.mutable_v()));
  int refresh = 0;
  next(reader.Integer("refresh_block_gaps", &refresh));
  next(reader.Random("random", &random_));
  if (status.ok() && keep_corners_) status = LoadCorners(reader);
  if (!status.ok()) return status;
  refresh_block_gaps_ = refresh != 0;
  average_steps_ = -1;
  if (gap_sampling_) {
    for (int i = 0; i < n_; ++i) {
      if (block_gap_[i] != kInfinity) gap_tree_.Set(i, block_gap_[i]);
    }
  }
  return absl::OkStatus();
}

absl::Status BcfwRun::LoadCorners(const CheckpointReader& reader) {
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, alphas, dots;
  absl::Status status = reader.Integers("corner_counts", n_, &counts);
  if (status.ok()) status = reader.Integers("corner_labels", -1, &labels);
  if (status.ok()) status = reader.Reals("corner_losses", -1, &losses);
  if (status.ok()) status = reader.Reals("corner_alphas", -1, &alphas);
  if (status.ok()) status = reader.Reals("corner_dots", -1, &dots);
  if (!status.ok()) return status;
  size_t entry = 0, label = 0, dot = 0;
  for (int i = 0; i < n_; ++i) {
    CornerStore& store = corners_[i];
    store = CornerStore();
    const size_t length = problem_.GoldCorner(i).size();
    for (int64_t k = 0; k < counts[i]; ++k, ++entry) {
      if (entry >= losses.size() || entry >= alphas.size() ||
          label + length > labels.size()) {
        return absl::DataLossError("checkpoint's corners are truncated");
      }
      const Corner corner(labels.begin() + label,
                          labels.begin() + label + length);
      if (!problem_.IsCorner(i, corner)) {
        return absl::DataLossError(absl::StrCat("checkpoint's corner ", k,
                                                " of block ", i,
                                                " is no labeling of it"));
      }
      label += length;
      if (keep_dots_ && dots.empty()) {
        // A checkpoint written before FW steps with the cache kept dots.
        const std::vector<double> corner_dots = CornerDots(i, corner);
        store.Add(corner, losses[entry], alphas[entry], &corner_dots);
        continue;
      }
      store.Add(corner, losses[entry], alphas[entry]);
      if (!keep_dots_) continue;
      const size_t row = static_cast<size_t>(counts[i]);
      if (dot + row > dots.size()) {
        return absl::DataLossError("checkpoint's corner dots are truncated");
      }
      store.entry(static_cast<int>(k))
          .dots.assign(dots.begin() + dot, dots.begin() + dot + row);
      dot += row;
    }
  }
  if (!alpha_complete_.empty()) {
    // Without the flags (an older checkpoint), every block reads its state.
    if (!reader.Has("alpha_complete")) {
      alpha_complete_.assign(n_, 0);
      return absl::OkStatus();
    }
    return reader.Integers("alpha_complete", n_, &alpha_complete_);
  }
  return absl::OkStatus();
}

void BcfwRun::CheckInvariants(BcfwInvariants* invariants) const {
  *invariants = BcfwInvariants();
  std::vector<double> v = w_;
  boxes_.Untruncate(v.data());
  invariants->max_weight_error = MaxWeightError(
      problem_, v.data(), states_.data(), state_offset_.data(), lambda_);
  if (!keep_corners_) return;
  invariants->min_alpha = 1;
  std::vector<double> state;
  for (int i = 0; i < n_; ++i) {
    if (!AlphaComplete(i)) continue;
    ++invariants->blocks_checked;
    const CornerStore& store = corners_[i];
    for (int k = 0; keep_dots_ && k < store.size(); ++k) {
      const double from_state = problem_.StateDistanceSquared(
          i, states_.data() + state_offset_[i], store.entry(k).corner);
      invariants->max_distance_error =
          std::max(invariants->max_distance_error,
                   std::abs(StateToCornerDistanceSquared(i, k) - from_state) /
                       std::max(1.0, from_state));
    }
    invariants->max_alpha_sum_error = std::max(invariants->max_alpha_sum_error,
                                               std::abs(store.AlphaSum() - 1));
    const int64_t size = state_offset_[i + 1] - state_offset_[i];
    state.assign(size, 0.0);
    double ell = 0;
    for (const StoredCorner& entry : store.entries()) {
      invariants->min_alpha = std::min(invariants->min_alpha, entry.alpha);
      problem_.AddCornerToState(i, entry.corner, entry.alpha, state.data());
      ell += entry.alpha * entry.loss / n_;
    }
    const double* actual = states_.data() + state_offset_[i];
    for (int64_t k = 0; k < size; ++k) {
      invariants->max_state_error =
          std::max(invariants->max_state_error, std::abs(actual[k] - state[k]));
    }
    invariants->max_ell_error =
        std::max(invariants->max_ell_error, std::abs(ell_block_[i] - ell));
  }
}

}  // namespace chaintag
