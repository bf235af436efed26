// serve_load: a load and abuse client for the tagging service (//tools:serve),
// on plain POSIX sockets so that it can also send what no HTTP library
// would: requests byte by byte, oversized bodies, connections dropped
// half-way. Every mode prints one JSON line of results on stdout.
//
//   --mode=load: --connections keep-alive connections, each on its own
//     thread, send --requests POSTs to /v1/tag (or run for --seconds), the
//     bodies of --bodies (one JSON body a line) round-robin; a
//     --malformed_fraction of them, chosen by a --seed'ed hash of the
//     request number, is replaced by a malformed request (invalid JSON, not
//     UTF-8, wrong content type, missing or mistyped fields), which must get
//     a 4xx. With --expected (one line per body: the answer's "sentences"
//     array, or a whole answer), each 200 answer's "sentences" array must
//     equal it byte for byte; with --expected2, answers that claim a
//     model.generation >= --expected2_from_generation are compared with
//     --expected2 instead (a reload under load). Exit status 1 when an
//     answer is wrong or a request failed (unless --allow_errors).
//   --mode=slow: a valid request, one byte per --byte_interval_ms; reports
//     whether and when the server cut it. Exit 0 when it was cut.
//   --mode=big: a --big_mb body streamed under its full Content-Length;
//     reports the status (413 expected) and whether the upload was cut
//     early. Exit 0 on 413.
//   --mode=connections: --count connections, as many at once as the fd
//     limit allows (raised to the hard limit), each dropped without a
//     request or after a partial request line. Exit 0 when all connected.
//
//   serve_load --url=http://127.0.0.1:8080 --mode=load --connections=64
//     --requests=100000 --bodies=bodies.jsonl --expected=expected.jsonl
//
// Every socket operation has a timeout (--timeout_ms); SIGPIPE is ignored.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

ABSL_FLAG(std::string, url, "http://127.0.0.1:8080", "The server's URL.");
ABSL_FLAG(std::string, mode, "load", "load | slow | big | connections");
ABSL_FLAG(int, connections, 8, "load: keep-alive connections (threads).");
ABSL_FLAG(int64_t, requests, 1000,
          "load: requests in all; 0 runs for --seconds instead.");
ABSL_FLAG(double, seconds, 10, "load: duration when --requests=0.");
ABSL_FLAG(std::string, bodies, "",
          "load: file of JSON request bodies, one a line.");
ABSL_FLAG(std::string, expected, "",
          "load: for each body line, the answer's \"sentences\" array or the "
          "whole answer.");
ABSL_FLAG(std::string, expected2, "",
          "load: as --expected, for the answers of the reloaded model.");
ABSL_FLAG(int64_t, expected2_from_generation, 2,
          "load: answers claiming this model.generation or a later one are "
          "compared with --expected2.");
ABSL_FLAG(double, malformed_fraction, 0.01,
          "load: fraction of requests replaced by malformed ones.");
ABSL_FLAG(uint64_t, seed, 1, "load: seed of the malformed requests' choice.");
ABSL_FLAG(bool, allow_errors, false,
          "load: exit 0 despite failed requests (not despite wrong answers).");
ABSL_FLAG(int, timeout_ms, 30000, "Timeout of every socket operation.");
ABSL_FLAG(int, byte_interval_ms, 1000, "slow: pause between bytes.");
ABSL_FLAG(double, max_seconds, 120, "slow: give up (not cut) after this.");
ABSL_FLAG(int, big_mb, 100, "big: body size in MiB.");
ABSL_FLAG(int, count, 10000, "connections: connections to open and drop.");

namespace chaintag {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Endpoint {
  std::string host_port;  // for the Host header
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
};

absl::StatusOr<Endpoint> ParseUrl(const std::string& url) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--url must start with http://: ", url));
  }
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  std::string host(rest.substr(0, colon));
  std::string port = colon == absl::string_view::npos
                         ? "80"
                         : std::string(rest.substr(colon + 1));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int err = getaddrinfo(host.c_str(), port.c_str(), &hints, &found)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--url ", url, ": ", gai_strerror(err)));
  }
  Endpoint endpoint;
  endpoint.host_port = std::string(rest);
  std::memcpy(&endpoint.addr, found->ai_addr, found->ai_addrlen);
  endpoint.addr_len = found->ai_addrlen;
  freeaddrinfo(found);
  return endpoint;
}

// A non-blocking socket whose connect to `endpoint` is under way; -1 on
// failure, with errno set.
int StartConnect(const Endpoint& endpoint) {
  int fd = socket(endpoint.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&endpoint.addr),
              endpoint.addr_len) != 0 &&
      errno != EINPROGRESS) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// The socket's pending connect error (0 once connected).
int ConnectError(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

// A connected blocking socket with send and receive timeouts; -1 on
// failure, with errno set (ETIMEDOUT when the connect timed out).
int Connect(const Endpoint& endpoint, int timeout_ms) {
  int fd = StartConnect(endpoint);
  if (fd < 0) return -1;
  pollfd p{fd, POLLOUT, 0};
  int err = poll(&p, 1, timeout_ms) == 1 ? ConnectError(fd) : ETIMEDOUT;
  if (err != 0) {
    close(fd);
    errno = err;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(n);
  }
  return true;
}

std::string Request(const Endpoint& endpoint, absl::string_view method,
                    absl::string_view path, absl::string_view content_type,
                    absl::string_view body) {
  return absl::StrCat(method, " ", path,
                      " HTTP/1.1\r\nHost: ", endpoint.host_port,
                      "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\n\r\n", body);
}

enum class ReadResult { kOk, kClosed, kTimeout, kError };

struct Response {
  int status = 0;
  bool close = false;  // the server closes the connection after it
  std::string body;
};

// Reads HTTP/1.1 responses off one connection, keeping what it read past
// the end of one response for the next.
class ResponseReader {
 public:
  explicit ResponseReader(int fd = -1) : fd_(fd) {}

  // Starts over on a new connection.
  void Reset(int fd) {
    fd_ = fd;
    buffer_.clear();
  }

  // kClosed: the connection ended before the first byte of the response.
  ReadResult Read(Response* response) {
    size_t header_end;
    while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (ReadResult r = Fill(); r != ReadResult::kOk) {
        return r == ReadResult::kClosed && !buffer_.empty() ? ReadResult::kError
                                                            : r;
      }
    }
    std::vector<absl::string_view> lines = absl::StrSplit(
        absl::string_view(buffer_).substr(0, header_end), "\r\n");
    std::vector<absl::string_view> status_line =
        absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
    if (status_line.size() < 2 ||
        !absl::SimpleAtoi(status_line[1], &response->status)) {
      return ReadResult::kError;
    }
    int64_t length = -1;
    bool chunked = false;
    response->close = absl::StartsWith(lines[0], "HTTP/1.0");
    for (size_t i = 1; i < lines.size(); ++i) {
      const size_t colon = lines[i].find(':');
      if (colon == absl::string_view::npos) continue;
      std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      std::string value = absl::AsciiStrToLower(
          absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      if (name == "content-length" && !absl::SimpleAtoi(value, &length)) {
        return ReadResult::kError;
      }
      if (name == "transfer-encoding") chunked = value == "chunked";
      if (name == "connection") response->close = value == "close";
    }
    buffer_.erase(0, header_end + 4);
    if (chunked) return ReadChunked(response);
    if (length < 0) {  // up to the end of the connection
      ReadResult r;
      while ((r = Fill()) == ReadResult::kOk) {
      }
      if (r != ReadResult::kClosed) return r;
      response->body = std::move(buffer_);
      buffer_.clear();
      response->close = true;
      return ReadResult::kOk;
    }
    return Take(length, &response->body);
  }

 private:
  ReadResult Fill() {
    char chunk[65536];
    while (true) {
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, n);
        return ReadResult::kOk;
      }
      if (n == 0) return ReadResult::kClosed;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? ReadResult::kTimeout
                                                     : ReadResult::kError;
    }
  }

  // Moves `length` bytes of the stream into `out`.
  ReadResult Take(size_t length, std::string* out) {
    while (buffer_.size() < length) {
      ReadResult r = Fill();
      if (r != ReadResult::kOk)
        return r == ReadResult::kClosed ? ReadResult::kError : r;
    }
    out->append(buffer_, 0, length);
    buffer_.erase(0, length);
    return ReadResult::kOk;
  }

  ReadResult ReadChunked(Response* response) {
    while (true) {
      size_t line_end;
      while ((line_end = buffer_.find("\r\n")) == std::string::npos) {
        ReadResult r = Fill();
        if (r != ReadResult::kOk)
          return r == ReadResult::kClosed ? ReadResult::kError : r;
      }
      std::string size_text = buffer_.substr(0, buffer_.find_first_of(";\r"));
      size_t size = 0;
      if (!absl::SimpleHexAtoi(size_text, &size)) return ReadResult::kError;
      buffer_.erase(0, line_end + 2);
      std::string ignored;
      if (size == 0) {  // no trailers expected: just the final CRLF
        return Take(2, &ignored);
      }
      if (ReadResult r = Take(size, &response->body); r != ReadResult::kOk)
        return r;
      if (ReadResult r = Take(2, &ignored); r != ReadResult::kOk) return r;
    }
  }

  int fd_;
  std::string buffer_;
};

// ---- JSON: just enough to find members, compared as text ----

size_t SkipSpace(absl::string_view s, size_t i) {
  while (i < s.size() &&
         (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
    ++i;
  return i;
}

// The end of the JSON value starting at s[i] (after spaces), or npos.
size_t SkipValue(absl::string_view s, size_t i) {
  i = SkipSpace(s, i);
  if (i >= s.size()) return absl::string_view::npos;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        return i + 1;
      }
    }
    return absl::string_view::npos;
  }
  if (s[i] == '{' || s[i] == '[') {
    const char close = s[i] == '{' ? '}' : ']';
    i = SkipSpace(s, i + 1);
    if (i < s.size() && s[i] == close) return i + 1;
    while (true) {
      if (close == '}') {
        i = SkipValue(s, i);  // the key
        i = SkipSpace(s, i);
        if (i >= s.size() || s[i] != ':') return absl::string_view::npos;
        ++i;
      }
      i = SkipSpace(s, SkipValue(s, i));
      if (i >= s.size()) return absl::string_view::npos;
      if (s[i] == close) return i + 1;
      if (s[i] != ',') return absl::string_view::npos;
      ++i;
    }
  }
  while (i < s.size() && std::strchr(",}] \t\r\n", s[i]) == nullptr) ++i;
  return i;
}

// The text of member `key` of the JSON object `object` (not of nested
// objects), or nullopt.
std::optional<absl::string_view> Member(absl::string_view object,
                                        absl::string_view key) {
  size_t i = SkipSpace(object, 0);
  if (i >= object.size() || object[i] != '{') return std::nullopt;
  i = SkipSpace(object, i + 1);
  while (i < object.size() && object[i] == '"') {
    const size_t key_end = SkipValue(object, i);
    if (key_end == absl::string_view::npos) return std::nullopt;
    const absl::string_view name = object.substr(i + 1, key_end - i - 2);
    i = SkipSpace(object, key_end);
    if (i >= object.size() || object[i] != ':') return std::nullopt;
    const size_t begin = SkipSpace(object, i + 1);
    const size_t end = SkipValue(object, begin);
    if (end == absl::string_view::npos) return std::nullopt;
    if (name == key) return object.substr(begin, end - begin);
    i = SkipSpace(object, end);
    if (i < object.size() && object[i] == ',') i = SkipSpace(object, i + 1);
  }
  return std::nullopt;
}

int64_t IntMember(absl::string_view object, absl::string_view key) {
  int64_t value = -1;
  std::optional<absl::string_view> text = Member(object, key);
  if (!text.has_value() || !absl::SimpleAtoi(*text, &value)) return -1;
  return value;
}

// ---- load ----

absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// Expected "sentences" arrays: whole answers are cut down to theirs.
absl::StatusOr<std::vector<std::string>> ReadExpected(const std::string& path,
                                                      size_t bodies) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  if (lines->size() != bodies) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", lines->size(), " lines for ", bodies, " bodies"));
  }
  for (size_t i = 0; i < lines->size(); ++i) {
    std::string& line = (*lines)[i];
    if (line[0] == '[') continue;
    std::optional<absl::string_view> sentences = Member(line, "sentences");
    if (!sentences.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", i + 1,
                       ": neither an array nor an object with \"sentences\""));
    }
    line = std::string(*sentences);
  }
  return lines;
}

// Request `index`'s random choices are a hash of (seed, index), not draws
// from one generator (base/random.h): which requests are malformed then
// does not depend on how the connection threads interleave.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Malformed request number `kind` (of kMalformedKinds), each a 4xx.
constexpr int kMalformedKinds = 8;
std::string MalformedRequest(const Endpoint& endpoint, int kind,
                             absl::string_view body) {
  constexpr absl::string_view kJson = "application/json";
  switch (kind) {
    case 0:  // a proper prefix of an object is never valid JSON
      return Request(endpoint, "POST", "/v1/tag", kJson,
                     body.substr(0, body.size() / 2));
    case 1:
      return Request(endpoint, "POST", "/v1/tag", kJson,
                     "{\"text\":\"caf\xe9 \xff\xfe.\"}");
    case 2:
      return Request(endpoint, "POST", "/v1/tag", "text/plain", body);
    case 3:
      return Request(endpoint, "POST", "/v1/tag", kJson, "{\"nbest\":2}");
    case 4:
      return Request(endpoint, "POST", "/v1/tag", kJson, "{\"text\":42}");
    case 5:
      return Request(endpoint, "POST", "/v1/tag", kJson,
                     "{\"text\":\"a\",\"sentences\":[{\"tokens\":[\"a\"]}]}");
    case 6:
      return Request(endpoint, "POST", "/v1/tag", kJson,
                     "{\"text\":\"He left.\",\"nbest\":0}");
    default:
      return Request(endpoint, "POST", "/v1/tag", kJson, "[1,2]");
  }
}

struct LoadOptions {
  Endpoint endpoint;
  std::vector<std::string> bodies;
  std::vector<std::string> expected, expected2;
  int64_t expected2_from_generation = 2;
  int64_t requests = 0;  // 0: until `deadline`
  Clock::time_point deadline;
  double malformed_fraction = 0;
  uint64_t seed = 1;
  int timeout_ms = 30000;
};

struct GenerationCounts {
  int64_t answers = 0, wrong = 0;
};

struct LoadStats {
  int64_t requests = 0, ok = 0, malformed = 0, malformed_4xx = 0, wrong = 0;
  int64_t refused = 0, closed = 0, timeouts = 0, io_errors = 0, unavailable = 0;
  int64_t retries = 0, tokens = 0;
  int64_t reported = 0;  // wrong answers printed
  std::vector<double> latencies_ms;
  std::map<int, int64_t> statuses;
  std::map<int64_t, GenerationCounts> generations;

  int64_t errors() const {
    return refused + closed + timeouts + io_errors + unavailable;
  }

  void Add(const LoadStats& o) {
    requests += o.requests, ok += o.ok, malformed += o.malformed;
    malformed_4xx += o.malformed_4xx, wrong += o.wrong, refused += o.refused;
    closed += o.closed, timeouts += o.timeouts, io_errors += o.io_errors;
    unavailable += o.unavailable, retries += o.retries, tokens += o.tokens;
    latencies_ms.insert(latencies_ms.end(), o.latencies_ms.begin(),
                        o.latencies_ms.end());
    for (const auto& [status, n] : o.statuses) statuses[status] += n;
    for (const auto& [g, c] : o.generations) {
      generations[g].answers += c.answers;
      generations[g].wrong += c.wrong;
    }
  }
};

// One line on stderr per wrong answer, the first 10 of each thread (stdio
// writes each call's line whole, whatever the other threads print).
void ReportWrong(int64_t index, absl::string_view why, const Response& response,
                 LoadStats* stats) {
  if (++stats->reported > 10) return;
  std::fputs(
      absl::StrCat("serve_load: request ", index, ": ", why, ": HTTP ",
                   response.status, " ", response.body.substr(0, 400), "\n")
          .c_str(),
      stderr);
}

// Judges one answer: well-formed requests need a 200 with the expected
// sentences of the generation the answer claims, malformed ones a 4xx.
void Judge(const LoadOptions& options, int64_t index, size_t body,
           bool malformed, const Response& response, LoadStats* stats) {
  ++stats->statuses[response.status];
  if (response.status == 503) {  // documented: overloaded or draining
    ++stats->unavailable;
    return;
  }
  if (malformed) {
    if (response.status >= 400 && response.status < 500) {
      ++stats->malformed_4xx;
    } else {
      ++stats->wrong;
      ReportWrong(index, "malformed request not answered 4xx", response, stats);
    }
    return;
  }
  if (response.status != 200) {
    ++stats->wrong;
    ReportWrong(index, "well-formed request not answered 200", response, stats);
    return;
  }
  std::optional<absl::string_view> model = Member(response.body, "model");
  const int64_t generation =
      model.has_value() ? IntMember(*model, "generation") : -1;
  GenerationCounts& counts = stats->generations[generation];
  ++counts.answers;
  const std::vector<std::string>& expected =
      !options.expected2.empty() &&
              generation >= options.expected2_from_generation
          ? options.expected2
          : options.expected;
  if (!expected.empty()) {
    std::optional<absl::string_view> sentences =
        Member(response.body, "sentences");
    if (!sentences.has_value() || *sentences != expected[body]) {
      ++stats->wrong;
      ++counts.wrong;
      ReportWrong(
          index,
          absl::StrCat("answer differs from the expected one of body line ",
                       body + 1, " (generation ", generation, ")"),
          response, stats);
      return;
    }
  }
  ++stats->ok;
  stats->tokens += std::max<int64_t>(0, IntMember(response.body, "tokens"));
}

void LoadThread(const LoadOptions& options, std::atomic<int64_t>* next,
                LoadStats* stats) {
  int fd = -1;
  ResponseReader reader;
  int64_t on_connection = 0;  // requests answered on `fd`
  auto drop = [&] {
    if (fd >= 0) close(fd);
    fd = -1;
  };
  while (true) {
    const int64_t index = next->fetch_add(1);
    if (options.requests > 0 ? index >= options.requests
                             : Clock::now() >= options.deadline) {
      break;
    }
    ++stats->requests;
    const uint64_t h = SplitMix64(options.seed * 0x100000001b3ULL + index);
    const bool malformed =
        static_cast<double>(h >> 11) * 0x1.0p-53 < options.malformed_fraction;
    const size_t body = index % options.bodies.size();
    const std::string request =
        malformed ? MalformedRequest(options.endpoint,
                                     SplitMix64(h) % kMalformedKinds,
                                     options.bodies[body])
                  : Request(options.endpoint, "POST", "/v1/tag",
                            "application/json", options.bodies[body]);
    stats->malformed += malformed;
    // A reused connection that the server closed while idle fails before
    // any byte of the answer: that is retried once, on a new connection.
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (fd < 0) {
        fd = Connect(options.endpoint, options.timeout_ms);
        if (fd < 0) {
          ++(errno == ETIMEDOUT ? stats->timeouts : stats->refused);
          if (errno != ETIMEDOUT)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          break;
        }
        reader.Reset(fd);
        on_connection = 0;
      }
      const Clock::time_point start = Clock::now();
      Response response;
      ReadResult result = SendAll(fd, request) ? reader.Read(&response)
                          : errno == EAGAIN    ? ReadResult::kTimeout
                                               : ReadResult::kClosed;
      if (result == ReadResult::kOk) {
        stats->latencies_ms.push_back(SecondsSince(start) * 1e3);
        Judge(options, index, body, malformed, response, stats);
        ++on_connection;
        if (response.close) drop();
        break;
      }
      const bool stale = result == ReadResult::kClosed && on_connection > 0;
      drop();
      if (stale && attempt == 0) {
        ++stats->retries;
        continue;
      }
      ++(result == ReadResult::kTimeout  ? stats->timeouts
         : result == ReadResult::kClosed ? stats->closed
                                         : stats->io_errors);
      break;
    }
  }
  drop();
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1,
                         static_cast<size_t>(q * sorted.size()))];
}

int RunLoad(const Endpoint& endpoint) {
  LoadOptions options;
  options.endpoint = endpoint;
  absl::StatusOr<std::vector<std::string>> bodies =
      ReadLines(absl::GetFlag(FLAGS_bodies));
  if (!bodies.ok() || bodies->empty()) {
    std::cerr << "serve_load: --bodies: "
              << (bodies.ok() ? "no bodies" : bodies.status().ToString())
              << "\n";
    return 2;
  }
  options.bodies = *std::move(bodies);
  for (auto [flag, out] :
       {std::pair{absl::GetFlag(FLAGS_expected), &options.expected},
        std::pair{absl::GetFlag(FLAGS_expected2), &options.expected2}}) {
    if (flag.empty()) continue;
    absl::StatusOr<std::vector<std::string>> expected =
        ReadExpected(flag, options.bodies.size());
    if (!expected.ok()) {
      std::cerr << "serve_load: " << expected.status() << "\n";
      return 2;
    }
    *out = *std::move(expected);
  }
  options.expected2_from_generation =
      absl::GetFlag(FLAGS_expected2_from_generation);
  options.requests = absl::GetFlag(FLAGS_requests);
  options.malformed_fraction = absl::GetFlag(FLAGS_malformed_fraction);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const int connections = std::max(1, absl::GetFlag(FLAGS_connections));

  const Clock::time_point start = Clock::now();
  options.deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  std::atomic<int64_t> next{0};
  std::vector<LoadStats> per_thread(connections);
  std::vector<std::thread> threads;
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back(LoadThread, std::cref(options), &next, &per_thread[i]);
  }
  for (std::thread& t : threads) t.join();
  const double seconds = SecondsSince(start);

  LoadStats total;
  for (const LoadStats& s : per_thread) total.Add(s);
  std::sort(total.latencies_ms.begin(), total.latencies_ms.end());
  std::vector<std::string> statuses, generations;
  for (const auto& [status, n] : total.statuses) {
    statuses.push_back(absl::StrFormat("\"%d\":%d", status, n));
  }
  for (const auto& [g, c] : total.generations) {
    generations.push_back(absl::StrFormat(
        "\"%d\":{\"answers\":%d,\"wrong\":%d}", g, c.answers, c.wrong));
  }
  const std::vector<double>& l = total.latencies_ms;
  std::cout
      << absl::StrFormat(
             "{\"mode\":\"load\",\"connections\":%d,\"requests\":%d,\"ok\":%d,"
             "\"malformed\":%d,\"malformed_4xx\":%d,\"wrong\":%d,\"errors\":%d,"
             "\"refused\":%d,\"closed\":%d,\"timeouts\":%d,\"io_errors\":%d,"
             "\"unavailable_503\":%d,\"retries\":%d,\"seconds\":%.3f,"
             "\"requests_per_second\":%.1f,\"tokens\":%d,\"tokens_per_second\":"
             "%.1f,"
             "\"latency_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%."
             "3f},"
             "\"statuses\":{%s},\"generations\":{%s}}",
             connections, total.requests, total.ok, total.malformed,
             total.malformed_4xx, total.wrong, total.errors(), total.refused,
             total.closed, total.timeouts, total.io_errors, total.unavailable,
             total.retries, seconds, total.requests / seconds, total.tokens,
             total.tokens / seconds, Percentile(l, 0.5), Percentile(l, 0.9),
             Percentile(l, 0.99), l.empty() ? 0.0 : l.back(),
             absl::StrJoin(statuses, ","), absl::StrJoin(generations, ","))
      << std::endl;
  if (total.wrong > 0) return 1;
  return total.errors() > 0 && !absl::GetFlag(FLAGS_allow_errors) ? 1 : 0;
}

// ---- abuse ----

// Waits up to `timeout_ms` for an answer or the end of the connection:
// the status, 0 when it was closed or reset without one, -1 on a timeout.
int AwaitAnswer(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) != 1) return -1;
  ResponseReader reader(fd);
  Response response;
  ReadResult r = reader.Read(&response);
  if (r == ReadResult::kTimeout) return -1;
  return r == ReadResult::kOk ? response.status : 0;
}

std::string AnswerJson(int status) {
  return status > 0 ? absl::StrCat(status) : "null";
}

int RunSlow(const Endpoint& endpoint) {
  const int timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const int interval_ms = absl::GetFlag(FLAGS_byte_interval_ms);
  const std::string request =
      Request(endpoint, "POST", "/v1/tag", "application/json",
              "{\"text\":\"He said it was slow.\"}");
  int fd = Connect(endpoint, timeout_ms);
  if (fd < 0) {
    std::cerr << "serve_load: connect: " << std::strerror(errno) << "\n";
    return 2;
  }
  const Clock::time_point start = Clock::now();
  size_t sent = 0;
  int status = -1;  // see AwaitAnswer
  while (sent < request.size() &&
         SecondsSince(start) < absl::GetFlag(FLAGS_max_seconds)) {
    if (!SendAll(fd, absl::string_view(request).substr(sent, 1))) {
      status = 0;
      break;
    }
    ++sent;
    if (sent < request.size() && (status = AwaitAnswer(fd, interval_ms)) >= 0)
      break;
  }
  if (sent == request.size()) status = AwaitAnswer(fd, timeout_ms);
  const double seconds = SecondsSince(start);
  close(fd);
  // Cut: closed, or answered with an error, before the whole request was sent.
  const bool cut = sent < request.size() && status >= 0 && status != 200;
  std::cout
      << absl::StrFormat(
             "{\"mode\":\"slow\",\"bytes\":%d,\"bytes_sent\":%d,\"cut\":%s,"
             "\"status\":%s,\"seconds\":%.3f}",
             request.size(), sent, cut ? "true" : "false", AnswerJson(status),
             seconds)
      << std::endl;
  return cut ? 0 : 1;
}

int RunBig(const Endpoint& endpoint) {
  const int timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const int64_t length = int64_t{absl::GetFlag(FLAGS_big_mb)} << 20;
  int fd = Connect(endpoint, timeout_ms);
  if (fd < 0) {
    std::cerr << "serve_load: connect: " << std::strerror(errno) << "\n";
    return 2;
  }
  // The body is {"text":"aaa...a"}, `length` bytes in all.
  const std::string prefix = "{\"text\":\"", suffix = "\"}";
  const Clock::time_point start = Clock::now();
  int64_t sent = 0;  // body bytes
  bool send_failed = !SendAll(
      fd, absl::StrCat("POST /v1/tag HTTP/1.1\r\nHost: ", endpoint.host_port,
                       "\r\nContent-Type: application/json\r\nContent-Length: ",
                       length, "\r\n\r\n", prefix));
  if (!send_failed) sent = prefix.size();
  const std::string chunk(1 << 16, 'a');
  const int64_t text_end = length - suffix.size();
  while (!send_failed && sent < text_end) {
    // An early answer (or the end of the connection) stops the upload.
    pollfd p{fd, POLLIN | POLLOUT, 0};
    if (poll(&p, 1, timeout_ms) != 1 ||
        (p.revents & (POLLIN | POLLHUP | POLLERR)))
      break;
    const size_t n = std::min<int64_t>(chunk.size(), text_end - sent);
    send_failed = !SendAll(fd, absl::string_view(chunk).substr(0, n));
    if (!send_failed) sent += n;
  }
  if (!send_failed && sent == text_end && SendAll(fd, suffix)) sent = length;
  const int status = AwaitAnswer(fd, timeout_ms);
  const double seconds = SecondsSince(start);
  close(fd);
  std::cout << absl::StrFormat(
                   "{\"mode\":\"big\",\"content_length\":%d,\"bytes_sent\":%d,"
                   "\"cut_early\":%s,\"status\":%s,\"seconds\":%.3f}",
                   length, sent, sent < length ? "true" : "false",
                   AnswerJson(status), seconds)
            << std::endl;
  return status == 413 ? 0 : 1;
}

// Raises the soft limit of open files to the hard one; returns it.
int64_t RaiseFileLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 20
                                         : static_cast<int64_t>(limit.rlim_cur);
}

int RunConnections(const Endpoint& endpoint) {
  const int64_t count = absl::GetFlag(FLAGS_count);
  const int timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const int64_t at_once =
      std::max<int64_t>(1, std::min(count, RaiseFileLimit() - 64));
  const std::string partial = "POST /v1/ta";
  const Clock::time_point start = Clock::now();
  int64_t connected = 0, failed = 0;
  for (int64_t done = 0; done < count;) {
    std::vector<pollfd> batch;
    for (int64_t i = 0; i < at_once && done + i < count; ++i) {
      int fd = StartConnect(endpoint);
      if (fd < 0) {
        ++failed;
        continue;
      }
      batch.push_back(pollfd{fd, POLLOUT, 0});
    }
    done += std::min(at_once, count - done);
    // Waits for every connect of the batch, to the deadline.
    const Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t pending = batch.size();
    std::vector<bool> finished(batch.size(), false);
    while (pending > 0 && Clock::now() < deadline) {
      const int left = std::chrono::duration_cast<std::chrono::milliseconds>(
                           deadline - Clock::now())
                           .count();
      if (poll(batch.data(), batch.size(), std::max(1, left)) <= 0) continue;
      for (size_t i = 0; i < batch.size(); ++i) {
        if (finished[i] || batch[i].revents == 0) continue;
        finished[i] = true;
        batch[i].events = 0;
        --pending;
        if (ConnectError(batch[i].fd) == 0) {
          ++connected;
          if (i % 2 == 1)
            send(batch[i].fd, partial.data(), partial.size(),
                 MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
          ++failed;
        }
      }
    }
    failed += pending;
    for (const pollfd& p : batch) close(p.fd);
  }
  std::cout << absl::StrFormat(
                   "{\"mode\":\"connections\",\"count\":%d,\"at_once\":%d,"
                   "\"connected\":%d,\"failed\":%d,\"seconds\":%.3f}",
                   count, at_once, connected, failed, SecondsSince(start))
            << std::endl;
  return connected == count ? 0 : 1;
}

int Run() {
  signal(SIGPIPE, SIG_IGN);
  absl::StatusOr<Endpoint> endpoint = ParseUrl(absl::GetFlag(FLAGS_url));
  if (!endpoint.ok()) {
    std::cerr << "serve_load: " << endpoint.status() << "\n";
    return 2;
  }
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "load") return RunLoad(*endpoint);
  if (mode == "slow") return RunSlow(*endpoint);
  if (mode == "big") return RunBig(*endpoint);
  if (mode == "connections") return RunConnections(*endpoint);
  std::cerr
      << "serve_load: --mode must be load | slow | big | connections, not "
      << mode << "\n";
  return 2;
}

}  // namespace
}  // namespace chaintag

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Load and abuse client of the tagging service: --mode=load | slow | big "
      "| "
      "connections, --url=http://127.0.0.1:PORT.");
  absl::ParseCommandLine(argc, argv);
  return chaintag::Run();
}
