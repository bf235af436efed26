// Pixel features for the OCR letter data set, as in the BCFW papers: each
// letter is a 16x8 binary image whose 128 pixels are features 0..127, plus a
// constant feature 128.
//
// Thread-safety: a pure function.

#ifndef CHAINTAG_FEATURES_PIXEL_FEATURES_H_
#define CHAINTAG_FEATURES_PIXEL_FEATURES_H_

#include <cstdint>

#include "features/feature_sequence.h"

namespace chaintag {

constexpr int kPixelsPerLetter = 128;
constexpr int kPixelBuckets = kPixelsPerLetter + 1;

// `pixels` holds num_letters * 128 bytes, letter-major, each 0 or 1 (any
// non-zero byte counts as 1). Per letter: bucket p with value 1 for every
// set pixel p (zero pixels omitted), then bucket 128 with value 1. Fills
// `out` (cleared first, capacity reused).
void PixelFeatures(const uint8_t* pixels, int num_letters,
                   FeatureSequence* out);

}  // namespace chaintag

#endif  // CHAINTAG_FEATURES_PIXEL_FEATURES_H_
