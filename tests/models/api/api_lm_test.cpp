// ApiLM against a loopback server: results, request bodies, retries and faults.
#include "models/api/api_lm.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "models/api/fake_server.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

using test::completions;
using test::fake_lp;
using test::FakeReply;
using test::FakeServer;

std::unique_ptr<Tokenizer> stories_tokenizer() {
  return load_tokenizer(testing::source_dir() / "models" / "stories260K");
}

ApiArgs local_args(const std::string& url, const std::string& extra = "") {
  Json a = Json::object();
  a["model"] = "stories";
  a["base_url"] = url;
  a["tokenizer"] = (testing::source_dir() / "models" / "stories260K").string();
  ApiArgs args = parse_api_args(ApiKind::kLocalCompletions, a, {});
  args.retry.min_wait_s = 0.01;  // tests: short backoff
  args.retry.max_wait_s = 0.05;
  args.retry.multiplier_s = 0.01;
  return args;
}

double expected_ll(const Tokenizer& tok, const std::string& ctx, const std::string& cont,
                   bool* greedy) {
  auto whole = tok.encode(ctx + cont, false);
  auto c = tok.encode(ctx, false);
  double s = 0;
  *greedy = true;
  for (size_t i = c.size(); i < whole.size(); ++i) {
    double v = fake_lp(whole[i - 1], whole[i]);
    s += v;
    if (v != -0.25) *greedy = false;
  }
  return s;
}

TEST(ApiLM_Loglikelihood, TokenPromptsScoreTheContinuationOnly) {
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int) { return completions(b, tok.get()); });
  ApiLM lm(local_args(server.url()), stories_tokenizer());
  lm.keep_payloads(true);
  std::vector<LoglikelihoodRequest> reqs = {
      {"Once upon a time", " there was"}, {"The cat sat on the", " mat"}, {"Lily ", "went home"}};
  auto res = lm.loglikelihood(reqs);
  ASSERT_EQ(res.size(), 3u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    bool greedy;
    double want = expected_ll(
        *tok, reqs[i].context.substr(0, reqs[i].context.find_last_not_of(' ') + 1),
        reqs[i].context.substr(reqs[i].context.find_last_not_of(' ') + 1) + reqs[i].continuation,
        &greedy);
    EXPECT_DOUBLE_EQ(res[i].loglikelihood, want) << i;
    EXPECT_EQ(res[i].is_greedy, greedy) << i;
  }
  // One request per prompt (batch_size 1), token ids sent, echo with logprobs.
  ASSERT_EQ(server.calls(), 3);
  for (const auto& b : server.bodies()) {
    EXPECT_EQ(b["model"], "stories");
    EXPECT_TRUE(b["prompt"].is_array() && b["prompt"].size() == 1 && b["prompt"][0].is_array());
    EXPECT_EQ(b["echo"], true);
    EXPECT_EQ(b["logprobs"], 1);
    EXPECT_EQ(b["max_tokens"], 1);
    EXPECT_EQ(b["temperature"], 0);
    EXPECT_EQ(b["seed"], 1234);
  }
}

TEST(ApiLM_Loglikelihood, StringPromptsAndBatches) {
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int) { return completions(b, tok.get()); });
  ApiArgs args = local_args(server.url());
  args.tokenized_requests = false;
  args.batch_size = 2;
  ApiLM lm(args, stories_tokenizer());
  std::vector<LoglikelihoodRequest> reqs = {{"Once upon a time", " there was"},
                                            {"The dog", " ran"},
                                            {"A big red ball", " rolled away fast"}};
  auto res = lm.loglikelihood(reqs);
  ASSERT_EQ(server.calls(), 2);  // 3 prompts in batches of 2
  auto bodies = server.bodies();
  EXPECT_TRUE(bodies[0]["prompt"].is_array() && bodies[0]["prompt"].size() == 2 &&
              bodies[0]["prompt"][0].is_string());
  EXPECT_EQ(bodies[1]["prompt"].size(), 1u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    bool greedy;
    EXPECT_DOUBLE_EQ(res[i].loglikelihood,
                     expected_ll(*tok, reqs[i].context, reqs[i].continuation, &greedy))
        << i;
  }
}

TEST(ApiLM_Loglikelihood, RollingSumsEveryToken) {
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int) { return completions(b, tok.get()); });
  ApiArgs args = local_args(server.url());
  args.max_length = 8;  // windows of 6 tokens: several requests per text
  ApiLM lm(args, stories_tokenizer());
  std::string text =
      "Once upon a time there was a little girl named Lily who loved to play outside.";
  auto ids = tok->encode(text, false);
  ASSERT_GT(ids.size(), 12u);
  double want = fake_lp(*tok->bos_token().id, ids[0]);
  for (size_t i = 1; i < ids.size(); ++i) want += fake_lp(ids[i - 1], ids[i]);
  auto res = lm.loglikelihood_rolling({text});
  ASSERT_EQ(res.size(), 1u);
  EXPECT_NEAR(res[0], want, 1e-9);
  EXPECT_GE(server.calls(), 3);
}

TEST(ApiLM_Generate, StopSequencesMaxTokensAndOrder) {
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int) { return completions(b, tok.get()); });
  ApiLM lm(local_args(server.url()), stories_tokenizer());
  std::vector<GenerationRequest> reqs = {
      {"Hi", Json{{"until", Json::array({"\n\n"})}, {"max_gen_toks", 7}, {"do_sample", false}}},
      {"Once upon a time", Json{{"until", "."}, {"temperature", 0.5}}},
  };
  auto out = lm.generate_until(reqs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], std::to_string(tok->encode("Hi", false).size()) + " tokens");
  EXPECT_EQ(out[1], std::to_string(tok->encode("Once upon a time", false).size()) + " tokens");
  auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  const Json* first = bodies[0]["max_tokens"] == 7 ? &bodies[0] : &bodies[1];
  const Json* second = first == &bodies[0] ? &bodies[1] : &bodies[0];
  EXPECT_EQ((*first)["stop"], Json::array({"\n\n", "</s>"}));  // the tokenizer's eos appended
  EXPECT_EQ((*first)["temperature"], 0);
  EXPECT_FALSE(first->contains("do_sample"));
  EXPECT_EQ((*second)["stop"], Json::array({".", "</s>"}));
  EXPECT_EQ((*second)["max_tokens"], 256);
  EXPECT_EQ((*second)["temperature"], 0.5);
}

// --- faults -----------------------------------------------------------------------------------

struct FaultCase {
  const char* name;
  std::function<FakeReply(int call, const Json& body, const Tokenizer* tok)> reply;
  double timeout_s;
  bool succeeds;
  const char* message;  // in the error when it fails
};

class ApiLM_Faults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(ApiLM_Faults, EndInRetrySuccessOrOneClearError) {
  const FaultCase& c = GetParam();
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int call) { return c.reply(call, b, tok.get()); });
  ApiArgs args = local_args(server.url());
  args.timeout_s = c.timeout_s;
  ApiLM lm(args, stories_tokenizer());
  std::vector<LoglikelihoodRequest> reqs = {{"Once upon a time", " there was"}};
  if (c.succeeds) {
    auto res = lm.loglikelihood(reqs);
    bool greedy;
    EXPECT_DOUBLE_EQ(res[0].loglikelihood,
                     expected_ll(*tok, reqs[0].context, reqs[0].continuation, &greedy));
    EXPECT_EQ(server.calls(), 2);
    Json perf = lm.performance_stats()["loglikelihood"];
    EXPECT_EQ(perf["requests"], 1);
    EXPECT_EQ(perf["http_requests"], 1);
    EXPECT_EQ(perf["retries"], 1);
    EXPECT_EQ(perf["tokens"], tok->encode(reqs[0].context + reqs[0].continuation, false).size());
  } else {
    try {
      lm.loglikelihood(reqs);
      FAIL() << "no error";
    } catch (const RuntimeError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(c.message), std::string::npos) << m;
      EXPECT_NE(m.find("loglikelihood request 1"), std::string::npos) << m;
      EXPECT_NE(m.find("after 3 attempts"), std::string::npos) << m;
    }
    EXPECT_EQ(server.calls(), 3);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Loopback, ApiLM_Faults,
    ::testing::Values(
        FaultCase{
            "TooManyRequestsThenSuccess",
            [](int call, const Json& b, const Tokenizer* t) {
              return call == 0 ? FakeReply{429, R"({"error":"slow down"})"} : completions(b, t);
            },
            5, true, ""},
        FaultCase{"ServerErrorThenSuccess",
                  [](int call, const Json& b, const Tokenizer* t) {
                    return call == 0 ? FakeReply{503, "busy"} : completions(b, t);
                  },
                  5, true, ""},
        FaultCase{"SlowThenSuccess",
                  [](int call, const Json& b, const Tokenizer* t) {
                    FakeReply r = completions(b, t);
                    if (call == 0) r.delay_ms = 600;
                    return r;
                  },
                  0.3, true, ""},
        FaultCase{"CutMidBodyThenSuccess",
                  [](int call, const Json& b, const Tokenizer* t) {
                    FakeReply r = completions(b, t);
                    r.cut = call == 0;
                    return r;
                  },
                  5, true, ""},
        FaultCase{"AlwaysServerError",
                  [](int, const Json&, const Tokenizer*) {
                    return FakeReply{500, "internal error"};
                  },
                  5, false, "HTTP 500: internal error"},
        FaultCase{"MalformedJson",
                  [](int, const Json&, const Tokenizer*) {
                    return FakeReply{200, "{\"choices\": [oops"};
                  },
                  5, false, "not JSON"},
        FaultCase{"MissingLogprobs",
                  [](int, const Json&, const Tokenizer*) {
                    return FakeReply{200, R"({"choices":[{"index":0,"text":"x"}]})"};
                  },
                  5, false, "no \"logprobs\""},
        FaultCase{"WrongNumberOfChoices",
                  [](int, const Json&, const Tokenizer*) {
                    return FakeReply{200, R"({"choices":[]})"};
                  },
                  5, false, "0 choices for 1 prompts"}),
    [](const ::testing::TestParamInfo<FaultCase>& i) { return std::string(i.param.name); });

TEST(ApiLM_Faults, BadRequestFailsWithoutRetrying) {
  FakeServer server([](const std::string&, const Json&, int) {
    return FakeReply{400, R"({"error":"bad prompt"})"};
  });
  ApiLM lm(local_args(server.url()), stories_tokenizer());
  EXPECT_THROW(lm.loglikelihood({{"a", " b"}}), RuntimeError);
  EXPECT_EQ(server.calls(), 1);
}

TEST(ApiLM_Faults, FinishedRequestsAreKeptWhenOneFails) {
  // With several in flight, a failing request does not cancel the others: they finish.
  auto tok = stories_tokenizer();
  FakeServer server([&](const std::string&, const Json& b, int) {
    FakeReply r = completions(b, tok.get());
    if (b["prompt"] == "x y z") return FakeReply{500, "down"};
    r.delay_ms = 50;
    return r;
  });
  ApiArgs args = local_args(server.url());
  args.num_concurrent = 4;
  args.tokenized_requests = false;
  ApiLM lm(args, stories_tokenizer());
  size_t last_done = 0;
  lm.set_progress([&](size_t done, size_t, int64_t) { last_done = done; });
  EXPECT_THROW(
      lm.loglikelihood({{"Once upon a time", " there"}, {"x y", " z"}, {"The dog", " ran"}}),
      RuntimeError);
  EXPECT_EQ(last_done, 2u);
}

TEST(ApiLM_Concurrency, RequestsOverlap) {
  auto tok = stories_tokenizer();
  FakeServer server(
      [&](const std::string&, const Json& b, int) {
        FakeReply r = completions(b, tok.get());
        r.delay_ms = 50;
        return r;
      },
      16);
  ApiArgs args = local_args(server.url());
  args.num_concurrent = 8;
  ApiLM lm(args, stories_tokenizer());
  std::vector<LoglikelihoodRequest> reqs;
  for (int i = 0; i < 32; ++i) reqs.push_back({"Story number " + std::to_string(i), " ends"});
  auto t0 = std::chrono::steady_clock::now();
  auto res = lm.loglikelihood(reqs);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(server.calls(), 32);
  EXPECT_LT(s, 32 * 0.05 / 2);  // serial would take 1.6 s; 8 in flight about 0.2 s
}

// --- chat -------------------------------------------------------------------------------------

TEST(ApiLM_Chat, SendsMessagesAndReadsContent) {
  FakeServer server([](const std::string& path, const Json& b, int) {
    std::string text = "<think>hmm</think>  " + b["messages"].back()["content"].get<std::string>();
    return FakeReply{
        200, Json{{"choices",
                   Json::array({Json{{"index", 0},
                                     {"message", {{"role", "assistant"}, {"content", text}}}}})}}
                 .dump()};
  });
  Json a = {{"model", "m"},
            {"base_url", server.url("/v1/chat/completions")},
            {"think_end_token", "</think>"}};
  ApiLM lm(parse_api_args(ApiKind::kLocalChat, a, {}));
  std::vector<GenerationRequest> reqs = {
      {"Q?", Json{{"until", Json::array({"a", "b", "c", "d", "e"})}}}};
  EXPECT_THROW(lm.generate_until(reqs), UserError);  // needs --apply_chat_template
  reqs[0].context = lm.apply_chat_template({{"system", "Be brief."}, {"user", "Q?"}}, true);
  EXPECT_EQ(reqs[0].context,
            R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}])");
  auto out = lm.generate_until(reqs);
  EXPECT_EQ(out[0], "Q?");
  auto b = server.bodies().at(0);
  EXPECT_EQ(b["messages"].size(), 2u);
  EXPECT_EQ(b["stop"], Json::array({"a", "b", "c", "d"}));  // at most 4, no eos without a tokenizer
  EXPECT_EQ(b["max_tokens"], 256);
  EXPECT_THROW(lm.loglikelihood({{"a", "b"}}), UserError);
}

// --- secrets ----------------------------------------------------------------------------------

TEST(ApiLM_Secrets, KeyIsSentButNeverInErrors) {
  const std::string key = "sk-test-0123456789abcdef";
  FakeServer server([&](const std::string&, const Json&, int) {
    return FakeReply{401, "{\"error\": \"invalid key Bearer " + key + "\"}"};
  });
  Json a = {
      {"model", "m"}, {"base_url", server.url()}, {"api_key", key}, {"tokenizer_backend", "none"}};
  ApiLM lm(parse_api_args(ApiKind::kLocalCompletions, a, {}));
  try {
    lm.generate_until({{"hi", Json::object()}});
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).find(key), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("HTTP 401"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.auth_headers().at(0), "Bearer " + key);
}

// Issue 32: a header value the server echoes in an error body, and a password in base_url, are
// masked (the Authorization value already was).
TEST(ApiLM_Secrets, EchoedHeaderValuesAndUrlPasswordsAreMasked) {
  const std::string value = "hv-secret-0123456789", password = "pw-secret-987654";
  FakeServer server([&](const std::string&, const Json&, int) {
    return FakeReply{400, "{\"error\": \"unknown X-Key " + value + "\"}"};
  });
  std::string url = server.url();
  url.insert(url.find("://") + 3, "user:" + password + "@");
  Json a = {{"model", "m"},
            {"base_url", url},
            {"header", Json{{"X-Key", value}}},
            {"tokenizer_backend", "none"}};
  ApiLM lm(parse_api_args(ApiKind::kLocalCompletions, a, {}));
  try {
    lm.generate_until({{"hi", Json::object()}});
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find(value), std::string::npos) << what;
    EXPECT_EQ(what.find(password), std::string::npos) << what;
    EXPECT_NE(what.find("HTTP 400"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown X-Key ***"), std::string::npos) << what;
    EXPECT_NE(what.find("user:***@127.0.0.1"), std::string::npos) << what;
  }
}

// Issue 32: base_url=file:///etc/passwd made libcurl read the file (and print it); ftp:// was
// tried with retries. Only http(s) is accepted, exit 2 naming the field, nothing read.
TEST(ApiLM_Faults, BaseUrlMustBeHttp) {
  for (const std::string& url :
       {std::string("file:///etc/passwd"), std::string("FTP://127.0.0.1/x"),
        std::string("127.0.0.1:8000"), std::string("gopher://h/")}) {
    Json a = {{"model", "m"}, {"base_url", url}, {"tokenizer_backend", "none"}};
    try {
      parse_api_args(ApiKind::kLocalCompletions, a, {});
      FAIL() << url;
    } catch (const UserError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("base_url"), std::string::npos) << what;
      EXPECT_NE(what.find("an http:// or https:// URL"), std::string::npos) << what;
      EXPECT_EQ(what.find("root:"), std::string::npos) << what;
    }
  }
}

// Issue 32: a 200 whose body never ends (or is gigabytes long) fails once, fast, at the answer
// size limit (256 MiB), without retrying and without buffering more than that.
TEST(ApiLM_Faults, EndlessBodyFailsAtTheSizeLimit) {
  FakeServer server([](const std::string&, const Json&, int) {
    FakeReply r;
    r.endless = true;
    return r;
  });
  Json a = {{"model", "m"}, {"base_url", server.url()}, {"tokenizer_backend", "none"}};
  ApiLM lm(parse_api_args(ApiKind::kLocalCompletions, a, {}));
  const auto start = std::chrono::steady_clock::now();
  try {
    lm.generate_until({{"hi", Json::object()}});
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the answer is larger than 256 MiB"), std::string::npos) << what;
    EXPECT_NE(what.find("after 1 attempt"), std::string::npos) << what;
  }
  EXPECT_EQ(server.calls(), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
  // Peak memory of this test process stays far below what an unbounded body would take.
  std::ifstream status("/proc/self/status");
  std::string line;
  long hwm_kb = 0;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) hwm_kb = std::stol(line.substr(6));
  EXPECT_LT(hwm_kb, 1L << 20) << "peak RSS " << hwm_kb << " kB";
}

}  // namespace
}  // namespace lmeval::api

namespace lmeval::api {
namespace {

// Issue 32: a server whose token_logprobs are shorter than the echoed prompt gave every
// log-likelihood 0.0 (the reference sums the empty slice) and exit 0; now the request fails,
// naming the field and the counts.
TEST(ApiLM_Faults, TokenLogprobsShorterThanThePromptIsAnError) {
  auto tok = stories_tokenizer();
  FakeServer server([&](const std::string&, const Json& b, int) {
    FakeReply r = completions(b, tok.get());
    Json j = Json::parse(r.body);
    for (auto& c : j["choices"]) {
      auto& lp = c["logprobs"];
      for (const char* k : {"token_logprobs", "top_logprobs", "tokens"}) {
        Json cut = Json::array();
        for (size_t i = 0; i < 2; ++i) cut.push_back(lp[k][i]);
        lp[k] = cut;
      }
    }
    r.body = j.dump();
    return r;
  });
  ApiArgs args = local_args(server.url());
  args.retry.max_attempts = 1;
  ApiLM lm(args, stories_tokenizer());
  try {
    lm.loglikelihood({{"Once upon a time there was", " a little girl"}});
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("choice 0 logprobs.token_logprobs has 2 entries for an echoed prompt of "),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("one per prompt token and one for the generated token"), std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace lmeval::api
