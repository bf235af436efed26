#include "python/status_exceptions.h"

#include <Python.h>

#include <string>

#include "absl/status/status.h"

namespace chaintag {
namespace {

namespace py = pybind11;

// The classes, created once at import and kept for the life of the
// interpreter (a module's exception types are never freed).
struct ExceptionTypes {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* unimplemented = nullptr;
  PyObject* status = nullptr;
};

ExceptionTypes& Types() {
  static ExceptionTypes types;
  return types;
}

// A new class `chaintag.<name>` deriving from `bases` (a class or a tuple),
// added to `module`.
PyObject* NewException(py::module_& module, const char* name, PyObject* bases,
                       const char* doc) {
  const std::string qualified = std::string("chaintag.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases,
                                             /*dict=*/nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.add_object(name, py::reinterpret_borrow<py::object>(type));
  return type;
}

PyObject* WithError(PyObject* builtin) {
  return PyTuple_Pack(2, Types().error, builtin);
}

PyObject* TypeFor(absl::StatusCode code) {
  const ExceptionTypes& types = Types();
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return types.invalid_argument;
    case absl::StatusCode::kNotFound:
      return types.not_found;
    case absl::StatusCode::kUnimplemented:
      return types.unimplemented;
    default:
      return types.status;
  }
}

// Sets the Python error for `status`: an instance of its class with the
// message as its only argument and the code's name as `code`.
void SetPythonError(const absl::Status& status) {
  PyObject* type = TypeFor(status.code());
  const std::string message(status.message());
  PyObject* text =
      PyUnicode_DecodeUTF8(message.data(), message.size(), "replace");
  if (text == nullptr) return;  // that call's own error is set
  PyObject* exception = PyObject_CallOneArg(type, text);
  Py_DECREF(text);
  if (exception == nullptr) return;
  const std::string code = absl::StatusCodeToString(status.code());
  PyObject* code_name = PyUnicode_FromStringAndSize(code.data(), code.size());
  if (code_name != nullptr) {
    PyObject_SetAttrString(exception, "code", code_name);
    Py_DECREF(code_name);
  }
  PyErr_SetObject(type, exception);
  Py_DECREF(exception);
}

}  // namespace

void RegisterExceptions(py::module_& module) {
  ExceptionTypes& types = Types();
  types.error = NewException(module, "Error", PyExc_Exception,
                             "Base class of every chaintag error; `code` is "
                             "the absl::Status code's name.");
  PyObject* bases = WithError(PyExc_ValueError);
  types.invalid_argument = NewException(
      module, "InvalidArgumentError", bases,
      "Bad input: a malformed file, sentence or config (a ValueError).");
  Py_DECREF(bases);
  bases = WithError(PyExc_FileNotFoundError);
  types.not_found =
      NewException(module, "NotFoundError", bases,
                   "A file that does not exist (a FileNotFoundError).");
  Py_DECREF(bases);
  bases = WithError(PyExc_NotImplementedError);
  types.unimplemented =
      NewException(module, "UnimplementedError", bases,
                   "An operation this model does not support (a "
                   "NotImplementedError).");
  Py_DECREF(bases);
  bases = WithError(PyExc_OSError);
  types.status = NewException(
      module, "StatusError", bases,
      "Any other failure, e.g. a damaged model file (an OSError).");
  Py_DECREF(bases);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const StatusException& e) {
      SetPythonError(e.status());
    }
  });
}

}  // namespace chaintag
