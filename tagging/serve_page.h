// The page `serve` shows at `/`: tagging/serve_page.html, compiled in (a
// genrule wraps it in a string literal), so that it works offline and the
// binary is all there is to deploy.
//
// Thread-safety: a constant.

#ifndef CHAINTAG_TAGGING_SERVE_PAGE_H_
#define CHAINTAG_TAGGING_SERVE_PAGE_H_

namespace chaintag {

extern const char kServePage[];

}  // namespace chaintag

#endif  // CHAINTAG_TAGGING_SERVE_PAGE_H_
