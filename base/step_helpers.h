// StepHelpers: threads that a sequential loop lends to the work inside each
// of its steps. Plain BCFW runs its steps one after another on one thread,
// so the other threads idle during the steps; with hundreds of labels one
// step's unary scores are large enough to split by positions. The loop
// lends its helpers to its own thread for a scope (Lend), and the work
// inside a step asks Current() whether it may split. Work called from a
// parallel region runs on threads that were lent nothing, so it stays
// serial and never puts more threads on the cores than were asked for.
//
//   StepHelpers helpers(num_threads);
//   {
//     StepHelpers::Lend lend(&helpers);
//     for (...) RunStep();  // inside: if (StepHelpers* h =
//                           //   StepHelpers::Current()) h->Run(n, job);
//   }
//
// Thread-safety: Run from the lending thread only (the helpers are its);
// job(item) runs concurrently for distinct items.

#ifndef CHAINTAG_BASE_STEP_HELPERS_H_
#define CHAINTAG_BASE_STEP_HELPERS_H_

#include "base/batch_pool.h"

namespace chaintag {

class StepHelpers {
 public:
  // The caller and threads − 1 helper threads.
  explicit StepHelpers(int threads);
  StepHelpers(const StepHelpers&) = delete;
  StepHelpers& operator=(const StepHelpers&) = delete;

  int threads() const { return threads_; }

  // job(item) for items [0, items), on the helpers and the calling thread;
  // returns when all are done (BatchPool::Run). A single item runs on the
  // caller, without a hand-over.
  template <typename Job>
  void Run(int items, const Job& job) {
    if (items == 1) {
      job(0);
    } else if (items > 1) {
      pool_.Run(items, job);
    }
  }

  // The helpers lent to the calling thread, or null.
  static StepHelpers* Current();

  // Lends `helpers` to the calling thread until destroyed (then restores
  // what was lent before).
  class Lend {
   public:
    explicit Lend(StepHelpers* helpers);
    ~Lend();
    Lend(const Lend&) = delete;
    Lend& operator=(const Lend&) = delete;

   private:
    StepHelpers* const previous_;
  };

 private:
  const int threads_;
  BatchPool pool_;
};

}  // namespace chaintag

#endif  // CHAINTAG_BASE_STEP_HELPERS_H_
