#include "python/python_items.h"

#include <Python.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "corpora/tokenizer.h"
#include "pybind11/stl.h"
#include "python/python_sentences.h"
#include "python/status_exceptions.h"

namespace chaintag {
namespace {

namespace py = pybind11;

// Converts one sequence's items into a Sentence's attribute lists. A name
// is assembled in one buffer (the sentence's own, or a scratch one that is
// then interned): a nested dict's prefixes ("a:") are kept in prefix_ and
// copied in front of each name.
class ItemWriter {
 public:
  ItemWriter(int sequence, Sentence* sentence, ItemNameInterner* interner)
      : sequence_(sequence), sentence_(sentence), interner_(interner) {}
  // Writes each item as a dict {name: value} into `items` instead (values
  // as given, those of 0 kept: python-crfsuite's ItemSequence.items()).
  explicit ItemWriter(py::list* items)
      : sequence_(-1), sentence_(nullptr), interner_(nullptr), dicts_(items) {}

  void AddItem(PyObject* item, int position) {
    position_ = position;
    prefix_.clear();
    if (dicts_ != nullptr) {
      dict_ = py::dict();
      dicts_->append(dict_);
    }
    if (PyDict_Check(item)) {
      AddDict(item);
    } else if (PyUnicode_Check(item) || PyBytes_Check(item)) {
      throw py::type_error(
          absl::StrCat(Where(),
                       ": an item is a list of attribute names or a dict of "
                       "features, not a string"));
    } else {
      AddNames(item);
    }
  }

 private:
  std::string Where() const {
    return sequence_ >= 0 ? absl::StrCat("X[", sequence_, "][", position_, "]")
                          : absl::StrCat("xseq[", position_, "]");
  }

  // A name's UTF-8 bytes (a str's are cached by Python, no copy).
  absl::string_view Text(PyObject* name) const {
    if (PyUnicode_Check(name) && PyUnicode_IS_COMPACT_ASCII(name)) {
      // Most names: ASCII, whose characters are the UTF-8 bytes.
      return absl::string_view(static_cast<const char*>(PyUnicode_DATA(name)),
                               static_cast<size_t>(PyUnicode_GET_LENGTH(name)));
    }
    if (PyUnicode_Check(name)) {
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(name, &size);
      if (data == nullptr) throw py::error_already_set();
      return absl::string_view(data, static_cast<size_t>(size));
    }
    if (PyBytes_Check(name)) {
      return absl::string_view(PyBytes_AS_STRING(name),
                               static_cast<size_t>(PyBytes_GET_SIZE(name)));
    }
    throw py::type_error(absl::StrCat(Where(),
                                      ": attribute names must be str or "
                                      "bytes, got ",
                                      Py_TYPE(name)->tp_name));
  }

  // The attribute prefix_ + name [+ ":" + *suffix] with `value`.
  void Add(absl::string_view name, std::optional<absl::string_view> suffix,
           double value) {
    if (dicts_ != nullptr) {
      AddToDict(name, suffix, value);
      return;
    }
    const float stored = static_cast<float>(value);
    if (!std::isfinite(stored)) {
      // The model keeps values as float32.
      throw StatusException(absl::InvalidArgumentError(absl::StrCat(
          Where(), ": the value of '", prefix_, name, "' is ", value,
          std::isfinite(value) ? "; values must be within float32's range "
                                 "(|value| <= 3.4e38)"
                               : "; values must be finite floats")));
    }
    // Read, as python-crfsuite reads False, but not kept: an attribute of
    // value 0 is no feature (features/feature_extractor.h).
    if (stored == 0.0f) return;
    std::vector<float>& values = sentence_->item_values;
    if (stored != 1.0f && values.empty()) {
      values.assign(sentence_->num_items(), 1.0f);
    }
    std::string& names =
        interner_ != nullptr ? interned_name_ : sentence_->item_names;
    if (interner_ != nullptr) names.clear();
    names.append(prefix_);
    names.append(name.data(), name.size());
    if (suffix.has_value()) {
      names.push_back(':');
      names.append(suffix->data(), suffix->size());
    }
    if (interner_ != nullptr) {
      sentence_->item_ids.push_back(interner_->Intern(names));
    } else {
      sentence_->item_name_ends.push_back(static_cast<int32_t>(names.size()));
    }
    if (!values.empty()) values.push_back(stored);
  }

  void AddToDict(absl::string_view name,
                 std::optional<absl::string_view> suffix, double value) {
    if (!std::isfinite(value)) {
      throw StatusException(absl::InvalidArgumentError(
          absl::StrCat(Where(), ": the value of '", prefix_, name, "' is ",
                       value, "; values must be finite floats")));
    }
    std::string full = absl::StrCat(prefix_, name);
    if (suffix.has_value()) absl::StrAppend(&full, ":", *suffix);
    dict_[py::str(full)] = py::float_(value);
  }

  // A list, tuple, set or other iterable of names, each with value 1.
  void AddNames(PyObject* names) {
    if (PyList_Check(names) || PyTuple_Check(names)) {
      PyObject** items = PySequence_Fast_ITEMS(names);
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(names);
      for (Py_ssize_t i = 0; i < n; ++i) Add(Text(items[i]), std::nullopt, 1.0);
      return;
    }
    py::object iterator =
        py::reinterpret_steal<py::object>(PyObject_GetIter(names));
    if (!iterator) {
      PyErr_Clear();
      throw py::type_error(
          absl::StrCat(Where(),
                       ": an item is a list of attribute names or a dict of "
                       "features, got ",
                       Py_TYPE(names)->tp_name));
    }
    while (PyObject* name = PyIter_Next(iterator.ptr())) {
      py::object owned = py::reinterpret_steal<py::object>(name);
      Add(Text(name), std::nullopt, 1.0);
    }
    if (PyErr_Occurred()) throw py::error_already_set();
  }

  void AddDict(PyObject* dict) {
    Py_ssize_t position = 0;
    PyObject* key;
    PyObject* value;
    while (PyDict_Next(dict, &position, &key, &value)) {
      const absl::string_view name = Text(key);
      if (PyUnicode_Check(value) || PyBytes_Check(value)) {
        // "name:value" (bytes as UTF-8, as python-crfsuite reads them).
        Add(name, Text(value), 1.0);
      } else if (PyFloat_CheckExact(value)) {
        Add(name, std::nullopt, PyFloat_AS_DOUBLE(value));
      } else if (PyBool_Check(value)) {
        Add(name, std::nullopt, value == Py_True ? 1.0 : 0.0);
      } else if (PyDict_Check(value) || PyList_Check(value) ||
                 PyTuple_Check(value) || PyAnySet_Check(value)) {
        AddNested(name, value);
      } else {
        Add(name, std::nullopt, Number(name, value));
      }
    }
  }

  // {"a": {...}} and {"a": [...]}: the inner attributes prefixed "a:".
  void AddNested(absl::string_view name, PyObject* value) {
    const size_t outer = prefix_.size();
    prefix_.append(name.data(), name.size());
    prefix_.push_back(':');
    if (PyDict_Check(value)) {
      AddDict(value);
    } else {
      AddNames(value);
    }
    prefix_.resize(outer);
  }

  // An int, a numpy scalar, anything with __float__.
  double Number(absl::string_view name, PyObject* value) const {
    const double number = PyFloat_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred()) {
      if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
        // A number, too large for a double (an int such as 10**400).
        PyErr_Clear();
        throw StatusException(absl::InvalidArgumentError(
            absl::StrCat(Where(), ": the value of '", prefix_, name,
                         "' is too large for a float; values must be finite "
                         "floats")));
      }
      PyErr_Clear();
      throw py::type_error(
          absl::StrCat(Where(), ": the value of '", prefix_, name,
                       "' must be a number, bool, str, dict or list, got ",
                       Py_TYPE(value)->tp_name));
    }
    return number;
  }

  const int sequence_;
  Sentence* const sentence_;
  ItemNameInterner* const interner_;
  int position_ = 0;
  std::string prefix_;
  std::string interned_name_;
  py::list* const dicts_ = nullptr;
  py::dict dict_;
};

std::string Named(const char* name, int index) {
  return index >= 0 ? absl::StrCat(name, "[", index, "]") : name;
}

void ReadLabels(py::handle yseq, int index, int length, Sentence* sentence) {
  const std::string where = Named(index >= 0 ? "y" : "yseq", index);
  py::object fast = SequenceItems(yseq, index >= 0 ? "y" : "yseq", index);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  if (n != length) {
    throw StatusException(absl::InvalidArgumentError(
        absl::StrCat(where, " has ", n, " labels for ", length, " items of ",
                     Named(index >= 0 ? "X" : "xseq", index))));
  }
  PyObject** labels = PySequence_Fast_ITEMS(fast.ptr());
  sentence->tags.resize(n);
  for (Py_ssize_t t = 0; t < n; ++t) {
    Py_ssize_t size = 0;
    const char* data = nullptr;
    if (PyUnicode_Check(labels[t])) {
      data = PyUnicode_AsUTF8AndSize(labels[t], &size);
    } else if (PyBytes_Check(labels[t])) {
      // As python-crfsuite: UTF-8 bytes, read back as str.
      data = PyBytes_AS_STRING(labels[t]);
      size = PyBytes_GET_SIZE(labels[t]);
      const absl::string_view bytes(data, static_cast<size_t>(size));
      if (SanitizeUtf8(bytes) != bytes) {
        throw StatusException(absl::InvalidArgumentError(
            absl::StrCat(where, "[", t, "]: a bytes label must be UTF-8")));
      }
    }
    if (data == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      throw py::type_error(absl::StrCat(where, "[", t,
                                        "]: labels must be str or bytes, got ",
                                        Py_TYPE(labels[t])->tp_name));
    }
    if (size == 0) {
      throw StatusException(absl::InvalidArgumentError(
          absl::StrCat(where, "[", t, "]: a label must not be empty")));
    }
    sentence->tags[t].assign(data, static_cast<size_t>(size));
  }
}

}  // namespace

void ReadItemSequence(py::handle xseq, py::handle yseq, int index,
                      Sentence* sentence, ItemNameInterner* interner) {
  py::object items = SequenceItems(xseq, index >= 0 ? "X" : "xseq", index);
  const Py_ssize_t T = PySequence_Fast_GET_SIZE(items.ptr());
  PyObject** item = PySequence_Fast_ITEMS(items.ptr());
  sentence->num_attributes = 0;
  sentence->attributes.clear();
  sentence->item_names.clear();
  sentence->item_name_ends.clear();
  sentence->item_ids.clear();
  sentence->shared_item_names =
      interner != nullptr ? interner->table() : nullptr;
  sentence->item_values.clear();
  sentence->item_begin.assign(1, 0);
  sentence->lines.clear();
  sentence->source = Named("X", index);
  sentence->first_line = 0;
  ItemWriter writer(index, sentence, interner);
  for (Py_ssize_t t = 0; t < T; ++t) {
    writer.AddItem(item[t], static_cast<int>(t));
    sentence->item_begin.push_back(static_cast<int32_t>(sentence->num_items()));
  }
  if (yseq.is_none()) {
    sentence->tags.clear();
  } else {
    ReadLabels(yseq, index, static_cast<int>(T), sentence);
  }
}

void ItemSequences::Append(py::handle xseq, py::handle yseq) {
  // Converted into reused buffers, then copied at its exact size: a
  // growing buffer's spare capacity would stay for the whole run.
  thread_local Sentence scratch;
  ReadItemSequence(xseq, yseq, size(), &scratch, &interner_);
  num_items_ += scratch.size();
  num_attributes_ += scratch.num_items();
  sentences_.push_back(scratch);
}

void ItemSequences::Extend(py::handle xs, py::handle ys) {
  py::object x = SequenceItems(xs, "X");
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(x.ptr());
  py::object y;
  if (!ys.is_none()) {
    y = SequenceItems(ys, "y");
    if (PySequence_Fast_GET_SIZE(y.ptr()) != n) {
      throw StatusException(absl::InvalidArgumentError(
          absl::StrCat("X has ", n, " sequences but y has ",
                       PySequence_Fast_GET_SIZE(y.ptr()))));
    }
  }
  sentences_.reserve(sentences_.size() + n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    Append(PySequence_Fast_GET_ITEM(x.ptr(), i),
           y ? py::handle(PySequence_Fast_GET_ITEM(y.ptr(), i))
             : py::handle(Py_None));
  }
}

void ItemSequences::Add(const ItemSequences& other) {
  sentences_.insert(sentences_.end(), other.sentences_.begin(),
                    other.sentences_.end());
  num_items_ += other.num_items_;
  num_attributes_ += other.num_attributes_;
}

py::list ItemDicts(py::handle xseq) {
  py::object items = SequenceItems(xseq, "xseq", -1);
  const Py_ssize_t T = PySequence_Fast_GET_SIZE(items.ptr());
  PyObject** item = PySequence_Fast_ITEMS(items.ptr());
  py::list dicts;
  ItemWriter writer(&dicts);
  for (Py_ssize_t t = 0; t < T; ++t) {
    writer.AddItem(item[t], static_cast<int>(t));
  }
  return dicts;
}

std::vector<Sentence> ItemSequences::Take() {
  num_items_ = 0;
  num_attributes_ = 0;
  return std::exchange(sentences_, {});
}

namespace {

const Sentence& SequenceAt(ItemSequences& self, int i) {
  if (i < 0) i += self.size();
  if (i < 0 || i >= self.size()) throw py::index_error("sequence index");
  return self.sentences()[i];
}

}  // namespace

void RegisterItemSequences(py::module_& module) {
  module.def("item_dicts", &ItemDicts, py::arg("xseq"),
             "One sequence's items as dicts {attribute: value}, read as "
             "training reads them but with values as given and those of 0 "
             "kept (python-crfsuite's ItemSequence.items()).");
  py::class_<ItemSequences>(
      module, "ItemSequences",
      "Item sequences (and labels) converted for training or tagging: "
      "python-crfsuite's item forms, held compactly in C++.")
      .def(py::init<>())
      .def(py::init([](py::handle xs, py::handle ys) {
             auto sequences = std::make_unique<ItemSequences>();
             sequences->Extend(xs, ys);
             return sequences;
           }),
           py::arg("X"), py::arg("y") = py::none())
      .def("append", &ItemSequences::Append, py::arg("xseq"),
           py::arg("yseq") = py::none(),
           "Adds one sequence: a list of items (a list of names or a dict "
           "of features each) and its labels (or None).")
      .def("extend", &ItemSequences::Extend, py::arg("X"),
           py::arg("y") = py::none(), "Adds every sequence of X (and y).")
      .def(
          "add",
          [](ItemSequences& self, ItemSequences& other) {
            if (&self == &other) {
              throw py::value_error("cannot add ItemSequences to itself");
            }
            self.Add(other);
          },
          py::arg("other"), "Appends copies of another's sequences.")
      .def("__len__", &ItemSequences::size)
      .def_property_readonly("num_items", &ItemSequences::num_items,
                             "Items (tokens) in all the sequences.")
      .def_property_readonly("num_attributes", &ItemSequences::num_attributes,
                             "Attributes in all the items.")
      .def_property_readonly("num_distinct_names",
                             &ItemSequences::num_distinct_names,
                             "Distinct attribute names (each kept once).")
      .def(
          "attributes",
          [](ItemSequences& self, int i) {
            const Sentence& sentence = SequenceAt(self, i);
            py::list out(sentence.size());
            for (int t = 0; t < sentence.size(); ++t) {
              py::list item;
              for (int k = sentence.item_begin[t];
                   k < sentence.item_begin[t + 1]; ++k) {
                const absl::string_view name = sentence.item_name(k);
                item.append(py::make_tuple(
                    py::str(name.data(), name.size()),
                    static_cast<double>(sentence.item_value(k))));
              }
              PyList_SET_ITEM(out.ptr(), t, item.release().ptr());
            }
            return out;
          },
          py::arg("i"),
          "Sequence i's items as lists of (name, value), as converted.")
      .def(
          "labels",
          [](ItemSequences& self, int i) { return SequenceAt(self, i).tags; },
          py::arg("i"));
}

}  // namespace chaintag
