#include "base/interrupt.h"

#include <signal.h>

#include <atomic>
#include <mutex>

namespace chaintag {
namespace {

std::atomic<int> requests{0};
std::atomic<int> last_signal{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void OnSignal(int signal) {
  last_signal.store(signal, std::memory_order_relaxed);
  requests.fetch_add(1, std::memory_order_relaxed);
}

// Two requests: stop, and skip the final gap.
void OnEmbeddedSignal(int signal) {
  OnSignal(signal);
  OnSignal(signal);
}

// The live ScopedInterruptHandlers and the SIGINT action the first found.
std::mutex scoped_mutex;
int scoped_count = 0;
struct sigaction action_before_scopes;

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // Interrupted reads and writes restart: the run stops at its own pace.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int InterruptRequests() { return requests.load(std::memory_order_relaxed); }

int InterruptSignal() { return last_signal.load(std::memory_order_relaxed); }

int InterruptExitCode() {
  const int signal = InterruptSignal();
  return 128 + (signal != 0 ? signal : SIGINT);
}

void RequestInterrupt(int signal) { OnSignal(signal); }

ScopedInterruptHandler::ScopedInterruptHandler() {
  std::lock_guard<std::mutex> lock(scoped_mutex);
  if (scoped_count++ > 0) return;
  ClearInterruptRequests();
  struct sigaction action = {};
  action.sa_handler = OnEmbeddedSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &action_before_scopes);
}

ScopedInterruptHandler::~ScopedInterruptHandler() {
  std::lock_guard<std::mutex> lock(scoped_mutex);
  if (--scoped_count > 0) return;
  sigaction(SIGINT, &action_before_scopes, nullptr);
  ClearInterruptRequests();
}

void ClearInterruptRequests() {
  requests.store(0, std::memory_order_relaxed);
  last_signal.store(0, std::memory_order_relaxed);
}

}  // namespace chaintag
