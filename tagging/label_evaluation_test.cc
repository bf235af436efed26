#include "tagging/label_evaluation.h"

#include <string>
#include <vector>

#include "corpora/label_set.h"
#include "gtest/gtest.h"

namespace chaintag {
namespace {

TEST(LabelEvaluationTest, ReportsAsCrfsuiteDoes) {
  LabelEvaluation evaluation(LabelSet({"B-NP", "I-NP", "O", "B-VP"}));
  ASSERT_TRUE(evaluation.Add({"B-NP", "I-NP", "O"}, {"B-NP", "O", "O"}).ok());
  // "X" is unknown to the model: an item, never correct.
  ASSERT_TRUE(evaluation.Add({"B-NP", "X"}, {"B-NP", "B-VP"}).ok());
  ASSERT_TRUE(evaluation.Add({"B-NP"}, {"B-NP"}).ok());
  // By hand: B-NP 3 of 3 predicted, 3 references; I-NP 0 of 0, 1; O 1 of 2,
  // 1 (F1 2·0.5·1/1.5); B-VP predicted once, never a reference. Macro over
  // the 4 labels: P (1+0+0.5+0)/4, R (1+0+1+0)/4, F1 (1+0+2/3+0)/4. Items
  // 4 of 6, sequences 1 of 3.
  EXPECT_EQ(evaluation.Report(),
            "Performance by label (#match, #model, #ref) (precision, recall, "
            "F1):\n"
            "    B-NP: (3, 3, 3) (1.0000, 1.0000, 1.0000)\n"
            "    I-NP: (0, 0, 1) (0.0000, 0.0000, 0.0000)\n"
            "    O: (1, 2, 1) (0.5000, 1.0000, 0.6667)\n"
            "    B-VP: (0, 1, 0) (******, ******, ******)\n"
            "Macro-average precision, recall, F1: (0.375000, 0.500000, "
            "0.416667)\n"
            "Item accuracy: 4 / 6 (0.6667)\n"
            "Instance accuracy: 1 / 3 (0.3333)\n");
}

TEST(LabelEvaluationTest, LengthMismatchFails) {
  LabelEvaluation evaluation(LabelSet({"A"}));
  EXPECT_FALSE(evaluation.Add({"A", "A"}, {"A"}).ok());
}

}  // namespace
}  // namespace chaintag
