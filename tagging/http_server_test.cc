#include "tagging/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "models/chain_model_testing.h"
#include "tagging/bundle.h"
#include "tagging/serve_page.h"
#include "tagging/service.h"

namespace chaintag {
namespace {

std::string WriteBundle() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/b");
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(
      chain_testing::RandomWordChunker(3).Save(dir + "/chunk.model").ok());
  BundleManifest manifest;
  manifest.set_name("http");
  BundleStage* stage = manifest.add_stages();
  stage->set_model("chunk.model");
  stage->add_inputs()->set_column("word");
  stage->set_writes("chunk");
  EXPECT_TRUE(WriteBundleManifest(manifest, dir + "/bundle.textproto").ok());
  return dir;
}

// A server on a free loopback port, running on its own thread.
class HttpServerTest : public ::testing::Test {
 protected:
  void Start(ServiceConfig config) {
    config.set_bundle(WriteBundle());
    config.set_port(0);
    absl::StatusOr<std::unique_ptr<TaggingService>> service =
        TaggingService::Create(config);
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = *std::move(service);
    absl::StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Create(service_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    thread_ = std::thread([this] { run_status_ = server_->Run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      server_->Stop();
      thread_.join();
    }
    EXPECT_TRUE(run_status_.ok()) << run_status_;
  }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_read_timeout(10, 0);
    return client;
  }

  // A raw connection to the server.
  int Connect() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(server_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
        0);
    return fd;
  }

  std::unique_ptr<TaggingService> service_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  absl::Status run_status_;
};

constexpr char kTag[] = R"({"text": "The dog barks ."})";

TEST_F(HttpServerTest, RoutesAnswerWithTheServiceBodies) {
  Start(ServiceConfig());
  httplib::Client client = Client();
  auto tagged = client.Post("/v1/tag", kTag, "application/json");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->status, 200);
  EXPECT_EQ(tagged->body,
            service_->Tag(kTag, "application/json").body);  // same model
  EXPECT_EQ(tagged->get_header_value("Content-Type"), "application/json");

  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, kServePage);
  EXPECT_TRUE(
      absl::StartsWith(page->get_header_value("Content-Type"), "text/html"));

  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "{\"status\":\"ok\",\"generation\":1}");
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      "chaintag_http_requests_total{path=\"/v1/tag\",code=\"200\"} 1\n"))
      << metrics->body;
  auto reload = client.Post("/v1/reload", "", "text/plain");
  ASSERT_TRUE(reload);
  EXPECT_EQ(reload->body, "{\"generation\":2}");
}

TEST_F(HttpServerTest, ErrorsTheLibraryAnswersAreJsonToo) {
  ServiceConfig config;
  config.set_max_body_bytes(1000);
  Start(config);
  httplib::Client client = Client();
  auto missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body,
            "{\"error\":{\"code\":404,\"message\":\"no such path: /nope\"}}");
  auto wrong_method = client.Get("/v1/tag");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
  EXPECT_EQ(wrong_method->get_header_value("Allow"), "POST");
  auto too_large =
      client.Post("/v1/tag", std::string(5000, ' '), "application/json");
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);
  EXPECT_TRUE(absl::StrContains(too_large->body, "\"code\":413"));
  // The server still answers.
  auto tagged = client.Post("/v1/tag", kTag, "application/json");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->status, 200);
}

// What arrives on `fd` until the server closes it (or 5 s pass quietly).
std::string ReadUntilClosed(int fd) {
  std::string answer;
  char buffer[4096];
  for (;;) {
    pollfd entry = {fd, POLLIN, 0};
    if (::poll(&entry, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  return answer;
}

// What the server answers on a raw connection to `head` followed by
// `body_bytes` bytes of `body_byte` (sent from a thread of their own, as
// the server may stop reading them), up to the connection's close.
std::string AnswerTo(int fd, const std::string& head, int64_t body_bytes,
                     char body_byte) {
  std::thread sender([&] {
    if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) < 0) return;
    const std::string block(4096, body_byte);
    for (int64_t sent = 0; sent < body_bytes;) {
      const ssize_t n = ::send(
          fd, block.data(),
          static_cast<size_t>(std::min<int64_t>(4096, body_bytes - sent)),
          MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += n;
    }
  });
  const std::string answer = ReadUntilClosed(fd);
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  return answer;
}

// A body past the connection's read limit is answered 413 whether it
// comes with a length or in chunks, and its connection is closed, as the
// rest of the body is still on the wire: nothing of it is read as another
// request (its lines were answered, and counted in /metrics, as malformed
// requests no client sent).
TEST_F(HttpServerTest, ABodyPastTheReadLimitIsRefusedAndItsConnectionClosed) {
  ServiceConfig config;
  config.set_max_body_bytes(1000);
  Start(config);
  const int64_t bytes = 400 << 10;  // past 1000 bytes and the head's limit
  const std::string with_length =
      AnswerTo(Connect(),
               absl::StrCat("POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Type: "
                            "application/json\r\nContent-Length: ",
                            bytes, "\r\n\r\n"),
               bytes, '\n');
  EXPECT_TRUE(absl::StartsWith(with_length, "HTTP/1.1 413")) << with_length;
  // One chunk announcing 400 KiB (hex), then its bytes.
  const std::string chunked = AnswerTo(
      Connect(),
      "POST /v1/tag HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nTransfer-Encoding: chunked\r\n\r\n64000\r\n",
      bytes, ' ');
  EXPECT_TRUE(absl::StartsWith(chunked, "HTTP/1.1 413")) << chunked;
  EXPECT_TRUE(absl::StrContains(chunked, "larger than the server accepts"))
      << chunked;
  httplib::Client client = Client();
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_TRUE(absl::StrContains(
      metrics->body,
      "chaintag_http_requests_total{path=\"/v1/tag\",code=\"413\"} 2\n"))
      << metrics->body;
  EXPECT_FALSE(absl::StrContains(metrics->body, "code=\"414\""))
      << metrics->body;
  EXPECT_FALSE(absl::StrContains(metrics->body, "code=\"400\""))
      << metrics->body;
}

// A POST with neither Content-Length nor chunks has no body (curl -X POST
// sends it so): answered at once, not after waiting for the client to
// close.
TEST_F(HttpServerTest, APostWithoutALengthHasNoBody) {
  Start(ServiceConfig());
  const int fd = Connect();
  const std::string request =
      "POST /v1/reload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  const std::string answer = ReadUntilClosed(fd);
  ::close(fd);
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, "{\"generation\":2}")) << answer;
}

TEST_F(HttpServerTest, AClientTooSlowForTheRequestTimeoutIsCut) {
  ServiceConfig config;
  config.set_request_timeout_seconds(1);
  Start(config);
  const int fd = Connect();
  const std::string head = "POST /v1/tag HTTP/1.1\r\nHost: x\r\n";
  const absl::Time start = absl::Now();
  bool cut = false;
  // A byte every 100 ms: each read is quick, the request is not.
  for (size_t i = 0; i < head.size() && !cut; ++i) {
    if (::send(fd, &head[i], 1, MSG_NOSIGNAL) != 1) cut = true;
    pollfd entry = {fd, POLLIN, 0};
    if (::poll(&entry, 1, 100) > 0) {
      char byte;
      cut = ::recv(fd, &byte, 1, 0) <= 0;  // closed without an answer
    }
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  ::close(fd);
  EXPECT_TRUE(cut);
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 3.0);
  httplib::Client client = Client();
  auto tagged = client.Post("/v1/tag", kTag, "application/json");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->status, 200);
}

TEST_F(HttpServerTest, StopFinishesARequestInProgressAndRefusesNewOnes) {
  Start(ServiceConfig());
  std::string long_text;
  for (int i = 0; i < 20000; ++i) long_text += "The dog barks at a cat .\\n";
  const std::string body = absl::StrCat("{\"text\":\"", long_text, "\"}");
  int status = 0;
  std::string answer;
  std::thread request([&] {
    httplib::Client client = Client();
    if (auto result = client.Post("/v1/tag", body, "application/json")) {
      status = result->status;
      answer = result->body;
    }
  });
  // Stop once the request is being tagged.
  while (!absl::StrContains(service_->Metrics(),
                            "chaintag_requests_in_flight 1\n")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  service_->StartDraining();
  server_->Stop();
  thread_.join();  // Run() returns only after the answer is written
  request.join();
  EXPECT_TRUE(run_status_.ok()) << run_status_;
  EXPECT_EQ(status, 200);
  EXPECT_TRUE(absl::StrContains(answer, "\"tokens\":140000"));
  httplib::Client late = Client();
  late.set_connection_timeout(1, 0);
  EXPECT_FALSE(late.Get("/healthz"));  // nothing listens any more
}

}  // namespace
}  // namespace chaintag
