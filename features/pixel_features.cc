#include "features/pixel_features.h"

#include <cstddef>

namespace chaintag {

void PixelFeatures(const uint8_t* pixels, int num_letters,
                   FeatureSequence* out) {
  out->Clear();
  for (int t = 0; t < num_letters; ++t) {
    const uint8_t* letter = pixels + static_cast<size_t>(t) * kPixelsPerLetter;
    for (int p = 0; p < kPixelsPerLetter; ++p) {
      if (letter[p] != 0) {
        out->buckets.push_back(static_cast<uint32_t>(p));
        out->values.push_back(1.0f);
      }
    }
    out->buckets.push_back(kPixelsPerLetter);
    out->values.push_back(1.0f);
    out->offsets.push_back(static_cast<int32_t>(out->buckets.size()));
  }
}

}  // namespace chaintag
