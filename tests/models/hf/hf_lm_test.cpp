// HFLM request semantics: model_args, encoding, grouping, batch invariance, rolling windows,
// generate_until, and bad model folders.
#include "models/hf/hf_lm.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path stories() { return lmeval::testing::shared_dir() / "models" / "stories260K"; }

std::unique_ptr<HFLM> load_stories(Json extra = Json::object()) {
  Json args = {{"pretrained", stories().string()}, {"device", "cpu"}};
  for (auto& [k, v] : extra.items()) args[k] = v;
  return std::make_unique<HFLM>(parse_hf_args(args, {}));
}

// BLOOM's and MPT's config classes have no n_positions / max_position_embeddings / n_ctx: HFLM's
// resolve_max_length then takes the tokenizer's model_max_length, here unset (huge), so 2048.
TEST(HfArgs, MaxLengthOfAConfigClassWithoutPositionsComesFromTheTokenizer) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/tokenizer.json");
  for (const std::string name : {"bloom", "mpt"}) {
    const fs::path dir = fs::temp_directory_path() / ("lmeval_max_length_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path fixture =
        lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / name;
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(fixture / f, dir / f);
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
      fs::copy_file(stories() / f, dir / f);
    HFLM lm(parse_hf_args(Json{{"pretrained", dir.string()}, {"device", "cpu"}}, {}));
    EXPECT_EQ(lm.max_length(), 2048) << name;
    fs::remove_all(dir);
  }
}

TEST(HfArgs, UnknownKeyListsKnownOnes) {
  try {
    parse_hf_args(Json{{"pretrained", "x"}, {"bogus", 1}}, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos);
    EXPECT_NE(e.expected().find("pretrained"), std::string::npos);
    EXPECT_NE(e.expected().find("softmax_dtype"), std::string::npos);
  }
  EXPECT_THROW(parse_hf_args(Json{{"dtype", "float32"}}, {}), UserError);  // no pretrained
  EXPECT_THROW(parse_hf_args(Json{{"pretrained", "x"}, {"batch_size", "auto:x"}}, {}), UserError);
  EXPECT_THROW(parse_hf_args(Json{{"pretrained", "x"}, {"max_length", "long"}}, {}), UserError);
  HfArgs a = parse_hf_args(Json{{"pretrained", "x"},
                                {"add_bos_token", "True"},
                                {"max_length", "64"},
                                {"batch_size", 8},
                                {"logits_cache", "False"}},
                           {});
  EXPECT_EQ(a.add_bos_token, std::optional<bool>(true));
  EXPECT_EQ(a.max_length, std::optional<int64_t>(64));
  EXPECT_EQ(a.batch_size, "8");
  EXPECT_FALSE(a.logits_cache);
  ModelOptions o;
  o.batch_size = "auto:4";
  o.max_batch_size = 16;
  a = parse_hf_args(Json{{"pretrained", "x"}, {"batch_size", 2}}, o);
  EXPECT_EQ(a.batch_size, "auto:4");
  EXPECT_EQ(a.max_batch_size, 16);
}

TEST(HfRolling, WindowsAsTheReference) {
  // The spec's example: L=4, N=10, prefix P=99.
  std::vector<Token> t = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto w = rolling_windows(t, 99, 4);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].first, (std::vector<Token>{99}));
  EXPECT_EQ(w[0].second, (std::vector<Token>{0, 1, 2, 3}));
  EXPECT_EQ(w[1].first, (std::vector<Token>{3}));
  EXPECT_EQ(w[1].second, (std::vector<Token>{4, 5, 6, 7}));
  EXPECT_EQ(w[2].first, (std::vector<Token>{5, 6, 7}));
  EXPECT_EQ(w[2].second, (std::vector<Token>{8, 9}));
  EXPECT_TRUE(rolling_windows({}, 1, 4).empty());
  auto one = rolling_windows({7, 8}, 1, 4);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].first, (std::vector<Token>{1}));
  EXPECT_EQ(one[0].second, (std::vector<Token>{7, 8}));
}

TEST(HfLM, Stories260KContinuationsMatchTransformers) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/reference/reference.json");
  auto lm = load_stories();
  json ref = json::parse(lmeval::testing::read_file(stories() / "reference" / "reference.json"));
  std::vector<LoglikelihoodRequest> reqs;
  for (const auto& p : ref["prompts"]) {
    const auto& c = p["continuation"];
    LoglikelihoodRequest r{p["prompt"].get<std::string>(), c["text"].get<std::string>()};
    auto [ctx, cont] = lm->encode_request(r);
    EXPECT_EQ(ctx, c["context_ids"].get<std::vector<Token>>()) << r.context;
    EXPECT_EQ(cont, c["continuation_ids"].get<std::vector<Token>>()) << r.continuation;
    reqs.push_back(r);
  }
  auto res = lm->loglikelihood(reqs);
  size_t i = 0;
  for (const auto& p : ref["prompts"]) {
    EXPECT_NEAR(res[i].loglikelihood, p["continuation"]["total_logprob"].get<double>(), 1e-4);
    EXPECT_EQ(res[i].is_greedy, p["continuation"]["is_greedy"].get<bool>());
    ++i;
  }
  // Trailing whitespace of the context moves to the continuation: same numbers.
  auto moved = lm->loglikelihood({{"Once upon a time ", "there was a little girl named Lily."}});
  auto joint = lm->loglikelihood({{"Once upon a time", " there was a little girl named Lily."}});
  EXPECT_DOUBLE_EQ(moved[0].loglikelihood, joint[0].loglikelihood);
  // Empty context: the prefix (BOS) token is the context.
  auto [ectx, econt] = lm->encode_request({"", "Once upon a time"});
  EXPECT_EQ(ectx, (std::vector<Token>{1}));
  EXPECT_EQ(econt, (std::vector<Token>{403, 407, 261, 378}));
}

// Batch invariance bound of the issue: a request's float32 score must not move with its batch
// (size, neighbours, padding) or with prefix sharing. The float32 CPU path computes every row
// with a fixed operation order (kernels.hpp), so the measured difference is 0; OpenBLAS's sgemm
// alone moved scores by up to ~5e-5.
constexpr double kBatchTolerance = 1e-5;

// Requests of many lengths, with shared contexts and one-token continuations.
std::vector<LoglikelihoodRequest> mixed_requests() {
  std::vector<LoglikelihoodRequest> reqs;
  std::vector<std::string> ctxs = {"Once upon a time",
                                   "Lily went to the park",
                                   "Tom had a big red ball. He",
                                   "The cat sat on the mat and",
                                   "One day, a little bird",
                                   "Once upon a time, there was a little boy "
                                   "named Tim. Tim liked to play with his toys. One day, he"};
  std::vector<std::string> conts = {
      " a", " b", " saw", " was happy.", " went to the park with mom.", " flew"};
  for (const auto& c : ctxs)
    for (const auto& k : conts) reqs.push_back({c, k});
  reqs.push_back({"", "Once upon a time"});
  return reqs;
}

TEST(HfLM, BatchInvarianceAndGrouping) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  auto lm = load_stories();
  auto reqs = mixed_requests();
  lm->set_fixed_batch_rows(1);
  auto one = lm->loglikelihood(reqs);
  for (int64_t rows : {3, 7, 64}) {
    lm->set_fixed_batch_rows(rows);
    auto many = lm->loglikelihood(reqs);
    double d = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      d = std::max(d, std::abs(many[i].loglikelihood - one[i].loglikelihood));
      EXPECT_EQ(many[i].is_greedy, one[i].is_greedy);
    }
    EXPECT_LE(d, kBatchTolerance) << rows << " rows per batch";
  }
  // Without prefix sharing (each choice runs its context again): the same numbers.
  lm->set_prefix_sharing(false);
  for (int64_t rows : {1, 4}) {
    lm->set_fixed_batch_rows(rows);
    auto unshared = lm->loglikelihood(reqs);
    double du = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      du = std::max(du, std::abs(unshared[i].loglikelihood - one[i].loglikelihood));
      EXPECT_EQ(unshared[i].is_greedy, one[i].is_greedy);
    }
    EXPECT_LE(du, kBatchTolerance) << "unshared, " << rows << " rows per batch";
  }
  lm->set_prefix_sharing(true);
  // Each request alone, unbatched and ungrouped: the same numbers.
  auto nocache = load_stories(Json{{"logits_cache", false}, {"batch_size", 1}});
  double d = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const double x = nocache->loglikelihood({reqs[i]})[0].loglikelihood;
    d = std::max(d, std::abs(x - one[i].loglikelihood));
  }
  EXPECT_LE(d, kBatchTolerance);
  // Results come back in request order: reversing the requests reverses the results.
  std::vector<LoglikelihoodRequest> rev(reqs.rbegin(), reqs.rend());
  lm->set_fixed_batch_rows(5);
  auto r = lm->loglikelihood(rev);
  for (size_t i = 0; i < reqs.size(); ++i)
    EXPECT_NEAR(r[reqs.size() - 1 - i].loglikelihood, one[i].loglikelihood, kBatchTolerance);
}

// Out of memory mid-run (simulated: no GPU here): the batch is retried at half the size, the
// run finishes with the same numbers, and work that had finished is not fed again.
TEST(HfLM, OutOfMemoryHalvesTheBatchAndLosesNothing) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  auto reqs = mixed_requests();
  auto plain = load_stories();
  plain->set_fixed_batch_rows(64);
  auto want = plain->loglikelihood(reqs);
  auto full = load_stories();
  full->set_fixed_batch_rows(64);
  full->transformer().simulate_memory_limit(100);  // far below one 64-row batch
  auto got = full->loglikelihood(reqs);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(got[i].loglikelihood, want[i].loglikelihood) << i;
    EXPECT_EQ(got[i].is_greedy, want[i].is_greedy) << i;
  }
  EXPECT_EQ(full->fed_tokens("loglikelihood"), plain->fed_tokens("loglikelihood"));
  EXPECT_LE(full->max_batch_tokens("loglikelihood"), 100);

  std::vector<GenerationRequest> gens;
  for (const char* c : {"Once upon a time", "The cat sat", "Tom had a big red ball.", "One day"})
    gens.push_back({c, Json{{"until", Json::array({"."})}, {"max_gen_toks", 12}}});
  auto gen_want = plain->generate_until(gens);
  full->transformer().simulate_memory_limit(30);  // one prompt + 12 new tokens fits, four do not
  EXPECT_EQ(full->generate_until(gens), gen_want);

  // A single request that does not fit is a runtime error naming the cause, not a crash.
  full->transformer().simulate_memory_limit(3);
  try {
    full->loglikelihood({reqs[0]});
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

// batch_size auto:N detects the batch size again at each of N parts of the sorted work (the
// reference's batch_schedule); plain auto detects once. Scores are the same either way.
TEST(HfLM, AutoScheduleRedetects) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  auto plain = load_stories(Json{{"batch_size", "auto"}, {"max_batch_size", 2}});
  auto sched = load_stories(Json{{"batch_size", "auto:3"}, {"max_batch_size", 2}});
  auto reqs = mixed_requests();
  auto a = plain->loglikelihood(reqs);
  auto b = sched->loglikelihood(reqs);
  EXPECT_EQ(plain->batch_sizes().size(), 1u);
  plain->loglikelihood(reqs);  // one entry per part over the whole run, as the reference's dict
  EXPECT_EQ(plain->batch_sizes().size(), 1u);
  EXPECT_GE(sched->batch_sizes().size(), 2u);
  EXPECT_LE(sched->batch_sizes().size(), 3u);
  for (size_t i = 0; i < reqs.size(); ++i)
    EXPECT_LE(std::abs(a[i].loglikelihood - b[i].loglikelihood), kBatchTolerance);
}

TEST(HfLM, RollingEqualsTokenSums) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  const std::string text =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "park. "
      "One day, she saw a big, red ball.";
  // Short max_length forces several windows; long max_length gives one window over BOS + text.
  auto small = load_stories(Json{{"max_length", 16}});
  auto big = load_stories();
  auto ids = big->tok_encode(text);
  ASSERT_GT(ids.size(), 32u);
  // Independent of the windows: log p(ids[i] | BOS, ids[:i]) from full log-softmax rows.
  std::vector<Token> fed = {1};
  fed.insert(fed.end(), ids.begin(), ids.end() - 1);
  auto lp = big->transformer().full_logprobs({fed}, {}, {});
  double want = 0;
  for (size_t i = 0; i < ids.size(); ++i) want += lp[i * 512 + ids[i]];
  EXPECT_NEAR(big->loglikelihood_rolling({text})[0], want, 1e-4);
  // With 16-token windows each later window sees only 16 tokens, so the sum differs from the
  // full-context one; compute it window by window from full rows.
  double want16 = 0;
  for (const auto& [ctx, cont] : rolling_windows(ids, 1, 16)) {
    std::vector<Token> all = ctx;
    all.insert(all.end(), cont.begin(), cont.end());
    std::vector<Token> inp(all.begin(), all.end() - 1);
    auto rows = big->transformer().full_logprobs({inp}, {}, {});
    for (size_t i = 0; i < cont.size(); ++i)
      want16 += rows[(inp.size() - cont.size() + i) * 512 + cont[i]];
  }
  // Each text's sum is handed to the answer sink once its last window is scored (so a stop
  // keeps it), exactly the value the call returns.
  std::map<size_t, double> handed;
  AnswerSink sink;
  sink.loglikelihood_rolling = [&](size_t i, double v) {
    EXPECT_FALSE(handed.count(i)) << "text " << i << " handed out twice";
    handed[i] = v;
  };
  small->set_answer_sink(sink);
  auto got = small->loglikelihood_rolling({text, "", text});
  ASSERT_EQ(handed.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(handed[i], got[i]) << i;
  EXPECT_NEAR(got[0], want16, 1e-4);
  // "" encodes to [BOS]: one window scoring BOS after the prefix token, as the reference.
  auto bos_only = big->transformer().full_logprobs({{1}}, {}, {});
  EXPECT_NEAR(got[1], bos_only[1], kBatchTolerance);
  EXPECT_NEAR(got[0], got[2], kBatchTolerance);
}

TEST(HfLM, GenerateUntilStopsAndCuts) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/reference/reference.json");
  auto lm = load_stories();
  json ref = json::parse(lmeval::testing::read_file(stories() / "reference" / "reference.json"));
  const std::string full = ref["prompts"][0]["greedy100"]["text"].get<std::string>();
  std::vector<GenerationRequest> reqs = {
      {"Once upon a time", Json{{"until", Json::array({"."})}, {"max_gen_toks", 100}}},
      {"Once upon a time", Json{{"until", "Lily"}, {"max_gen_toks", 100}, {"do_sample", false}}},
      {"Once upon a time", Json{{"until", Json::array()}, {"max_gen_toks", 100}}},
      {"Once upon a time", Json{{"until", Json::array({"\n"})}, {"max_gen_toks", 5}}},
  };
  auto out = lm->generate_until(reqs);
  EXPECT_EQ(out[0], full.substr(0, full.find('.')));
  EXPECT_EQ(out[1], full.substr(0, full.find("Lily")));
  EXPECT_EQ(out[2], full);
  auto five = lm->tokenizer().decode(
      std::vector<Token>(ref["prompts"][0]["greedy100"]["new_ids"].begin(),
                         ref["prompts"][0]["greedy100"]["new_ids"].begin() + 5),
      true);
  EXPECT_EQ(out[3], five);
  // From BOS alone (empty context: the tokenizer adds BOS), the published llama2.c sample.
  auto bos = lm->generate_until({{"", Json{{"max_gen_toks", 256}}}});
  EXPECT_EQ(bos[0], ref["greedy_from_bos"]["text_256"].get<std::string>());
}

// ----- bad model folders ----------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("lmeval_hf_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

void copy_fixture(const fs::path& to) {
  const fs::path from = lmeval::testing::shared_dir() / "fixtures" / "llama";
  for (const char* f :
       {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(from / f, to / f, fs::copy_options::overwrite_existing);
  fs::permissions(to / "model.safetensors", fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(to / "config.json", fs::perms::owner_read | fs::perms::owner_write);
}

std::string error_of(const fs::path& dir) {
  try {
    Transformer::load(dir, {});
  } catch (const UserError& e) {
    return std::string(e.what()) + " | " + e.where().to_string() + " | " + e.expected();
  }
  return "";
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(HfBadInput, MissingFilesAndPickles) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  TempDir d;
  EXPECT_NE(error_of(d.path() / "nope").find("does not exist"), std::string::npos);
  EXPECT_NE(error_of(d.path()).find("config.json"), std::string::npos);
  copy_fixture(d.path());
  fs::remove(d.path() / "model.safetensors");
  EXPECT_NE(error_of(d.path()).find("no model weights"), std::string::npos);
  // pytorch_model.bin is read (torch_file_test.cpp); a damaged one is named.
  write_bytes(d.path() / "pytorch_model.bin", "PK\x03\x04");
  std::string e = error_of(d.path());
  EXPECT_NE(e.find("pytorch_model.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("corrupt PyTorch zip checkpoint"), std::string::npos) << e;
  EXPECT_THROW(make_hf_model(Json{{"pretrained", (d.path() / "nope").string()}}, {}), UserError);
}

TEST(HfBadInput, CorruptSafetensors) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  TempDir d;
  copy_fixture(d.path());
  const fs::path st = d.path() / "model.safetensors";
  const std::string good = lmeval::testing::read_file(st);
  uint64_t hlen = 0;
  std::memcpy(&hlen, good.data(), 8);
  const std::string header = good.substr(8, hlen);

  write_bytes(st, good.substr(0, 5));
  EXPECT_NE(error_of(d.path()).find("shorter than its 8-byte header"), std::string::npos);

  std::string big = good;
  uint64_t huge = good.size() * 2;
  std::memcpy(big.data(), &huge, 8);
  write_bytes(st, big);
  EXPECT_NE(error_of(d.path()).find("beyond the end of the file"), std::string::npos);

  write_bytes(st, good.substr(0, good.size() - 1000));  // truncated data
  EXPECT_NE(error_of(d.path()).find("outside the data section"), std::string::npos);

  std::string badjson = good;
  badjson[8] = '[';
  badjson[9] = '{';
  write_bytes(st, badjson);
  EXPECT_NE(error_of(d.path()).find("not valid JSON"), std::string::npos);

  // A shape that disagrees with config.json: patch the header's first [512, 64] to [64, 512].
  std::string shape = good;
  auto at = shape.find("[512,64]", 8);
  ASSERT_NE(at, std::string::npos);
  shape.replace(at, 8, "[64,512]");
  write_bytes(st, shape);
  std::string e = error_of(d.path());
  EXPECT_NE(e.find("config.json implies"), std::string::npos) << e;

  // An unknown dtype.
  std::string dt = good;
  at = dt.find("\"F32\"", 8);
  dt.replace(at, 5, "\"Q99\"");
  write_bytes(st, dt);
  EXPECT_NE(error_of(d.path()).find("unknown dtype"), std::string::npos);
}

TEST(HfBadInput, UnsupportedArchitecture) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  TempDir d;
  copy_fixture(d.path());
  json cfg = json::parse(lmeval::testing::read_file(d.path() / "config.json"));
  cfg["architectures"] = {"MambaForCausalLM"};
  std::ofstream(d.path() / "config.json", std::ios::trunc) << cfg.dump();
  std::string e = error_of(d.path());
  EXPECT_NE(e.find("MambaForCausalLM"), std::string::npos);
  EXPECT_NE(e.find("GPT2LMHeadModel"), std::string::npos);
  cfg["architectures"] = {"LlamaForCausalLM"};
  cfg["rope_parameters"] = {{"rope_type", "mrope"}, {"factor", 2.0}};
  std::ofstream(d.path() / "config.json", std::ios::trunc) << cfg.dump();
  EXPECT_NE(error_of(d.path()).find("mrope"), std::string::npos);
}

TEST(HfRegistry, RegistersThreeNames) {
  ModelRegistry r;
  register_hf_model(r);
  for (const char* n : {"hf", "hf-auto", "huggingface"}) {
    const ModelInfoEntry* e = r.find(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_EQ(e->name, "hf");
    EXPECT_NE(std::find(e->known_args.begin(), e->known_args.end(), "pretrained"),
              e->known_args.end());
  }
}

}  // namespace
}  // namespace lmeval::hf
