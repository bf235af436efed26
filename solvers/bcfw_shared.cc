#include "solvers/bcfw_shared.h"

#include <vector>

#include "base/huge_pages.h"

namespace chaintag {

void BcfwShared::Initialize() {
  // Steps read and write w's rows at random: huge pages, faulted in on
  // the threads.
  ReserveFaultedIn(&w, dim, /*huge_pages=*/true, NumThreads());
  w.assign(dim, 0.0);
  ell_block.assign(n, 0.0);
  states.Initialize(problem);
  visit_state_dots.assign(n, 0.0);
  if (averaging) block_average.Initialize();
  block_gap.assign(n, bcfw_internal::kInfinity);
  num_unvisited = n;
  if (gap_sampling) gap_tree = SumTree(n);
  if (keep_corners) {
    corners.resize(n);
    for (int i = 0; i < n; ++i) {
      const Corner& gold = problem.GoldCorner(i);
      std::vector<double> dots;
      if (keep_dots) dots = CornerDots(problem, i, corners[i].entries(), gold);
      corners[i].Add(gold, problem.Loss(i, gold), 1.0,
                     keep_dots ? &dots : nullptr);
    }
  }
  if (keep_corners && !track_alpha) alpha_complete.assign(n, 1);
}

}  // namespace chaintag
