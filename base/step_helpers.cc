#include "base/step_helpers.h"

#include <algorithm>

namespace chaintag {
namespace {

// The helpers lent to this thread: a per-thread scope, set and restored by
// StepHelpers::Lend only.
thread_local StepHelpers* lent_to_this_thread = nullptr;

}  // namespace

StepHelpers::StepHelpers(int threads)
    : threads_(std::max(1, threads)), pool_(threads_) {}

StepHelpers* StepHelpers::Current() { return lent_to_this_thread; }

StepHelpers::Lend::Lend(StepHelpers* helpers) : previous_(lent_to_this_thread) {
  lent_to_this_thread = helpers;
}

StepHelpers::Lend::~Lend() { lent_to_this_thread = previous_; }

}  // namespace chaintag
