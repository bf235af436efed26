// Graceful interruption of long runs. A main installs the handlers; the
// first SIGINT or SIGTERM then asks the run to stop at its next safe point
// (the end of a block step) and still deliver what it has (the certified
// gap, the model); a second asks it to skip what it can (the final gap
// pass); later ones are ignored until the run has written its files, which
// are written atomically anyway. Library code only reads the requests.
//
// Signals are process-wide, so this is the one piece of process-wide
// mutable state: two lock-free atomics written by the handler.
//
// Thread-safety: every function is safe from any thread; the handler is
// async-signal-safe.

#ifndef CHAINTAG_BASE_INTERRUPT_H_
#define CHAINTAG_BASE_INTERRUPT_H_

namespace chaintag {

// Installs the SIGINT and SIGTERM handlers (mains only).
void InstallInterruptHandlers();

// How many stop requests arrived (0 = none) and the last signal's number.
int InterruptRequests();
int InterruptSignal();

// The exit status a process stopped by InterruptSignal() should return:
// 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
int InterruptExitCode();

// For a library inside another runtime (the Python module), whose own
// SIGINT handler cannot run while a long call holds no interpreter lock:
// while one lives, SIGINT asks runs to stop at their next safe point and to
// skip the final gap pass (the caller wants control back, not a
// certificate); the SIGINT action before the first is restored, and the
// requests cleared, when the last one goes. Any number may live at once, on
// any threads; Interrupted() says whether a SIGINT came while they lived.
//
//   ScopedInterruptHandler handler;
//   RunPipeline(config, options);  // returns soon after a Ctrl-C
//   if (handler.Interrupted()) { /* raise KeyboardInterrupt */ }
class ScopedInterruptHandler {
 public:
  ScopedInterruptHandler();
  ~ScopedInterruptHandler();
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;

  bool Interrupted() const { return InterruptRequests() > 0; }
};

// For tests: a request as if the signal had arrived, and the reset.
void RequestInterrupt(int signal);
void ClearInterruptRequests();

}  // namespace chaintag

#endif  // CHAINTAG_BASE_INTERRUPT_H_
