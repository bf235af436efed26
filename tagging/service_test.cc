#include "tagging/service.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "models/chain_model.h"
#include "models/chain_model_testing.h"
#include "tagging/bundle.h"
#include "tagging/conll_tagging.h"
#include "tagging/text_tagging.h"

namespace chaintag {
namespace {

constexpr char kJson[] = "application/json";

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// A bundle directory with one random IOB2 chunker (seed `seed`).
std::string WriteBundle(const std::string& name, uint32_t seed) {
  const std::string dir = absl::StrCat(TempDir(), "/", name);
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(
      chain_testing::RandomWordChunker(seed).Save(dir + "/chunk.model").ok());
  BundleManifest manifest;
  manifest.set_name(name);
  BundleStage* stage = manifest.add_stages();
  stage->set_name("chunk");
  stage->set_model("chunk.model");
  stage->add_inputs()->set_column("word");
  stage->set_writes("chunk");
  EXPECT_TRUE(WriteBundleManifest(manifest, dir + "/bundle.textproto").ok());
  return dir;
}

std::unique_ptr<TaggingService> Serve(ServiceConfig config) {
  absl::StatusOr<std::unique_ptr<TaggingService>> service =
      TaggingService::Create(config);
  EXPECT_TRUE(service.ok()) << service.status();
  return service.ok() ? *std::move(service) : nullptr;
}

std::unique_ptr<TaggingService> ServeBundle(const std::string& dir) {
  ServiceConfig config;
  config.set_bundle(dir);
  return Serve(config);
}

// What `tag --pipeline=<dir> --format=json [--paragraphs]` prints for
// `text`, as the elements of a JSON array.
std::string CliJson(const std::string& dir, const std::string& text,
                    bool paragraphs = false) {
  absl::StatusOr<Bundle> bundle = Bundle::Load(dir);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Create();
  TextTaggingOptions options;
  options.format = OutputFormat::kJson;
  options.paragraphs = paragraphs;
  std::istringstream input(text);
  std::string out;
  EXPECT_TRUE(TagTextStream(*bundle, **tokenizer, &input, "stdin", options,
                            [&out](const std::string& part) {
                              out.append(part);
                              return absl::OkStatus();
                            })
                  .ok());
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  return absl::StrCat("[", absl::StrJoin(lines, ","), "]");
}

// The "sentences" array of an answer (the last member).
std::string SentencesOf(const std::string& body) {
  const size_t at = body.find(",\"sentences\":");
  if (at == std::string::npos) return "";
  return body.substr(at + 13, body.size() - (at + 13) - 1);
}

std::string TextRequest(const std::string& text,
                        const std::string& extra = "") {
  std::string body = "{\"text\":";
  AppendJsonString(text, &body);
  return absl::StrCat(body, extra, "}");
}

const char kText[] =
    "The dog barks .\n\n   \nA cat sat on the mats , the dog barks .\r\n"
    "The\n";

TEST(TaggingServiceTest, TextAnswersHoldTheObjectsTagPrints) {
  const std::string dir = WriteBundle("text", 3);
  auto service = ServeBundle(dir);
  ServiceResponse response = service->Tag(TextRequest(kText), kJson);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(
      absl::StartsWith(response.body,
                       "{\"model\":{\"name\":\"text\",\"generation\":1},"
                       "\"tokens\":16,\"sentences\":["))
      << response.body;
  EXPECT_EQ(SentencesOf(response.body), CliJson(dir, kText));

  response = service->Tag(TextRequest(kText, ",\"paragraphs\":true"),
                          "application/json; charset=utf-8");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(SentencesOf(response.body), CliJson(dir, kText, true));
}

TEST(TaggingServiceTest, TokenListsAreTaggedAsTheTextOfTheirTokens) {
  const std::string dir = WriteBundle("tokens", 5);
  auto service = ServeBundle(dir);
  const ServiceResponse given = service->Tag(
      R"({"sentences":[{"tokens":["The","dog","barks","."]},{"tokens":[]},)"
      R"({"tokens":["A","cat"]}],"nbest":2})",
      kJson);
  ASSERT_EQ(given.status, 200) << given.body;
  const ServiceResponse text = service->Tag(
      TextRequest("The dog barks .\n\nA cat", ",\"nbest\":2"), kJson);
  ASSERT_EQ(text.status, 200) << text.body;
  // The same sentences on the same lines, only without byte offsets.
  std::string expected = SentencesOf(text.body);
  for (const char* offsets :
       {",\"offsets\":[{\"begin\":0,\"end\":3},{\"begin\":4,\"end\":7},"
        "{\"begin\":8,\"end\":13},{\"begin\":14,\"end\":15}]",
        ",\"offsets\":[{\"begin\":0,\"end\":1},{\"begin\":2,\"end\":5}]"}) {
    const size_t at = expected.find(offsets);
    ASSERT_NE(at, std::string::npos) << expected;
    expected.erase(at, std::string(offsets).size());
  }
  EXPECT_EQ(SentencesOf(given.body), expected);
  EXPECT_TRUE(absl::StrContains(given.body, "\"nbest\":[{\"tags\":"));
}

TEST(TaggingServiceTest, ConllColumnsGetWhatTagModelPrints) {
  const std::string dir = WriteBundle("conll", 7);
  ServiceConfig config;
  config.set_model(dir + "/chunk.model");
  auto service = Serve(config);
  const std::string conll = "The B-NP\ndog I-NP\n\nbarks O\n";
  std::string body = "{\"conll\":";
  AppendJsonString(conll, &body);
  body.append("}");
  const ServiceResponse response = service->Tag(body, kJson);
  ASSERT_EQ(response.status, 200) << response.body;

  absl::StatusOr<ChainModel> model = ChainModel::Load(dir + "/chunk.model");
  ASSERT_TRUE(model.ok());
  std::istringstream input(conll);
  std::string printed;
  ASSERT_TRUE(TagConllStream(*model, &input, "stdin", {},
                             [&printed](const std::string& part) {
                               printed.append(part);
                               return absl::OkStatus();
                             })
                  .ok());
  std::string expected =
      "{\"model\":{\"name\":\"chunk\",\"generation\":1},"
      "\"tokens\":3,\"sentences\":2,\"conll\":";
  AppendJsonString(printed, &expected);
  EXPECT_EQ(response.body, expected + "}");
  // A model that reads the tokens alone tags text too.
  EXPECT_EQ(service->Tag(TextRequest("The dog"), kJson).status, 200);

  config.set_max_tokens(2);
  const ServiceResponse limited = Serve(config)->Tag(body, kJson);
  EXPECT_EQ(limited.status, 413) << limited.body;
  EXPECT_TRUE(absl::StrContains(limited.body, "more than 2 tokens"))
      << limited.body;

  // The text options are refused, not ignored, as `tag --model` refuses
  // them.
  for (const char* option : {"\"nbest\":3", "\"margins\":true",
                             "\"constrained\":false", "\"paragraphs\":true"}) {
    std::string asked = body;
    asked.insert(asked.size() - 1, absl::StrCat(",", option));
    const ServiceResponse refused = service->Tag(asked, kJson);
    EXPECT_EQ(refused.status, 400) << asked << " -> " << refused.body;
    EXPECT_TRUE(absl::StrContains(refused.body, "not to \\\"conll\\\""))
        << refused.body;
  }
  EXPECT_EQ(service
                ->Tag(body.substr(0, body.size() - 1) +
                          ",\"nbest\":1,\"constrained\":true}",
                      kJson)
                .status,
            200);
}

TEST(TaggingServiceTest, BadRequestsGetTheirStatusAndSayWhy) {
  ServiceConfig config;
  config.set_bundle(WriteBundle("bad", 3));
  config.set_max_tokens(5);
  config.set_max_body_bytes(200);
  auto service = Serve(config);
  struct Case {
    std::string body;
    std::string content_type;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {TextRequest("a"), "text/plain", 415, "application/json"},
      {"{\"text\": ", kJson, 400, "not a tag request"},
      {"[1, 2]", kJson, 400, "not a tag request"},
      {"{\"text\": \"caf\xC3\"}", kJson, 400, "not valid UTF-8 (byte 13)"},
      {"{\"txet\": \"a\"}", kJson, 400, "txet"},
      {"{}", kJson, 400, "exactly one of"},
      {R"({"text":"a","sentences":[{"tokens":["a"]}]})", kJson, 400,
       "exactly one of"},
      {R"({"text":"a","nbest":0})", kJson, 400, "nbest must be in [1, 100]"},
      {R"({"conll":"a O\n"})", kJson, 400, "needs a server started with one"},
      {TextRequest("one two three\nfour five six"), kJson, 413,
       "more than 5 tokens"},
      {R"({"sentences":[{"tokens":["1","2","3","4","5","6"]}]})", kJson, 413,
       "more than 5 tokens"},
      {TextRequest(std::string(300, 'a')), kJson, 413, "at most 200"},
  };
  for (const Case& c : cases) {
    const ServiceResponse response = service->Tag(c.body, c.content_type);
    EXPECT_EQ(response.status, c.status) << c.body << " -> " << response.body;
    EXPECT_TRUE(absl::StartsWith(
        response.body, absl::StrCat("{\"error\":{\"code\":", c.status, ",")))
        << response.body;
    EXPECT_TRUE(absl::StrContains(response.body, c.says))
        << c.body << " -> " << response.body;
  }
  // Exactly five tokens pass.
  EXPECT_EQ(service->Tag(TextRequest("one two three\nfour five"), kJson).status,
            200);
}

TEST(TaggingServiceTest, ReloadSwitchesOnlyToAModelThatLoads) {
  const std::string dir = WriteBundle("reload", 3);
  auto service = ServeBundle(dir);
  const std::string request = TextRequest(kText);
  const std::string first = SentencesOf(service->Tag(request, kJson).body);

  // Another model in place: generation 2 answers as that model does.
  ASSERT_TRUE(
      chain_testing::RandomWordChunker(99).Save(dir + "/chunk.model").ok());
  ServiceResponse reloaded = service->Reload();
  ASSERT_EQ(reloaded.status, 200) << reloaded.body;
  EXPECT_EQ(reloaded.body, "{\"generation\":2}");
  const ServiceResponse second = service->Tag(request, kJson);
  EXPECT_TRUE(absl::StrContains(second.body, "\"generation\":2"));
  EXPECT_EQ(SentencesOf(second.body), CliJson(dir, kText));
  EXPECT_NE(SentencesOf(second.body), first);

  // A truncated file is refused; generation 2 keeps serving.
  std::string bytes;
  {
    std::ifstream in(dir + "/chunk.model", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string kept = CliJson(dir, kText);
  {
    std::ofstream out(dir + "/chunk.model", std::ios::binary);
    out << bytes.substr(0, bytes.size() / 2);
  }
  reloaded = service->Reload();
  EXPECT_EQ(reloaded.status, 422);
  EXPECT_TRUE(absl::StrContains(reloaded.body, "generation 2 keeps serving"))
      << reloaded.body;
  EXPECT_TRUE(absl::StrContains(reloaded.body, "chunk.model")) << reloaded.body;
  EXPECT_EQ(service->generation(), 2);
  EXPECT_EQ(SentencesOf(service->Tag(request, kJson).body), kept);
  EXPECT_TRUE(
      absl::StrContains(service->Metrics(),
                        "chaintag_model_reloads_total{result=\"ok\"} 1\n"
                        "chaintag_model_reloads_total{result=\"failed\"} 1\n"));
}

TEST(TaggingServiceTest, DrainingRefusesNewWorkWithRetryAfter) {
  auto service = ServeBundle(WriteBundle("drain", 3));
  EXPECT_EQ(service->Health().status, 200);
  service->StartDraining();
  for (const ServiceResponse& response :
       {service->Health(), service->Tag(TextRequest("a"), kJson)}) {
    EXPECT_EQ(response.status, 503);
    EXPECT_EQ(response.retry_after_seconds, 1);
  }
}

TEST(TaggingServiceTest, RequestsBeyondTheInFlightBoundGet503) {
  ServiceConfig config;
  config.set_bundle(WriteBundle("busy", 3));
  config.set_threads(1);
  config.set_max_in_flight(1);
  auto service = Serve(config);
  std::string long_text;
  for (int i = 0; i < 20000; ++i) long_text += "The dog barks at a cat .\n";
  const std::string long_request = TextRequest(long_text);
  // B is sent while A is in flight; if A was done before B was admitted
  // (B got 200), the round proves nothing and is repeated.
  bool refused = false;
  for (int round = 0; round < 5 && !refused; ++round) {
    std::atomic<bool> a_done{false};
    ServiceResponse a;
    std::thread first([&] {
      a = service->Tag(long_request, kJson);
      a_done = true;
    });
    while (!absl::StrContains(service->Metrics(),
                              "chaintag_requests_in_flight 1\n") &&
           !a_done) {
      std::this_thread::yield();
    }
    const ServiceResponse b = service->Tag(TextRequest("The dog"), kJson);
    const bool a_was_running = !a_done.load();
    first.join();
    EXPECT_EQ(a.status, 200);
    if (b.status == 503) {
      EXPECT_EQ(b.retry_after_seconds, 1);
      EXPECT_TRUE(absl::StrContains(b.body, "too many requests in flight"));
      refused = true;
    } else {
      EXPECT_EQ(b.status, 200);
      EXPECT_FALSE(a_was_running) << "admitted beyond the bound";
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(
      absl::StrContains(service->Metrics(), "chaintag_requests_in_flight 0\n"));
}

TEST(TaggingServiceTest, ModelsDescribesTheStages) {
  auto service = ServeBundle(WriteBundle("models", 3));
  const std::string body = service->Models().body;
  EXPECT_TRUE(absl::StartsWith(body, "{\"generation\":1,\"path\":")) << body;
  for (const char* part :
       {"\"name\":\"models\"", "\"inputs\":[\"text\",\"sentences\"]",
        "\"stages\":[{\"name\":\"chunk\",\"column\":\"chunk\","
        "\"model\":\"chunk.model\",\"inputs\":[\"word\"],"
        "\"labels\":[\"O\",\"B-NP\",\"I-NP\"],\"order\":1,"
        "\"trainScheme\":\"iob2\",\"scheme\":\"iob2\",\"chunking\":true,"
        "\"stacked\":false"}) {
    EXPECT_TRUE(absl::StrContains(body, part)) << part << "\n" << body;
  }
}

TEST(TaggingServiceTest, MetricsCountRequestsTokensAndLatencies) {
  auto service = ServeBundle(WriteBundle("metrics", 3));
  ASSERT_EQ(service->Tag(TextRequest("The dog barks"), kJson).status, 200);
  service->RecordRequest("/v1/tag", 200, 0.003);
  service->RecordRequest("/v1/tag", 200, 0.0007);
  service->RecordRequest("/v1/tag", 400, 20);
  const std::string metrics = service->Metrics();
  for (const char* line : {
           "chaintag_http_requests_total{path=\"/v1/tag\",code=\"200\"} 2\n",
           "chaintag_http_requests_total{path=\"/v1/tag\",code=\"400\"} 1\n",
           "_bucket{path=\"/v1/tag\",le=\"0.0005\"} 0\n",
           "_bucket{path=\"/v1/tag\",le=\"0.001\"} 1\n",
           "_bucket{path=\"/v1/tag\",le=\"0.0025\"} 1\n",
           "_bucket{path=\"/v1/tag\",le=\"0.005\"} 2\n",
           "_bucket{path=\"/v1/tag\",le=\"10\"} 2\n",
           "_bucket{path=\"/v1/tag\",le=\"+Inf\"} 3\n",
           "_sum{path=\"/v1/tag\"} 20.003700\n",
           "_count{path=\"/v1/tag\"} 3\n",
           "chaintag_tokens_tagged_total 3\n",
           "chaintag_sentences_tagged_total 1\n",
           "chaintag_requests_in_flight 0\n",
           "chaintag_model_generation 1\n",
       }) {
    EXPECT_TRUE(absl::StrContains(metrics, line)) << line << "\n" << metrics;
  }
}

TEST(Utf8Test, FirstInvalidByte) {
  EXPECT_EQ(FirstInvalidUtf8(""), -1);
  EXPECT_EQ(FirstInvalidUtf8("plain"), -1);
  EXPECT_EQ(FirstInvalidUtf8("M\xC3\xBCller \xE2\x82\xAC \xF0\x9F\x98\x80"),
            -1);                                       // ü € 😀
  EXPECT_EQ(FirstInvalidUtf8("ab\x80"), 2);            // a lone continuation
  EXPECT_EQ(FirstInvalidUtf8("a\xC0\xAF"), 1);         // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("a\xE0\x80\xAF"), 1);     // overlong, 3 bytes
  EXPECT_EQ(FirstInvalidUtf8("\xED\xA0\x80"), 0);      // surrogate D800
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80"), 0);  // past U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ok\xE2\x82"), 2);        // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xFF"), 0);
}

TEST(JsonStringTest, EscapesQuotesBackslashesAndControls) {
  std::string out;
  AppendJsonString("a\"b\\c\nd\te\x01 \xC3\xBC", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\u0001 \xC3\xBC\"");
}

}  // namespace
}  // namespace chaintag
