#include "base/communicator.h"

#include <vector>

namespace chaintag {

BlockShard ShardOf(int n, int rank, int size) {
  BlockShard shard;
  shard.begin = static_cast<int>(static_cast<int64_t>(n) * rank / size);
  shard.end = static_cast<int>(static_cast<int64_t>(n) * (rank + 1) / size);
  return shard;
}

}  // namespace chaintag
