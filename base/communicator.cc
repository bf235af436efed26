#include "base/communicator.h"

#include <cstring>
#include <string>
#include <vector>

namespace chaintag {

absl::Status Communicator::AllGatherDoubles(absl::Span<const double> local,
                                            std::vector<double>* all) {
  std::string bytes;
  std::vector<int64_t> offsets;
  absl::Status status =
      AllGather(absl::string_view(reinterpret_cast<const char*>(local.data()),
                                  local.size() * sizeof(double)),
                &bytes, &offsets);
  if (!status.ok()) return status;
  all->resize(bytes.size() / sizeof(double));
  if (!bytes.empty()) std::memcpy(all->data(), bytes.data(), bytes.size());
  return absl::OkStatus();
}

BlockShard ShardOf(int n, int rank, int size) {
  BlockShard shard;
  shard.begin = static_cast<int>(static_cast<int64_t>(n) * rank / size);
  shard.end = static_cast<int>(static_cast<int64_t>(n) * (rank + 1) / size);
  return shard;
}

}  // namespace chaintag
