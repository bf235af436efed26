// The value of a named command-line flag when the user gave it, for the
// mains that turn their named flags into config overrides
// (pipeline/flag_aliases.h).
//
// Thread-safety: reads the flag registry; call after ParseCommandLine.

#ifndef CHAINTAG_TOOLS_GIVEN_FLAG_H_
#define CHAINTAG_TOOLS_GIVEN_FLAG_H_

#include <optional>
#include <string>

#include "absl/flags/reflection.h"
#include "absl/strings/string_view.h"

namespace chaintag {

// The flag's value, unless it keeps its default (the tools' flags default to
// a "not given" value: "", -1 or 0) or this binary defines no such flag.
inline std::optional<std::string> GivenFlagValue(absl::string_view name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr || flag->CurrentValue() == flag->DefaultValue()) {
    return std::nullopt;
  }
  return flag->CurrentValue();
}

}  // namespace chaintag

#endif  // CHAINTAG_TOOLS_GIVEN_FLAG_H_
