// Exact MAP decoding of a linear chain (max-sum Viterbi) and the score of a
// given labeling. Ties go to the lowest label id, both for the previous
// label and for the final one, as in the BCFW reference code.
//
// Thread-safety: ViterbiDecoder holds scratch buffers; use one per thread.

#ifndef CHAINTAG_MODELS_VITERBI_H_
#define CHAINTAG_MODELS_VITERBI_H_

#include <cstdint>
#include <vector>

namespace chaintag {

// Scores of one chain: score(y) = Σ_t unary[t][y_t] + start[y_0]
//   + Σ_{t>0} transition[y_{t−1}][y_t] + end[y_{T−1}].
struct ChainScores {
  int length = 0;
  int num_labels = 0;
  const double* unary = nullptr;       // length × num_labels, row-major
  const double* transition = nullptr;  // num_labels × num_labels, [prev][next]
  const double* start = nullptr;       // num_labels
  const double* end = nullptr;         // num_labels
};

double ScoreLabeling(const ChainScores& scores, const int32_t* labels);

class ViterbiDecoder {
 public:
  // Writes the best labeling (scores.length entries) and returns its score.
  // A chain of length 0 scores 0.
  double Decode(const ChainScores& scores, int32_t* labels);

 private:
  std::vector<double> delta_;
};

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_VITERBI_H_
