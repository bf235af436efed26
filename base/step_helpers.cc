#include "base/step_helpers.h"

#include <algorithm>

namespace chaintag {
namespace {

// The helpers lent to this thread: a per-thread scope, set and restored by
// StepHelpers::Lend only.
thread_local StepHelpers* lent_to_this_thread = nullptr;

}  // namespace

StepHelpers::StepHelpers(int threads)
    : threads_(std::max(1, threads)),
      pool_(threads_, [this](int, int item) { call_(job_, item); }) {}

void StepHelpers::RunCalls(int items, const void* job,
                           void (*call)(const void*, int)) {
  if (threads_ == 1 || items <= 1) {
    for (int item = 0; item < items; ++item) call(job, item);
    return;
  }
  job_ = job;
  call_ = call;
  pool_.Start(items);
  pool_.Finish();
  job_ = nullptr;
  call_ = nullptr;
}

StepHelpers* StepHelpers::Current() { return lent_to_this_thread; }

StepHelpers::Lend::Lend(StepHelpers* helpers) : previous_(lent_to_this_thread) {
  lent_to_this_thread = helpers;
}

StepHelpers::Lend::~Lend() { lent_to_this_thread = previous_; }

}  // namespace chaintag
