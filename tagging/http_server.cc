#include "tagging/http_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "tagging/serve_page.h"

namespace chaintag {
namespace {

constexpr int kKeepAliveRequests = 1000;
// How often a connection waiting for its next request checks for Stop().
constexpr int kStopCheckMillis = 100;
constexpr int kWriteTimeoutSeconds = 10;
// Room for a request's line and headers beside the largest body.
constexpr int64_t kMaxHeadBytes = 64 << 10;

// When the request being served on this thread began to arrive, for the
// latency the logger records.
thread_local absl::Time request_start;

// A connection's socket read through a buffer (httplib reads request heads
// a byte at a time) with a deadline for the request being read.
class ConnectionStream : public httplib::Stream {
 public:
  // `read_limit`: bytes a request may take, head and body.
  ConnectionStream(int socket, int64_t read_limit)
      : socket_(socket), read_limit_(read_limit) {}

  // The next request must arrive by `deadline`.
  void StartRequest(absl::Time deadline) {
    deadline_ = deadline;
    request_bytes_ = 0;
  }
  bool has_buffered() const { return begin_ < end_; }
  // Whether this request was cut at the read limit: the rest of its body
  // is still on the wire, so the connection cannot carry another request.
  bool cut() const { return request_bytes_ >= read_limit_; }

  // Whether a request starts within `timeout`, checking `stopping` every
  // kStopCheckMillis.
  template <typename Stopping>
  bool WaitForRequest(absl::Duration timeout, Stopping stopping) {
    if (has_buffered()) return true;
    const absl::Time until = absl::Now() + timeout;
    for (;;) {
      const absl::Duration left = until - absl::Now();
      if (left <= absl::ZeroDuration() || stopping()) return false;
      const int millis = static_cast<int>(std::min<int64_t>(
          absl::ToInt64Milliseconds(left) + 1, kStopCheckMillis));
      const int ready = Poll(POLLIN, millis);
      if (ready != 0) return ready > 0;
    }
  }

  bool is_readable() const override {
    return has_buffered() || Poll(POLLIN, MillisLeft()) > 0;
  }
  bool is_writable() const override {
    return Poll(POLLOUT, kWriteTimeoutSeconds * 1000) > 0;
  }

  // Past the read limit, reads fail: cpp-httplib answers an oversized body
  // 413 only after reading it to its declared end, to keep the connection.
  ssize_t read(char* ptr, size_t size) override {
    if (request_bytes_ >= read_limit_) return -1;
    size = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(size),
                                                 read_limit_ - request_bytes_));
    if (!has_buffered()) {
      if (Poll(POLLIN, MillisLeft()) <= 0) return -1;  // the deadline passed
      const ssize_t n = Recv(buffer_, sizeof(buffer_));
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    request_bytes_ += static_cast<int64_t>(n);
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    size_t written = 0;
    while (written < size) {
      if (!is_writable()) return -1;
      const ssize_t n =
          ::send(socket_, ptr + written, size - written, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return -1;
      written += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(written);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(/*remote=*/true, &ip, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(/*remote=*/false, &ip, &port);
  }
  socket_t socket() const override { return socket_; }

 private:
  int MillisLeft() const {
    const int64_t left = absl::ToInt64Milliseconds(deadline_ - absl::Now());
    return static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30));
  }

  // >0 ready, 0 timed out, <0 error; retries on signals.
  int Poll(short events, int millis) const {
    pollfd entry = {socket_, events, 0};
    for (;;) {
      const int ready = ::poll(&entry, 1, millis);
      if (ready < 0 && errno == EINTR) continue;
      if (ready > 0 && (entry.revents & (POLLERR | POLLNVAL)) &&
          !(entry.revents & events)) {
        return -1;
      }
      return ready;
    }
  }

  ssize_t Recv(char* ptr, size_t size) {
    for (;;) {
      const ssize_t n = ::recv(socket_, ptr, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  void Address(bool remote, std::string* ip, int* port) const {
    sockaddr_storage address;
    socklen_t length = sizeof(address);
    auto* raw = reinterpret_cast<sockaddr*>(&address);
    const int got = remote ? getpeername(socket_, raw, &length)
                           : getsockname(socket_, raw, &length);
    char text[INET6_ADDRSTRLEN] = "";
    *port = 0;
    if (got == 0 && address.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
      *port = ntohs(v4->sin_port);
    } else if (got == 0 && address.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
      *port = ntohs(v6->sin6_port);
    }
    *ip = text;
  }

  const int socket_;
  const int64_t read_limit_;
  int64_t request_bytes_ = 0;
  absl::Time deadline_ = absl::InfiniteFuture();
  char buffer_[16384];
  size_t begin_ = 0;
  size_t end_ = 0;
};

// The path as /metrics labels it: the routes, and "other" for the rest (so
// that scanners cannot grow the label set).
absl::string_view PathLabel(absl::string_view path) {
  for (absl::string_view known :
       {"/", "/healthz", "/metrics", "/v1/models", "/v1/tag", "/v1/reload"}) {
    if (path == known) return known;
  }
  return "other";
}

void Answer(const ServiceResponse& response, httplib::Response& res) {
  res.status = response.status;
  res.set_content(response.body, response.content_type);
  if (response.retry_after_seconds > 0) {
    res.set_header("Retry-After", absl::StrCat(response.retry_after_seconds));
  }
}

}  // namespace

// httplib's server with connections read under a deadline.
class HttpServer::Server : public httplib::Server {
 public:
  explicit Server(const ServiceConfig& config) : config_(config) {}

  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }

  // cpp-httplib listens with a backlog of 5: beyond, a connecting client's
  // SYN is dropped and it retries a second later, so many clients
  // reconnecting at once (after their keep-alive ends) saw second-long
  // tails (docs/experiments.md#serving). Linux takes a second listen() as a
  // new backlog.
  bool WidenBacklog() { return ::listen(svr_sock_, SOMAXCONN) == 0; }

 private:
  bool process_and_close_socket(socket_t socket) override {
    ConnectionStream stream(socket, config_.max_body_bytes() + kMaxHeadBytes);
    const absl::Duration request_timeout =
        absl::Seconds(config_.request_timeout_seconds());
    // A connection accepted just before Stop() gets its request answered
    // if it is already arriving.
    const absl::Duration idle =
        stopping() ? absl::Milliseconds(kStopCheckMillis)
                   : absl::Seconds(config_.keep_alive_seconds());
    bool ok = true;
    for (int left = kKeepAliveRequests; left > 0; --left) {
      const bool first = left == kKeepAliveRequests;
      if (!stream.WaitForRequest(first ? std::max(idle, request_timeout) : idle,
                                 [&] { return !first && stopping(); })) {
        break;
      }
      request_start = absl::Now();
      stream.StartRequest(request_start + request_timeout);
      bool closed = false;
      const bool last = left == 1 || stopping();
      ok = process_request(stream, last, closed, [](httplib::Request& req) {
        // A request with neither a length nor chunks has no body (RFC 9112
        // 6.3); cpp-httplib would read one until the client closes.
        if (!req.has_header("Content-Length") &&
            !req.has_header("Transfer-Encoding")) {
          req.set_header("Content-Length", "0");
        }
      });
      if (!ok || closed || last || stream.cut()) break;
    }
    ::shutdown(socket, SHUT_RDWR);
    ::close(socket);
    return ok;
  }

  const ServiceConfig config_;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(
    TaggingService* service) {
  const ServiceConfig& config = service->config();
  auto server = std::make_unique<Server>(config);
  const int threads = std::max(1, config.connection_threads());
  server->new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  // Heads and bodies are written separately: without TCP_NODELAY, Nagle and
  // the client's delayed ACK hold every answer back until the ACK timer
  // fires (docs/experiments.md#serving).
  server->set_tcp_nodelay(true);
  server->set_keep_alive_max_count(kKeepAliveRequests);
  server->set_keep_alive_timeout(config.keep_alive_seconds());
  server->set_write_timeout(kWriteTimeoutSeconds, 0);
  server->set_payload_max_length(static_cast<size_t>(config.max_body_bytes()));

  server->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kServePage, "text/html; charset=utf-8");
  });
  server->Get("/healthz",
              [service](const httplib::Request&, httplib::Response& res) {
                Answer(service->Health(), res);
              });
  server->Get("/v1/models",
              [service](const httplib::Request&, httplib::Response& res) {
                Answer(service->Models(), res);
              });
  server->Get(
      "/metrics", [service](const httplib::Request&, httplib::Response& res) {
        res.set_content(service->Metrics(), "text/plain; version=0.0.4");
      });
  server->Post("/v1/tag", [service](const httplib::Request& req,
                                    httplib::Response& res) {
    Answer(service->Tag(req.body, req.get_header_value("Content-Type")), res);
  });
  server->Post("/v1/reload",
               [service](const httplib::Request&, httplib::Response& res) {
                 Answer(service->Reload(), res);
               });
  // The right path with the wrong method.
  auto not_allowed = [](const char* allowed) {
    return [allowed](const httplib::Request& req, httplib::Response& res) {
      Answer(ErrorResponse(405, absl::StrCat(req.method, " ", req.path,
                                             ": use ", allowed)),
             res);
      res.set_header("Allow", allowed);
    };
  };
  const std::pair<const char*, const char*> kRoutes[] = {
      {"/", "GET"},        {"/healthz", "GET"}, {"/v1/models", "GET"},
      {"/metrics", "GET"}, {"/v1/tag", "POST"}, {"/v1/reload", "POST"}};
  for (const auto& [path, allowed] : kRoutes) {
    if (std::strcmp(allowed, "GET") == 0) {
      server->Post(path, not_allowed(allowed));
    } else {
      server->Get(path, not_allowed(allowed));
    }
    server->Put(path, not_allowed(allowed));
    server->Patch(path, not_allowed(allowed));
    server->Delete(path, not_allowed(allowed));
  }
  // Errors the library answers itself (no route, a body too large, a bad
  // request line) get the service's JSON error body.
  const int64_t max_body_bytes = config.max_body_bytes();
  server->set_error_handler(httplib::Server::HandlerWithResponse(
      [max_body_bytes](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        // cpp-httplib reads chunks without a limit; the connection's read
        // limit cuts them, which it answers 400 with the body read so far.
        if (res.status == 400 &&
            absl::EqualsIgnoreCase(req.get_header_value("Transfer-Encoding"),
                                   "chunked") &&
            static_cast<int64_t>(req.body.size()) >= max_body_bytes) {
          res.status = 413;
        }
        std::string message = absl::StrCat("HTTP status ", res.status);
        if (res.status == 404)
          message = absl::StrCat("no such path: ", req.path);
        if (res.status == 413) {
          message = "the body is larger than the server accepts";
        }
        if (res.status == 400) message = "a malformed HTTP request";
        Answer(ErrorResponse(res.status, message), res);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        Answer(ErrorResponse(500, "internal error"), res);
      });
  server->set_logger([service](const httplib::Request& req,
                               const httplib::Response& res) {
    service->RecordRequest(PathLabel(req.path), res.status,
                           absl::ToDoubleSeconds(absl::Now() - request_start));
  });

  int port = config.port();
  if (port == 0) {
    port = server->bind_to_any_port(config.host());
    if (port < 0) port = 0;
  } else if (!server->bind_to_port(config.host(), port)) {
    port = 0;
  }
  if (port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config.host(), ":", config.port(),
                     ": ", std::strerror(errno)));
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(server), port));
}

HttpServer::HttpServer(std::unique_ptr<Server> server, int port)
    : server_(std::move(server)), port_(port) {}

HttpServer::~HttpServer() = default;

absl::Status HttpServer::Run() {
  if (!server_->listen_after_bind() && !server_->stopping()) {
    return absl::InternalError("the listening socket failed");
  }
  return absl::OkStatus();
}

void HttpServer::Stop() { server_->stop(); }

}  // namespace chaintag
