#include "base/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace chaintag {
namespace {

// Keeps the first parse error with its line and column instead of printing.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first.empty()) {
      first = absl::StrCat(line + 1, ":", column + 1, ": ", message);
    }
  }
  std::string first;
};

// Removes the temporaries of `path` that writers which no longer run left
// behind (killed mid-write): each is as large as a model or checkpoint, and
// long runs write checkpoints again and again. A temporary whose process
// still runs, or whose name is not ours, is left alone.
void RemoveDeadWritersTemporaries(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string prefix = absl::StrCat(
      slash == std::string::npos ? path : path.substr(slash + 1), ".tmp.");
  DIR* listing = opendir(directory.c_str());
  if (listing == nullptr) return;
  while (const dirent* entry = readdir(listing)) {
    absl::string_view name = entry->d_name;
    if (!absl::ConsumePrefix(&name, prefix)) continue;
    const std::vector<absl::string_view> ids = absl::StrSplit(name, '.');
    long pid = 0, tid = 0;
    if (ids.size() != 2 || !absl::SimpleAtoi(ids[0], &pid) ||
        !absl::SimpleAtoi(ids[1], &tid) || pid <= 0 || pid == getpid()) {
      continue;
    }
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      unlink(absl::StrCat(directory, entry->d_name).c_str());
    }
  }
  closedir(listing);
}

}  // namespace

absl::Status ReadTextProto(const std::string& path, absl::string_view what,
                           google::protobuf::Message* message) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open", what));
  }
  // read(2) says why it fails (a directory opens, then EISDIR), where a
  // stream would give an empty text that parses.
  std::string text;
  char buffer[1 << 16];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": cannot read", what, ": ", std::strerror(error)));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return ParseTextProto(text, path, message);
}

absl::Status ParseTextProto(const std::string& text, absl::string_view source,
                            google::protobuf::Message* message) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, message)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", errors.first));
  }
  return absl::OkStatus();
}

absl::Status CheckWritablePath(const std::string& path,
                               absl::string_view what) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot write ", what, ": ", why));
  };
  struct stat status;
  if (stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    return refuse("it is a directory");
  }
  const size_t slash = path.rfind('/');
  const std::string directory =
      slash == std::string::npos ? "."
                                 : (slash == 0 ? "/" : path.substr(0, slash));
  if (stat(directory.c_str(), &status) != 0) {
    return refuse(
        absl::StrCat("its directory ", directory, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(status.st_mode)) {
    return refuse(absl::StrCat(directory, " is not a directory"));
  }
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return refuse(
        absl::StrCat("its directory ", directory, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& bytes,
                                 absl::string_view what) {
  // One temporary per writing thread: writers in other processes or on
  // other threads of this one never share it.
  const std::string temporary =
      absl::StrCat(path, ".tmp.", static_cast<long>(getpid()), ".",
                   static_cast<long>(gettid()));
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot write ", what, ": ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      unlink(temporary.c_str());
      return absl::DataLossError(
          absl::StrCat(temporary, ": write failed: ", std::strerror(error)));
    }
    written += static_cast<size_t>(n);
  }
  // Closed whether or not the flush worked; the first failure is reported.
  int error = fsync(fd) == 0 ? 0 : errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    unlink(temporary.c_str());
    return absl::DataLossError(absl::StrCat(temporary, ": cannot flush ", what,
                                            ": ", std::strerror(error)));
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    return absl::DataLossError(absl::StrCat(path, ": cannot rename ", temporary,
                                            ": ", std::strerror(error)));
  }
  RemoveDeadWritersTemporaries(path);
  return absl::OkStatus();
}

}  // namespace chaintag
