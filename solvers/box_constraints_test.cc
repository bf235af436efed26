// BoxConstraints: the config's checks, truncation around a step, and the
// dual's box term against hand-computed values.

#include "solvers/box_constraints.h"

#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace chaintag {
namespace {

SolverConfig WithBoxes(
    const std::vector<std::tuple<int64_t, int64_t, double, double>>& boxes) {
  SolverConfig config;
  config.set_name("bcfw");
  for (const auto& [begin, end, lower, upper] : boxes) {
    SolverConfig::Box* box = config.mutable_bcfw()->add_box();
    box->set_begin(begin);
    box->set_end(end);
    box->set_lower(lower);
    box->set_upper(upper);
  }
  return config;
}

TEST(BoxConstraintsTest, RefusesBadBoxes) {
  std::vector<double> w(6, 0.0);
  for (const auto& bad : {WithBoxes({{2, 2, 0, 1}}), WithBoxes({{4, 7, 0, 1}}),
                          WithBoxes({{-1, 2, 0, 1}}), WithBoxes({{0, 2, 1, 0}}),
                          WithBoxes({{0, 3, 0, 1}, {2, 4, 0, 1}})}) {
    BoxConstraints boxes;
    const absl::Status status = boxes.Initialize(bad, 6, w.data());
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  }
}

TEST(BoxConstraintsTest, TruncatesAroundStepsAndAddsTheDualTerm) {
  // Coordinates 1 and 2 in [0.5, 2], coordinate 4 in [-1, -0.25].
  std::vector<double> w(6, 0.0);
  BoxConstraints boxes;
  ASSERT_TRUE(boxes
                  .Initialize(WithBoxes({{1, 3, 0.5, 2}, {4, 5, -1, -0.25}}), 6,
                              w.data())
                  .ok());
  EXPECT_EQ(boxes.index(), (std::vector<int64_t>{1, 2, 4}));
  // w starts at the truncation of v = 0.
  EXPECT_EQ(w, (std::vector<double>{0, 0.5, 0.5, 0, -0.25, 0}));
  // Term at v = 0: λ·Σ (v − w)·w = 0.1·(-0.5·0.5 − 0.5·0.5 − 0.25·0.25).
  EXPECT_NEAR(boxes.Term(0.1, false), 0.1 * (-0.25 - 0.25 - 0.0625), 1e-15);

  boxes.Untruncate(w.data());
  EXPECT_EQ(w, (std::vector<double>{0, 0, 0, 0, 0, 0}));
  // A step adds (1, 3, 1, 1, -2, 1): v = (3, 1, -2) on the boxes.
  const std::vector<double> step = {1, 3, 1, 1, -2, 1};
  for (size_t j = 0; j < w.size(); ++j) w[j] += step[j];
  boxes.Truncate(w.data());
  EXPECT_EQ(w, (std::vector<double>{1, 2, 1, 1, -1, 1}));
  EXPECT_EQ(boxes.v(), (std::vector<double>{3, 1, -2}));
  // (3 − 2)·2 + (1 − 1)·1 + (-2 + 1)·(-1) = 3.
  EXPECT_NEAR(boxes.Term(0.5, false), 0.5 * 3, 1e-15);

  std::vector<double> average = {0, 4, 0.75, 0, -3, 0};
  boxes.ClearAverage();
  EXPECT_NEAR(boxes.Term(1.0, true), -0.5 * 0.5 * 2 - 0.25 * 0.25, 1e-15);
  boxes.TruncateAverage(average.data());
  EXPECT_EQ(average, (std::vector<double>{0, 2, 0.75, 0, -1, 0}));
  // (4 − 2)·2 + 0 + (-3 + 1)·(-1) = 6.
  EXPECT_NEAR(boxes.Term(1.0, true), 6, 1e-15);
}

}  // namespace
}  // namespace chaintag
