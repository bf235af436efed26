#include "base/thread_communicator.h"

#include <string>
#include <thread>
#include <vector>

#include "base/communicator.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(ShardOfTest, CoversEveryBlockOnceInRankOrder) {
  for (int size : {1, 2, 3, 7}) {
    int next = 0;
    for (int rank = 0; rank < size; ++rank) {
      const BlockShard shard = ShardOf(10, rank, size);
      EXPECT_EQ(shard.begin, next);
      EXPECT_LE(shard.end - shard.begin, 10 / size + 1);
      EXPECT_GE(shard.end - shard.begin, 10 / size);
      next = shard.end;
    }
    EXPECT_EQ(next, 10);
  }
}

// Three ranks run many collectives back to back: each result must hold
// every rank's contribution of that very call.
TEST(ThreadCommunicatorTest, CollectivesMatchAcrossRanks) {
  constexpr int kRanks = 3;
  ThreadHub hub(kRanks);
  std::vector<std::vector<double>> sums(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      ThreadCommunicator communicator(&hub, rank);
      for (int call = 0; call < 200; ++call) {
        std::string all;
        std::vector<int64_t> offsets;
        communicator.AllGather(std::string(rank + 1, 'a' + call % 26), &all,
                               &offsets);
        if (offsets.size() != kRanks + 1) errors[rank] = "allgather offsets";
        for (int r = 0; r < kRanks && offsets.size() == kRanks + 1; ++r) {
          if (all.substr(offsets[r], offsets[r + 1] - offsets[r]) !=
              std::string(r + 1, 'a' + call % 26)) {
            errors[rank] = "allgather mismatch";
          }
        }
        const std::vector<double> values = {1.0 * rank, 0.5 * call};
        std::vector<double> gathered;
        if (!communicator.AllGatherDoubles(values, &gathered).ok()) {
          errors[rank] = "gather failed";
        }
        // Every rank's pair, in rank order: sum them in that order.
        sums[rank] = {0, 0};
        for (size_t k = 0; k < gathered.size(); ++k) {
          sums[rank][k % 2] += gathered[k];
        }
        double broadcast[2] = {rank == 1 ? 7.0 * call : -1, 3};
        communicator.Broadcast(1, broadcast, 2);
        if (broadcast[0] != 7.0 * call) errors[rank] = "broadcast mismatch";
      }
      // A ring: each rank sends to the next and receives from the previous.
      double out = rank, in = -1;
      communicator.Send((rank + 1) % kRanks, &out, 1);
      communicator.Receive((rank + kRanks - 1) % kRanks, &in, 1);
      if (in != (rank + kRanks - 1) % kRanks) errors[rank] = "ring mismatch";
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(errors[rank], "") << "rank " << rank;
    EXPECT_EQ(sums[rank], (std::vector<double>{3.0, 1.5 * 199}));
  }
}

}  // namespace
}  // namespace chaintag
