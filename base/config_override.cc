#include "base/config_override.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"

namespace chaintag {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Reflection;

std::string KnownFields(const Descriptor& descriptor) {
  std::vector<std::string> names;
  for (int i = 0; i < descriptor.field_count(); ++i) {
    names.push_back(descriptor.field(i)->name());
  }
  return absl::StrJoin(names, ", ");
}

std::string KnownValues(const EnumDescriptor& descriptor) {
  std::vector<std::string> names;
  for (int i = 0; i < descriptor.value_count(); ++i) {
    names.push_back(absl::AsciiStrToLower(descriptor.value(i)->name()));
  }
  return absl::StrJoin(names, ", ");
}

// Stores `value` into the scalar `field` of `message`: sets it, or, for a
// repeated field, adds it. `what` names the field in errors.
absl::Status StoreScalar(const FieldDescriptor& field, absl::string_view what,
                         absl::string_view value,
                         google::protobuf::Message* message) {
  const Reflection& reflection = *message->GetReflection();
  const bool add = field.is_repeated();
  auto bad_value = [&](absl::string_view expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", value, "\" is not ", expected));
  };
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad_value("a 32-bit integer");
      add ? reflection.AddInt32(message, &field, v)
          : reflection.SetInt32(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad_value("a 64-bit integer");
      add ? reflection.AddInt64(message, &field, v)
          : reflection.SetInt64(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!absl::SimpleAtoi(value, &v)) {
        return bad_value("an unsigned 32-bit integer");
      }
      add ? reflection.AddUInt32(message, &field, v)
          : reflection.SetUInt32(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!absl::SimpleAtoi(value, &v)) {
        return bad_value("an unsigned 64-bit integer");
      }
      add ? reflection.AddUInt64(message, &field, v)
          : reflection.SetUInt64(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!absl::SimpleAtod(value, &v)) return bad_value("a number");
      add ? reflection.AddDouble(message, &field, v)
          : reflection.SetDouble(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      float v;
      if (!absl::SimpleAtof(value, &v)) return bad_value("a number");
      add ? reflection.AddFloat(message, &field, v)
          : reflection.SetFloat(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!absl::SimpleAtob(value, &v)) return bad_value("true or false");
      add ? reflection.AddBool(message, &field, v)
          : reflection.SetBool(message, &field, v);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      add ? reflection.AddString(message, &field, std::string(value))
          : reflection.SetString(message, &field, std::string(value));
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumDescriptor& type = *field.enum_type();
      const EnumValueDescriptor* found = nullptr;
      for (int i = 0; i < type.value_count(); ++i) {
        if (absl::EqualsIgnoreCase(type.value(i)->name(), value)) {
          found = type.value(i);
        }
      }
      if (found == nullptr) {
        return bad_value(absl::StrCat("one of ", KnownValues(type)));
      }
      add ? reflection.AddEnum(message, &field, found)
          : reflection.SetEnum(message, &field, found);
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": unsupported field type"));
  }
  return absl::OkStatus();
}

// Sets the scalar field `name` of `message` from `value`: a singular field
// from its text, a repeated one from a list "[v1,v2,...]" that replaces its
// values. On an error the message is unchanged.
absl::Status SetScalarField(absl::string_view name, absl::string_view value,
                            google::protobuf::Message* message) {
  const Descriptor& descriptor = *message->GetDescriptor();
  const FieldDescriptor* field = descriptor.FindFieldByName(std::string(name));
  if (field == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(descriptor.name(), " has no field \"", name,
                     "\" (fields: ", KnownFields(descriptor), ")"));
  }
  const std::string what = absl::StrCat(descriptor.name(), ".", name);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, field->is_repeated() ? " is a list of messages" : " is a message",
        ", not a scalar field; set it in the config file"));
  }
  if (!field->is_repeated()) return StoreScalar(*field, what, value, message);
  if (value.size() < 2 || value.front() != '[' || value.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat(
        what,
        " is a repeated field: give its values as a list in brackets, "
        "which replaces them (",
        name, "=[v1,v2], or [] for none), not \"", value, "\""));
  }
  // Parsed into a copy first, so that a bad element changes nothing.
  std::unique_ptr<google::protobuf::Message> parsed(message->New());
  const absl::string_view list =
      absl::StripAsciiWhitespace(value.substr(1, value.size() - 2));
  if (!list.empty()) {
    for (absl::string_view element : absl::StrSplit(list, ',')) {
      absl::Status stored = StoreScalar(
          *field, what, absl::StripAsciiWhitespace(element), parsed.get());
      if (!stored.ok()) return stored;
    }
  }
  const Reflection& reflection = *message->GetReflection();
  reflection.ClearField(message, field);
  reflection.SwapFields(message, parsed.get(), {field});
  return absl::OkStatus();
}

}  // namespace

absl::Status SetFieldByPath(absl::string_view path, absl::string_view value,
                            google::protobuf::Message* root) {
  const std::vector<absl::string_view> parts = absl::StrSplit(path, '.');
  google::protobuf::Message* message = root;
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    const Descriptor& descriptor = *message->GetDescriptor();
    const FieldDescriptor* field =
        descriptor.FindFieldByName(std::string(parts[k]));
    if (field == nullptr ||
        field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
        field->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", descriptor.name(), " has no message field \"", parts[k],
          "\" (fields: ", KnownFields(descriptor), ")"));
    }
    message = message->GetReflection()->MutableMessage(message, field);
  }
  absl::Status status = SetScalarField(parts.back(), value, message);
  if (!status.ok() && parts.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", status.message()));
  }
  return status;
}

absl::StatusOr<std::string> FieldDefaultByPath(const Descriptor& root,
                                               absl::string_view path) {
  const std::vector<absl::string_view> parts = absl::StrSplit(path, '.');
  const Descriptor* descriptor = &root;
  const FieldDescriptor* field = nullptr;
  for (size_t k = 0; k < parts.size(); ++k) {
    field = descriptor->FindFieldByName(std::string(parts[k]));
    const bool last = k + 1 == parts.size();
    const bool message = field != nullptr &&
                         field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (field == nullptr || field->is_repeated() || message == last) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", descriptor->name(), " has no single ",
                       last ? "scalar" : "message", " field \"", parts[k],
                       "\" (fields: ", KnownFields(*descriptor), ")"));
    }
    if (!last) descriptor = field->message_type();
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(field->default_value_int32());
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(field->default_value_int64());
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(field->default_value_uint32());
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(field->default_value_uint64());
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%.17g", field->default_value_double());
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrFormat("%.9g", field->default_value_float());
    case FieldDescriptor::CPPTYPE_BOOL:
      return std::string(field->default_value_bool() ? "true" : "false");
    case FieldDescriptor::CPPTYPE_STRING:
      return field->default_value_string();
    case FieldDescriptor::CPPTYPE_ENUM:
      return absl::AsciiStrToLower(field->default_value_enum()->name());
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": unsupported field type"));
  }
}

absl::Status ApplyAssignment(absl::string_view assignment,
                             google::protobuf::Message* root) {
  const size_t equals = assignment.find('=');
  if (equals == absl::string_view::npos || equals == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", assignment, "\" is not path=value (e.g. solver.lambda=1e-4)"));
  }
  return SetFieldByPath(assignment.substr(0, equals),
                        assignment.substr(equals + 1), root);
}

absl::StatusOr<std::vector<std::string>> JoinListPieces(
    absl::Span<const std::string> pieces) {
  std::vector<std::string> assignments;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string assignment = pieces[i];
    const size_t equals = assignment.find('=');
    // A value that opens a list: the pieces up to the one that closes it
    // are its elements, which Abseil's flag parser split at their commas.
    if (equals != std::string::npos && equals + 1 < assignment.size() &&
        assignment[equals + 1] == '[') {
      while (assignment.back() != ']' && i + 1 < pieces.size()) {
        absl::StrAppend(&assignment, ",", pieces[++i]);
      }
      if (assignment.back() != ']') {
        return absl::InvalidArgumentError(
            absl::StrCat("\"", assignment,
                         "\": the list has no closing ']' (a list is "
                         "[v1,v2,...])"));
      }
    }
    assignments.push_back(std::move(assignment));
  }
  return assignments;
}

absl::Status ApplyAssignments(absl::Span<const std::string> assignments,
                              google::protobuf::Message* root) {
  absl::StatusOr<std::vector<std::string>> joined = JoinListPieces(assignments);
  if (!joined.ok()) return joined.status();
  for (const std::string& assignment : *joined) {
    absl::Status status = ApplyAssignment(assignment, root);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace chaintag
