// A solver's weights encoded into a model file (models/model_file.h): the
// rows it stores, in which precision and layout, and the format version and
// checksum that say so.
//
// Thread-safety: a stateless function over caller-owned values.
//
//   ModelFile file = header;  // labels, features, config; no weights
//   absl::Status encoded = EncodeModelWeights(layout, rows, nullptr, nullptr,
//                                             nullptr, nullptr, w, &file);

#ifndef CHAINTAG_MODELS_MODEL_ENCODING_H_
#define CHAINTAG_MODELS_MODEL_ENCODING_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "features/bucket_rows.h"
#include "features/feature_keys.h"
#include "models/chain_layout.h"
#include "models/model_file.pb.h"
#include "models/second_order.h"
#include "models/sparse_rows.h"

namespace chaintag {

// Fills `file`'s weight fields (clearing what they held), magic, format
// version and checksum from `weights`, laid out as `layout` over the emission
// rows `rows` and, at second order (`structure` non-null), the structure's
// trigrams and pairs; with pair templates (either order) the pair rows
// `pair_rows` (null without); with `free` (null for a w of every
// coordinate, models/sparse_rows.h) its emission part as it says, giving the
// same file as the same w in every coordinate. A stacked model with first-order
// pair rows is refused (no format holds both). Rows that are all zero are
// dropped; the rest are stored in file->weight_precision() (FLOAT32 when
// unspecified), each with only its non-zero labels
// (ModelFile.emission_row_sizes) from kSparseRowsFromLabels labels up when that
// stores under half of the full rows' weights. Fails on a size that does not
// match the layout, rows over another number of buckets than the features',
// non-finite weights, or weights beyond float32's range for FLOAT32. Exact
// features (file->features().exact()) need `keys`, their key table, bucket b
// being key keys->keys()[b]: the file then keys each row it stores by its key
// (feature_keys), and its names by row; hashed features take none.
absl::Status EncodeModelWeights(const ChainLayout& layout,
                                const BucketRows& rows, const FeatureKeys* keys,
                                const SecondOrderStructure* structure,
                                const BucketRows* pair_rows,
                                const FreeEmissions* free,
                                absl::Span<const double> weights,
                                ModelFile* file);

}  // namespace chaintag

#endif  // CHAINTAG_MODELS_MODEL_ENCODING_H_
