// A distributed run's round exchange (BcfwRun::set_distribution): after
// phase one of a round (bcfw_rounds.cc), each rank sends what the round's
// shared bookkeeping and merge read of its own blocks (the slopes, the gap,
// ⟨v_i, w⟩ and the Δw in bcfw_wire.h's format), and reads every other
// rank's, refusing malformed bytes.
//
// Thread-safety: BcfwRounds', one thread at a time; collective over the
// communicator: every rank calls it for every round.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/communicator.h"
#include "solvers/bcfw_rounds.h"
#include "solvers/bcfw_wire.h"

namespace chaintag {

// Each rank sends, for each of its round blocks, what the shared
// bookkeeping and the sum U read: the slopes, the gap and ⟨v_i, w⟩, and the
// compact Δw. The buffers are kept between rounds.
absl::Status BcfwRounds::ExchangeRound(int size) {
  std::string& local = exchange_local_;
  local.clear();
  for (int k = 0; k < size; ++k) {
    if (!shared_.IsLocal(round_blocks_[k])) continue;
    const BcfwBlockOracle& oracle = round_oracles_[k];
    WireAppend<int32_t>(k, &local);
    WireAppend<int32_t>(oracle.cache_hit, &local);
    WireAppend<uint8_t>(oracle.moves ? 1 : 0, &local);
    WireAppend(oracle.slope, &local);
    WireAppend(oracle.ell_slope, &local);
    WireAppend(oracle.fw_gap, &local);
    WireAppend(oracle.state_dot, &local);
    if (oracle.moves)
      delta_codec_.Append(oracle.located.delta, oracle.located.slots, &local);
  }
  absl::Status status = shared_.distribution.communicator->AllGather(
      local, &exchange_all_, &exchange_offsets_);
  if (!status.ok()) return status;
  const int rank = shared_.distribution.communicator->rank();
  for (int r = 0; r + 1 < static_cast<int>(exchange_offsets_.size()); ++r) {
    if (r == rank) continue;
    WireReader reader(
        absl::string_view(exchange_all_)
            .substr(exchange_offsets_[r],
                    exchange_offsets_[r + 1] - exchange_offsets_[r]));
    while (!reader.done()) {
      int32_t k = -1, cache_hit = -1;
      uint8_t moves = 0;
      if (!reader.Read(&k) || k < 0 || k >= size ||
          shared_.IsLocal(round_blocks_[k])) {
        return absl::DataLossError(
            absl::StrCat("rank ", r, " sent a malformed round"));
      }
      BcfwBlockOracle& oracle = round_oracles_[k];
      if (!reader.Read(&cache_hit) || !reader.Read(&moves) ||
          !reader.Read(&oracle.slope) || !reader.Read(&oracle.ell_slope) ||
          !reader.Read(&oracle.fw_gap) || !reader.Read(&oracle.state_dot)) {
        return absl::DataLossError(
            absl::StrCat("rank ", r, " sent a truncated round"));
      }
      oracle.cache_hit = cache_hit;
      oracle.moves = moves != 0;
      if (!oracle.moves) continue;
      if (!delta_codec_.Read(merge_->slot_map(), &reader,
                             &oracle.located.delta)) {
        return absl::DataLossError(
            absl::StrCat("rank ", r, " sent a truncated round"));
      }
      if (!ValidDelta(merge_->slot_map(), oracle.located.delta)) {
        return absl::DataLossError(
            absl::StrCat("rank ", r, " sent a delta outside w"));
      }
      merge_->Locate(&oracle.located);
    }
  }
  return absl::OkStatus();
}

}  // namespace chaintag
