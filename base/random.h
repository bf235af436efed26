// Seeded, portable random choices for solvers: the same seed gives the same
// sequence on every platform and standard library
// (std::uniform_int_distribution does not promise that).
//
// Thread-safety: one generator per thread.

#ifndef CHAINTAG_BASE_RANDOM_H_
#define CHAINTAG_BASE_RANDOM_H_

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace chaintag {

class SolverRandom {
 public:
  explicit SolverRandom(uint64_t seed) : engine_(seed) {}

  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, with the
  // rejection step that makes it exactly uniform).
  uint32_t Uniform(uint32_t n) {
    uint64_t product = static_cast<uint64_t>(Next32()) * n;
    uint32_t low = static_cast<uint32_t>(product);
    if (low < n) {
      const uint32_t threshold = static_cast<uint32_t>(-n) % n;
      while (low < threshold) {
        product = static_cast<uint64_t>(Next32()) * n;
        low = static_cast<uint32_t>(product);
      }
    }
    return static_cast<uint32_t>(product >> 32);
  }

  // Uniform double in [0, 1).
  double UniformDouble() { return (engine_() >> 11) * 0x1.0p-53; }

  // Fills `order` with a uniformly random permutation of [0, n).
  void Permutation(int n, std::vector<int>* order) {
    order->resize(n);
    for (int i = 0; i < n; ++i) (*order)[i] = i;
    for (int i = n - 1; i > 0; --i) {
      std::swap((*order)[i], (*order)[Uniform(static_cast<uint32_t>(i + 1))]);
    }
  }

  // The engine's state as text, and its restoration (false when `state` is
  // not one): checkpoints continue the same sequence.
  std::string SaveState() const {
    std::ostringstream out;
    out << engine_;
    return out.str();
  }
  bool LoadState(const std::string& state) {
    std::istringstream in(state);
    std::mt19937_64 engine;
    in >> engine;
    if (in.fail()) return false;
    engine_ = engine;
    return true;
  }

 private:
  uint32_t Next32() { return static_cast<uint32_t>(engine_() >> 32); }
  std::mt19937_64 engine_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_RANDOM_H_
