// absl::Status to Python exceptions: every failing call of the module
// raises an exception whose message is the Status message (which names the
// file and line at fault) and whose `code` attribute is the Status code's
// name ("NOT_FOUND", ...). The classes form one hierarchy under
// chaintag.Error, each also a subclass of the built-in exception a Python
// user would catch:
//
//   InvalidArgument, FailedPrecondition, OutOfRange -> InvalidArgumentError
//                                                      (ValueError)
//   NotFound                                         -> NotFoundError
//                                                      (FileNotFoundError)
//   Unimplemented                                    -> UnimplementedError
//                                                      (NotImplementedError)
//   every other code                                 -> StatusError (OSError)
//
// Thread-safety: StatusException may be thrown from any thread, but only
// across a pybind11 call boundary with the GIL held; RegisterExceptions
// runs once, at import.

#ifndef CHAINTAG_PYTHON_STATUS_EXCEPTIONS_H_
#define CHAINTAG_PYTHON_STATUS_EXCEPTIONS_H_

#include <exception>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pybind11/pybind11.h"

namespace chaintag {

// A failed Status on its way to Python; the registered translator turns it
// into the exception above.
class StatusException : public std::exception {
 public:
  explicit StatusException(absl::Status status)
      : status_(std::move(status)), what_(status_.ToString()) {}
  const absl::Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  absl::Status status_;
  std::string what_;
};

inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw StatusException(status);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) throw StatusException(value.status());
  return *std::move(value);
}

// Creates the exception classes in `module` and registers the translator.
void RegisterExceptions(pybind11::module_& module);

}  // namespace chaintag

#endif  // CHAINTAG_PYTHON_STATUS_EXCEPTIONS_H_
