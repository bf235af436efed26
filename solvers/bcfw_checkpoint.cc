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

namespace {

// Per block its corner count; per corner its labels, loss, α and (dots
// kept) its dots row; with FW steps and the cache, which blocks' α are
// complete.
void SaveCorners(const BcfwShared& shared, CheckpointWriter* writer) {
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, alphas, dots;
  for (const CornerStore& store : shared.corners) {
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
  if (!shared.alpha_complete.empty()) {
    writer->Integers("alpha_complete", shared.alpha_complete);
  }
  writer->Reals("corner_dots", dots);
}

absl::Status LoadCorners(const CheckpointReader& reader,
                         const BcfwBlockSteps& steps,
                         BcfwShared* shared_pointer) {
  BcfwShared& shared = *shared_pointer;
  std::vector<int64_t> counts, labels;
  std::vector<double> losses, alphas, dots;
  absl::Status status = reader.Integers("corner_counts", shared.n, &counts);
  if (status.ok()) status = reader.Integers("corner_labels", -1, &labels);
  if (status.ok()) status = reader.Reals("corner_losses", -1, &losses);
  if (status.ok()) status = reader.Reals("corner_alphas", -1, &alphas);
  if (status.ok()) status = reader.Reals("corner_dots", -1, &dots);
  if (!status.ok()) return status;
  size_t entry = 0, label = 0, dot = 0;
  for (int i = 0; i < shared.n; ++i) {
    CornerStore& store = shared.corners[i];
    store = CornerStore();
    const size_t length = shared.problem.GoldCorner(i).size();
    for (int64_t k = 0; k < counts[i]; ++k, ++entry) {
      if (entry >= losses.size() || entry >= alphas.size() ||
          label + length > labels.size()) {
        return absl::DataLossError("checkpoint's corners are truncated");
      }
      const Corner corner(labels.begin() + label,
                          labels.begin() + label + length);
      if (!shared.problem.IsCorner(i, corner)) {
        return absl::DataLossError(absl::StrCat("checkpoint's corner ", k,
                                                " of block ", i,
                                                " is no labeling of it"));
      }
      label += length;
      if (shared.keep_dots && dots.empty()) {
        // A checkpoint written before FW steps with the cache kept dots.
        const std::vector<double> corner_dots = steps.CornerDots(i, corner);
        store.Add(corner, losses[entry], alphas[entry], &corner_dots);
        continue;
      }
      store.Add(corner, losses[entry], alphas[entry]);
      if (!shared.keep_dots) continue;
      const size_t row = static_cast<size_t>(counts[i]);
      if (dot + row > dots.size()) {
        return absl::DataLossError("checkpoint's corner dots are truncated");
      }
      store.entry(static_cast<int>(k))
          .dots.assign(dots.begin() + dot, dots.begin() + dot + row);
      dot += row;
    }
  }
  if (!shared.alpha_complete.empty()) {
    // Without the flags (an older checkpoint), every block reads its state.
    if (!reader.Has("alpha_complete")) {
      shared.alpha_complete.assign(shared.n, 0);
      return absl::OkStatus();
    }
    return reader.Integers("alpha_complete", shared.n, &shared.alpha_complete);
  }
  return absl::OkStatus();
}

}  // namespace

// Everything a later pass reads: the iterate, the block states, averaging,
// block gaps and the sampler, the corners, the counters. (w̄ is formed again
// from the sums when read.)
absl::Status BcfwRun::SaveState(CheckpointWriter* writer) const {
  // At hundreds of labels w, the states and their sums are mostly zeros:
  // they are kept as their entries then, with no dense copy of the states.
  // The file's layout does not depend on how the run holds them.
  writer->SparseReals("w", shared_.w.data(), shared_.w.size());
  writer->Real("ell", shared_.ell);
  writer->Reals("ell_block", shared_.ell_block);
  writer->Entries("states", shared_.states.AllEntries());
  writer->Entries("average_state_sums", shared_.block_average.AllSumEntries());
  writer->Integers("averaged_through",
                   shared_.block_average.averaged_through());
  writer->Real("ell_accumulator", shared_.block_average.ell_accumulator());
  writer->Integer("steps", shared_.steps);
  writer->Real("lambda", shared_.lambda);
  writer->Reals("block_gap", shared_.block_gap);
  writer->Integer("num_unvisited", shared_.num_unvisited);
  writer->Integer("next_unvisited", shared_.next_unvisited);
  writer->Real("cache_global_gap", shared_.cache_global_gap);
  writer->Integer("oracle_calls", shared_.oracle_calls);
  writer->Reals("state_dots", shared_.state_dots);
  writer->Integer("state_dots_steps", shared_.state_dots_steps);
  writer->Integer("exact_gaps_steps", shared_.exact_gaps_steps);
  writer->Reals("visit_state_dots", shared_.visit_state_dots);
  writer->Reals("box_v", shared_.boxes.v());
  writer->Integer("refresh_block_gaps", shared_.refresh_block_gaps ? 1 : 0);
  writer->Random("random", shared_.random);
  if (shared_.keep_corners) SaveCorners(shared_, writer);
  return absl::OkStatus();
}

absl::Status BcfwRun::LoadState(const CheckpointReader& reader) {
  const int64_t n = shared_.n;
  absl::Status status = reader.Reals("w", shared_.dim, &shared_.w);
  auto next = [&status](absl::Status read) {
    if (status.ok()) status = std::move(read);
  };
  next(reader.Real("ell", &shared_.ell));
  next(reader.Reals("ell_block", n, &shared_.ell_block));
  {
    RealEntries states;
    next(reader.Entries("states", shared_.states.TotalSize(), &states));
    if (status.ok()) next(shared_.states.SetAllEntries(states));
  }
  {
    RealEntries sums;
    next(reader.Entries("average_state_sums", shared_.states.TotalSize(),
                        &sums));
    if (status.ok()) next(shared_.block_average.SetAllSumEntries(sums));
  }
  next(reader.Integers(
      "averaged_through",
      static_cast<int64_t>(shared_.block_average.averaged_through().size()),
      shared_.block_average.mutable_averaged_through()));
  next(reader.Real("ell_accumulator",
                   shared_.block_average.mutable_ell_accumulator()));
  next(reader.Integer("steps", &shared_.steps));
  next(reader.Real("lambda", &shared_.lambda));
  next(reader.Reals("block_gap", n, &shared_.block_gap));
  next(reader.Integer("num_unvisited", &shared_.num_unvisited));
  next(reader.Integer("next_unvisited", &shared_.next_unvisited));
  next(reader.Real("cache_global_gap", &shared_.cache_global_gap));
  next(reader.Integer("oracle_calls", &shared_.oracle_calls));
  next(reader.Reals("state_dots", -1, &shared_.state_dots));
  next(reader.Integer("state_dots_steps", &shared_.state_dots_steps));
  next(reader.Integer("exact_gaps_steps", &shared_.exact_gaps_steps));
  next(reader.Reals("visit_state_dots", n, &shared_.visit_state_dots));
  next(reader.Reals("box_v", static_cast<int64_t>(shared_.boxes.v().size()),
                    shared_.boxes.mutable_v()));
  int refresh = 0;
  next(reader.Integer("refresh_block_gaps", &refresh));
  next(reader.Random("random", &shared_.random));
  if (status.ok() && shared_.keep_corners)
    status = LoadCorners(reader, block_steps_, &shared_);
  if (!status.ok()) return status;
  shared_.refresh_block_gaps = refresh != 0;
  average_steps_ = -1;
  if (shared_.gap_sampling) {
    for (int i = 0; i < shared_.n; ++i) {
      if (shared_.block_gap[i] != kInfinity)
        shared_.gap_tree.Set(i, shared_.block_gap[i]);
    }
  }
  return absl::OkStatus();
}

void BcfwRun::CheckInvariants(BcfwInvariants* invariants) const {
  *invariants = BcfwInvariants();
  std::vector<double> v = shared_.w;
  shared_.boxes.Untruncate(v.data());
  invariants->max_weight_error =
      MaxWeightError(shared_.problem, v.data(), shared_.states.Dense().data(),
                     shared_.states.offsets().data(), shared_.lambda);
  if (!shared_.keep_corners) return;
  invariants->min_alpha = 1;
  std::vector<double> state;
  for (int i = 0; i < shared_.n; ++i) {
    if (!shared_.AlphaComplete(i)) continue;
    ++invariants->blocks_checked;
    const CornerStore& store = shared_.corners[i];
    for (int k = 0; shared_.keep_dots && k < store.size(); ++k) {
      const double from_state = shared_.problem.StateDistanceSquared(
          i, shared_.states.Read(i), store.entry(k).corner);
      invariants->max_distance_error =
          std::max(invariants->max_distance_error,
                   std::abs(block_steps_.StateToCornerDistanceSquared(i, k) -
                            from_state) /
                       std::max(1.0, from_state));
    }
    invariants->max_alpha_sum_error = std::max(invariants->max_alpha_sum_error,
                                               std::abs(store.AlphaSum() - 1));
    const int64_t size = shared_.states.Size(i);
    state.assign(size, 0.0);
    double ell = 0;
    for (const StoredCorner& entry : store.entries()) {
      invariants->min_alpha = std::min(invariants->min_alpha, entry.alpha);
      shared_.problem.AddCornerToState(i, entry.corner, entry.alpha,
                                       state.data());
      ell += entry.alpha * entry.loss / shared_.n;
    }
    const double* actual = shared_.states.Read(i);
    for (int64_t k = 0; k < size; ++k) {
      invariants->max_state_error =
          std::max(invariants->max_state_error, std::abs(actual[k] - state[k]));
    }
    invariants->max_ell_error = std::max(invariants->max_ell_error,
                                         std::abs(shared_.ell_block[i] - ell));
  }
}

}  // namespace chaintag
