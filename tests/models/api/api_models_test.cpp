// The API models through the registry and the lm-eval binary: model_args, secrets, a whole run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/api_lm.hpp"
#include "models/api/fake_server.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

namespace fs = std::filesystem;
using test::FakeReply;
using test::FakeServer;

TEST(ApiModels_Args, UnknownKeyListsTheKnownOnes) {
  try {
    parse_api_args(ApiKind::kLocalCompletions, Json{{"base_url", "http://x"}, {"num_concurent", 4}}, {});
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("num_concurent"), std::string::npos);
    EXPECT_NE(m.find("num_concurrent"), std::string::npos);
  }
}

TEST(ApiModels_Args, ReferenceDefaults) {
  ApiArgs a = parse_api_args(ApiKind::kLocalCompletions,
                             Json{{"model", "m"}, {"base_url", "http://h/v1/completions"}}, {});
  EXPECT_EQ(a.batch_size, 1);
  EXPECT_EQ(a.num_concurrent, 1);
  EXPECT_EQ(a.max_retries, 3);
  EXPECT_EQ(a.max_gen_toks, 256);
  EXPECT_EQ(a.seed, 1234);
  EXPECT_EQ(a.max_length, 2048);
  EXPECT_TRUE(a.tokenized_requests);
  EXPECT_EQ(a.tokenizer_backend, "huggingface");
  EXPECT_EQ(a.tokenizer, "m");
  EXPECT_EQ(a.timeout_s, 300);
  ApiArgs c = parse_api_args(ApiKind::kLocalChat, Json{{"model", "m"}, {"base_url", "http://h"}}, {});
  EXPECT_FALSE(c.tokenized_requests);
  EXPECT_EQ(c.tokenizer_backend, "");
  // --batch_size wins; auto falls back to 1 as in the reference.
  ModelOptions o;
  o.batch_size = "auto";
  EXPECT_EQ(parse_api_args(ApiKind::kLocalCompletions, Json{{"base_url", "http://h"}, {"model", "m"}, {"batch_size", 4}}, o).batch_size, 1);
  o.batch_size = "8";
  EXPECT_EQ(parse_api_args(ApiKind::kLocalCompletions, Json{{"base_url", "http://h"}, {"model", "m"}}, o).batch_size, 8);
}

TEST(ApiModels_Args, OpenAIKindsNeedAKey) {
  const char* old = std::getenv("OPENAI_API_KEY");
  std::string saved = old ? old : "";
  unsetenv("OPENAI_API_KEY");
  EXPECT_THROW(parse_api_args(ApiKind::kOpenAIChat, Json{{"model", "gpt-4o"}}, {}), UserError);
  setenv("OPENAI_API_KEY", "sk-from-env", 1);
  ApiArgs a = parse_api_args(ApiKind::kOpenAIChat, Json{{"model", "gpt-4o"}}, {});
  EXPECT_EQ(a.api_key, "sk-from-env");
  EXPECT_EQ(a.base_url, "https://api.openai.com/v1/chat/completions");
  if (old) setenv("OPENAI_API_KEY", saved.c_str(), 1);
  else unsetenv("OPENAI_API_KEY");
}

// A whole run through the binary: the key reaches the server, never the results or the console.
TEST(ApiModels_Cli, RunKeepsTheKeyOutOfResults) {
  const std::string key = "sk-cli-secret-0123456789";
  auto tok = load_tokenizer(testing::source_dir() / "models" / "stories260K");
  FakeServer server([&](const std::string&, const Json& b, int) { return test::completions(b, tok.get()); });
  fs::path out = fs::temp_directory_path() / ("lmeval_api_cli_" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string cmd = lmeval::testing::lmeval_binary().string() +
                    " run --model local-completions --model_args model=stories,base_url=" + server.url() +
                    ",tokenizer=" + (testing::source_dir() / "models" / "stories260K").string() +
                    ",api_key=" + key + ",num_concurrent=4 --tasks demo_story_cloze --limit 5 --output_path " +
                    out.string() + " --log_samples";
  auto r = testing::run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(key), std::string::npos);
  EXPECT_EQ(r.err.find(key), std::string::npos);
  EXPECT_GE(server.calls(), 10);  // 5 stories x 2 endings
  for (const auto& h : server.auth_headers()) EXPECT_EQ(h, "Bearer " + key);
  size_t files = 0;
  for (const auto& f : fs::recursive_directory_iterator(out)) {
    if (!f.is_regular_file()) continue;
    ++files;
    std::string text = testing::read_file(f.path());
    EXPECT_EQ(text.find(key), std::string::npos) << f.path();
    if (f.path().filename().string().rfind("results", 0) == 0) {
      Json j = Json::parse(text);
      EXPECT_EQ(j["config"]["model"], "local-completions");
      EXPECT_FALSE(j["config"]["model_args"].contains("api_key"));
      EXPECT_TRUE(j["results"]["demo_story_cloze"].contains("acc,none"));
    }
  }
  EXPECT_GE(files, 2u);
  fs::remove_all(out);
}

}  // namespace
}  // namespace lmeval::api
