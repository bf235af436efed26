#include "base/communicator.h"

#include <vector>

namespace chaintag {

BlockShard ShardOf(int n, int rank, int size) {
  BlockShard shard;
  shard.begin = static_cast<int>(static_cast<int64_t>(n) * rank / size);
  shard.end = static_cast<int>(static_cast<int64_t>(n) * (rank + 1) / size);
  return shard;
}

absl::Status SumInRankOrder(Communicator* communicator,
                            absl::Span<double> values) {
  std::vector<double> all;
  absl::Status status = communicator->AllGatherDoubles(values, &all);
  if (!status.ok()) return status;
  const size_t count = values.size();
  for (size_t k = 0; k < count; ++k) {
    double sum = 0;
    for (size_t r = 0; r * count < all.size(); ++r) sum += all[r * count + k];
    values[k] = sum;
  }
  return absl::OkStatus();
}

}  // namespace chaintag
