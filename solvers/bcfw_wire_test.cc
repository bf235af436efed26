// The round exchange's wire format (bcfw_wire.h): slots, a block delta's
// bytes, the round trip, and the refusal of truncated, corrupt or
// out-of-range deltas.

#include "solvers/bcfw_wire.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "solvers/problem.h"

namespace chaintag {
namespace {

// w of 24 coordinates in 4 slots of 6 (odd part 3, shift 1).
constexpr int64_t kDim = 24;
constexpr int64_t kGranularity = 6;

TEST(SlotMapTest, SlotsOfMultiplesAndRefusalOfOthers) {
  const SlotMap slots(kDim, kGranularity);
  ASSERT_TRUE(slots.is_set());
  EXPECT_FALSE(SlotMap().is_set());
  EXPECT_EQ(slots.count(), 4u);
  EXPECT_EQ(slots.SlotOf(0), 0u);
  EXPECT_EQ(slots.SlotOf(6), 1u);
  EXPECT_EQ(slots.SlotOf(18), 3u);
  EXPECT_TRUE(slots.WholeSlots(0));
  EXPECT_TRUE(slots.WholeSlots(12));
  EXPECT_TRUE(slots.WholeSlots(24));   // all of w
  EXPECT_FALSE(slots.WholeSlots(30));  // past w
  EXPECT_FALSE(slots.WholeSlots(3));   // odd
  EXPECT_FALSE(slots.WholeSlots(2));   // even, no multiple of 3
  EXPECT_FALSE(slots.WholeSlots(-6));
  // 40 = 5·2³: the inverse of 5 mod 2^64 divides exactly.
  const SlotMap wide(int64_t{40} * 2000000000, 40);
  EXPECT_EQ(wide.SlotOf(int64_t{40} * 1000000007), 1000000007u);
  EXPECT_FALSE(wide.WholeSlots(int64_t{40} * 1000000007 + 8));
}

TEST(WireReaderTest, ReadsWhatWasAppendedAndNothingPastTheEnd) {
  std::string bytes;
  WireAppend<int32_t>(-7, &bytes);
  WireAppend<uint8_t>(1, &bytes);
  WireAppend(0.25, &bytes);
  WireAppendArray(std::vector<int32_t>{}, &bytes);
  WireAppendArray(std::vector<int16_t>{3, -4}, &bytes);
  ASSERT_EQ(bytes.size(), 4u + 1 + 8 + 8 + (8 + 2 * 2));
  WireReader reader(bytes);
  int32_t i = 0;
  uint8_t flag = 0;
  double x = 0;
  std::vector<int32_t> empty = {9};
  std::vector<int16_t> pair;
  ASSERT_TRUE(reader.Read(&i));
  ASSERT_TRUE(reader.Read(&flag));
  ASSERT_TRUE(reader.Read(&x));
  ASSERT_TRUE(reader.ReadArray(&empty));
  ASSERT_TRUE(reader.ReadArray(&pair));
  EXPECT_EQ(i, -7);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(x, 0.25);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(pair, (std::vector<int16_t>{3, -4}));
  EXPECT_TRUE(reader.done());
  EXPECT_FALSE(reader.Read(&flag));

  // A failed read consumes nothing.
  WireReader three(absl::string_view("abc", 3));
  EXPECT_FALSE(three.Read(&i));
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(three.Read(&flag));
  EXPECT_TRUE(three.done());
}

// Two vectors of one slot each: vector 0 added at slots 0 and 2, vector 1
// at slot 1.
BlockUpdate SmallDelta() {
  BlockUpdate delta;
  const int32_t first = delta.AddVector(6);
  const int32_t second = delta.AddVector(6);
  for (int k = 0; k < 12; ++k) delta.values[k] = k + 1;
  delta.AddAddition(0, first, 1.0);
  delta.AddAddition(12, first, 1.0);
  delta.AddAddition(6, second, 1.0);
  return delta;
}

std::vector<int64_t> SlotsOf(const BlockUpdate& delta) {
  std::vector<int64_t> slots;
  for (int64_t target : delta.targets) slots.push_back(target / kGranularity);
  return slots;
}

template <typename T>
T At(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

template <typename T>
void Put(size_t offset, T value, std::string* bytes) {
  std::memcpy(bytes->data() + offset, &value, sizeof(T));
}

// The sections' offsets in SmallDelta's bytes: values (8 + 12·8), vector
// ends (8 + 2·8), slots (8 + 3·4), runs (8 + 2·(4 + 4)), the scales' flag.
constexpr size_t kSlotsAt = 104 + 24;
constexpr size_t kRunsAt = kSlotsAt + 20;
constexpr size_t kFlagAt = kRunsAt + 24;

TEST(DeltaCodecTest, UnitScalesOnTheWire) {
  const BlockUpdate delta = SmallDelta();
  DeltaCodec codec;
  std::string bytes;
  codec.Append(delta, SlotsOf(delta), &bytes);
  ASSERT_EQ(bytes.size(), kFlagAt + 1);
  EXPECT_EQ(At<int64_t>(bytes, 0), 12);
  EXPECT_EQ(At<double>(bytes, 8 + 11 * 8), 12.0);
  EXPECT_EQ(At<int64_t>(bytes, 104), 2);
  EXPECT_EQ(At<int64_t>(bytes, 104 + 16), 12);
  EXPECT_EQ(At<int64_t>(bytes, kSlotsAt), 3);
  EXPECT_EQ(At<uint32_t>(bytes, kSlotsAt + 8), 0u);
  EXPECT_EQ(At<uint32_t>(bytes, kSlotsAt + 12), 2u);
  EXPECT_EQ(At<uint32_t>(bytes, kSlotsAt + 16), 1u);
  // Runs: vector 0 twice, then vector 1 once.
  EXPECT_EQ(At<int64_t>(bytes, kRunsAt), 2);
  EXPECT_EQ(At<int32_t>(bytes, kRunsAt + 8), 0);
  EXPECT_EQ(At<int32_t>(bytes, kRunsAt + 12), 2);
  EXPECT_EQ(At<int32_t>(bytes, kRunsAt + 16), 1);
  EXPECT_EQ(At<int32_t>(bytes, kRunsAt + 20), 1);
  EXPECT_EQ(At<uint8_t>(bytes, kFlagAt), 1);
}

TEST(DeltaCodecTest, RoundTrip) {
  const SlotMap slot_map(kDim, kGranularity);
  for (bool unit : {true, false}) {
    BlockUpdate delta = SmallDelta();
    if (!unit) delta.scales[2] = -0.5;
    DeltaCodec codec;
    std::string bytes;
    codec.Append(delta, SlotsOf(delta), &bytes);
    // Non-unit scales follow the flag 0 as an array of three.
    EXPECT_EQ(bytes.size(), unit ? kFlagAt + 1 : kFlagAt + 1 + 8 + 3 * 8);
    WireReader reader(bytes);
    BlockUpdate read;
    ASSERT_TRUE(codec.Read(slot_map, &reader, &read)) << unit;
    EXPECT_TRUE(reader.done());
    EXPECT_EQ(read.values, delta.values);
    EXPECT_EQ(read.vector_ends, delta.vector_ends);
    EXPECT_EQ(read.targets, (std::vector<int64_t>{0, 12, 6}));
    EXPECT_EQ(read.vectors, (std::vector<int32_t>{0, 0, 1}));
    EXPECT_EQ(read.scales, delta.scales);
    EXPECT_TRUE(ValidDelta(slot_map, read));
  }
}

TEST(DeltaCodecTest, RefusesEveryTruncation) {
  const SlotMap slot_map(kDim, kGranularity);
  for (bool unit : {true, false}) {
    BlockUpdate delta = SmallDelta();
    if (!unit) delta.scales[0] = 2.0;
    DeltaCodec codec;
    std::string bytes;
    codec.Append(delta, SlotsOf(delta), &bytes);
    for (size_t length = 0; length < bytes.size(); ++length) {
      WireReader reader(absl::string_view(bytes).substr(0, length));
      BlockUpdate read;
      EXPECT_FALSE(codec.Read(slot_map, &reader, &read))
          << "unit " << unit << ", " << length << " bytes";
    }
  }
}

TEST(DeltaCodecTest, RefusesCorruptBytes) {
  const SlotMap slot_map(kDim, kGranularity);
  const BlockUpdate delta = SmallDelta();
  DeltaCodec codec;
  std::string good;
  codec.Append(delta, SlotsOf(delta), &good);
  auto refused = [&](const std::string& bytes) {
    WireReader reader(bytes);
    BlockUpdate read;
    return !codec.Read(slot_map, &reader, &read);
  };
  ASSERT_FALSE(refused(good));
  std::string bytes = good;
  Put<int64_t>(0, -1, &bytes);  // a negative count
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<int64_t>(0, int64_t{1} << 60, &bytes);  // more values than bytes
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<uint32_t>(kSlotsAt + 12, 4, &bytes);  // slot 4 of 4
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<int32_t>(kRunsAt + 12, 0, &bytes);  // an empty run
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<int32_t>(kRunsAt + 12, 3, &bytes);  // runs over 4 additions of 3
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<int32_t>(kRunsAt + 12, 1, &bytes);  // runs over 2 additions of 3
  EXPECT_TRUE(refused(bytes));
  bytes = good;
  Put<uint8_t>(kFlagAt, 2, &bytes);  // neither unit nor listed scales
  EXPECT_TRUE(refused(bytes));
}

TEST(ValidDeltaTest, RefusesDeltasOutsideWholeSlotsOfW) {
  const SlotMap slot_map(kDim, kGranularity);
  EXPECT_TRUE(ValidDelta(slot_map, SmallDelta()));
  EXPECT_TRUE(ValidDelta(slot_map, BlockUpdate()));
  BlockUpdate delta = SmallDelta();
  delta.targets[1] = 18;  // the last slot
  EXPECT_TRUE(ValidDelta(slot_map, delta));
  delta.targets[1] = 24;  // past w
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta.targets[1] = 3;  // inside a slot
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.vectors[2] = 2;  // no such vector
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta.vectors[2] = -1;
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.scales.pop_back();
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.vector_ends[0] = 3;  // half a slot
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.vector_ends[1] = 6;  // not increasing
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.values.push_back(0);  // values past the last vector
  EXPECT_FALSE(ValidDelta(slot_map, delta));
  delta = SmallDelta();
  delta.vector_ends[1] = 36;  // a vector longer than w
  delta.values.resize(36);
  EXPECT_FALSE(ValidDelta(slot_map, delta));
}

}  // namespace
}  // namespace chaintag
