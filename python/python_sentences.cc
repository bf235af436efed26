#include "python/python_sentences.h"

#include <Python.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "python/status_exceptions.h"

namespace chaintag {
namespace {

namespace py = pybind11;

std::string Where(int index, Py_ssize_t token) {
  return index >= 0 ? absl::StrCat("sentence ", index, ", token ", token)
                    : absl::StrCat("token ", token);
}

// Copies a str's UTF-8 bytes into `out` (its capacity reused); CPython
// caches the UTF-8 form, and for ASCII it is the string's own buffer.
void AssignUtf8(PyObject* text, int index, Py_ssize_t token, std::string* out) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (data == nullptr) throw py::error_already_set();
  if (size == 0) {
    // The CoNLL reader never yields an empty field; an empty token would
    // hash like no token at all and silently tag noise.
    throw StatusException(absl::InvalidArgumentError(
        absl::StrCat(Where(index, token), ": empty string")));
  }
  out->assign(data, static_cast<size_t>(size));
}

void ReadColumns(PyObject* item, int num_columns, int index, Py_ssize_t token,
                 std::string* out) {
  const bool tuple = PyTuple_Check(item);
  if (!tuple && !PyList_Check(item)) {
    throw py::type_error(absl::StrCat(
        Where(index, token), ": a token is a str or a tuple of str, not ",
        Py_TYPE(item)->tp_name));
  }
  const Py_ssize_t size =
      tuple ? PyTuple_GET_SIZE(item) : PyList_GET_SIZE(item);
  if (size != num_columns) {
    throw StatusException(absl::InvalidArgumentError(
        absl::StrCat(Where(index, token), ": ", size,
                     " column(s), the model reads ", num_columns)));
  }
  for (Py_ssize_t a = 0; a < size; ++a) {
    PyObject* field =
        tuple ? PyTuple_GET_ITEM(item, a) : PyList_GET_ITEM(item, a);
    if (!PyUnicode_Check(field)) {
      throw py::type_error(absl::StrCat(Where(index, token), ", column ", a,
                                        ": expected str, got ",
                                        Py_TYPE(field)->tp_name));
    }
    AssignUtf8(field, index, token, &out[a]);
  }
}

}  // namespace

py::object SequenceItems(py::handle sequence, const char* name, int index) {
  auto named = [&] {
    return index >= 0 ? absl::StrCat(name, "[", index, "]") : std::string(name);
  };
  if (PyUnicode_Check(sequence.ptr()) || PyBytes_Check(sequence.ptr())) {
    throw py::type_error(
        absl::StrCat(named(), " must be a sequence, not a string"));
  }
  py::object fast = py::reinterpret_steal<py::object>(
      PySequence_Fast(sequence.ptr(), "not a sequence"));
  if (!fast) {
    PyErr_Clear();
    throw py::type_error(absl::StrCat(named(), " must be a sequence, got ",
                                      Py_TYPE(sequence.ptr())->tp_name));
  }
  return fast;
}

void ReadSentence(py::handle tokens, int num_columns, int index,
                  Sentence* sentence) {
  if (PyUnicode_Check(tokens.ptr()) || PyBytes_Check(tokens.ptr())) {
    throw py::type_error(
        absl::StrCat(index >= 0 ? absl::StrCat("sentence ", index, ": ") : "",
                     "a sentence is a list of tokens, not a string"));
  }
  py::object sequence = py::reinterpret_steal<py::object>(
      PySequence_Fast(tokens.ptr(), "a sentence is a list of tokens"));
  if (!sequence) throw py::error_already_set();
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence.ptr());
  PyObject** items = PySequence_Fast_ITEMS(sequence.ptr());
  sentence->num_attributes = num_columns;
  sentence->attributes.resize(static_cast<size_t>(size) * num_columns);
  for (Py_ssize_t t = 0; t < size; ++t) {
    PyObject* item = items[t];
    std::string* out = &sentence->attributes[t * num_columns];
    if (PyUnicode_Check(item)) {
      if (num_columns != 1) {
        throw StatusException(absl::InvalidArgumentError(absl::StrCat(
            Where(index, t), ": 1 column (a str), the model reads ",
            num_columns, ": give a tuple per token")));
      }
      AssignUtf8(item, index, t, out);
    } else {
      ReadColumns(item, num_columns, index, t, out);
    }
  }
}

py::str TagStrings::Get(const std::string& tag) {
  auto it = cache_.find(tag);
  if (it == cache_.end()) it = cache_.emplace(tag, py::str(tag)).first;
  return it->second;
}

py::list TagStrings::ToList(const std::vector<std::string>& tags) {
  py::list list(tags.size());
  for (size_t t = 0; t < tags.size(); ++t) {
    // PyList_SET_ITEM steals the reference release() hands over.
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(t),
                    Get(tags[t]).release().ptr());
  }
  return list;
}

}  // namespace chaintag
