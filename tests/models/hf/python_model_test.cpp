// The transformers path of the hf backend (transformers_path.cpp, python_model.cpp, the plugin's
// transformers_model.py), in this process, over the pure-Python stand-in for torch and
// transformers in tests/fixtures/fake_transformers (its model: a bigram table given by a formula,
// written again here as fake_logit): which models take the path and why, what from_pretrained
// receives, and the log-likelihoods, rolling sums and generations HFLM gets through it against
// numbers computed here from the formula. Skipped, saying why, without the Python plugin or a
// Python of its version.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "gguf_test_support.hpp"
#include "lmeval/core/embedded_python.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "models/hf/arch/arch.hpp"
#include "models/hf/hf_lm.hpp"
#include "models/hf/python_model.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;

// tests/fixtures/fake_transformers/transformers/__init__.py's fake_logit.
double fake_logit(int64_t prev, int64_t next, int64_t vocab) {
  return static_cast<double>((prev * 31 + next * 17) % 97) / 8.0 +
         (next == (prev + 1) % vocab ? 2.0 : 0.0);
}

constexpr int64_t kVocab = 512;  // the llama fixture's tokenizer

double fake_logprob(int64_t prev, int64_t next) {
  double m = -1e300;
  for (int64_t j = 0; j < kVocab; ++j) m = std::max(m, fake_logit(prev, j, kVocab));
  double s = 0;
  for (int64_t j = 0; j < kVocab; ++j) s += std::exp(fake_logit(prev, j, kVocab) - m);
  return fake_logit(prev, next, kVocab) - m - std::log(s);
}

int64_t fake_argmax(int64_t prev) {
  int64_t best = 0;
  for (int64_t j = 1; j < kVocab; ++j)
    if (fake_logit(prev, j, kVocab) > fake_logit(prev, best, kVocab)) best = j;
  return best;
}

class TransformersPath : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path fake =
        lmeval::testing::source_dir() / "tests" / "fixtures" / "fake_transformers";
    // Before the interpreter starts (once per process): the stand-in shadows any real torch.
    ::setenv("PYTHONPATH", fake.c_str(), 1);
    ::setenv("LMEVAL_PLUGIN_DIR", lmeval::testing::lmeval_binary().parent_path().c_str(), 1);
    log_ = fs::temp_directory_path() / ("lmeval_fake_tf_" + std::to_string(::getpid()) + ".jsonl");
    ::setenv("FAKE_TRANSFORMERS_LOG", log_.c_str(), 1);
  }
  void SetUp() override {
    // write_folder copies the llama fixture's tokenizer from ../shared.
    if (lmeval::testing::shared_dir().empty())
      GTEST_SKIP() << "../shared is absent (the llama fixture's tokenizer)";
    dir_ = fs::temp_directory_path() /
           ("lmeval_tf_path_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::remove(log_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // A model folder of the stand-in's architecture with the llama fixture's tokenizer.
  void write_folder(Json config = Json::object()) {
    const fs::path from = lmeval::testing::shared_dir() / "fixtures" / "llama";
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
      fs::copy_file(from / f, dir_ / f, fs::copy_options::overwrite_existing);
    Json c = {{"architectures", {"FakeBigramForCausalLM"}},
              {"model_type", "fake_bigram"},
              {"vocab_size", kVocab},
              {"bos_token_id", 1},
              {"eos_token_id", 2},
              {"max_position_embeddings", 64}};
    for (const auto& [k, v] : config.items()) c[k] = v;
    std::ofstream(dir_ / "config.json") << c.dump();
  }
  static void require_python() {
    const EmbeddedPython& py = embedded_python();
    if (!py.api) GTEST_SKIP() << "no embedded Python here: " << py.failure;
  }
  std::unique_ptr<HFLM> load(Json extra = Json::object()) {
    Json args = {{"pretrained", dir_.string()}, {"device", "cpu"}};
    for (const auto& [k, v] : extra.items()) args[k] = v;
    return std::make_unique<HFLM>(parse_hf_args(args, {}));
  }
  // The calls the stand-in logged, in order.
  static std::vector<Json> calls() {
    std::vector<Json> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  }

  fs::path dir_;
  static inline fs::path log_;
  static inline int counter_ = 0;
};

HfArgs args_of(const Json& j) { return parse_hf_args(j, {}); }

// lm-eval decides without the native plugin, from the names CMake reads out of its registry.
TEST(TransformersPathNames, AreTheNativeRegistrys) {
  std::vector<std::string> generated = native_architecture_names();
  std::vector<std::string> registry = supported_architectures();
  std::sort(generated.begin(), generated.end());
  std::sort(registry.begin(), registry.end());
  EXPECT_EQ(generated, registry);
}

TEST_F(TransformersPath, ReasonsNameWhatNeedsTransformers) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  const fs::path llama = lmeval::testing::shared_dir() / "fixtures" / "llama";
  const std::string p = llama.string();
  // A native architecture with native settings runs natively, device_map alone included (HFLM
  // drops it without parallelize).
  EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", p}}), llama));
  EXPECT_FALSE(
      transformers_path_reason(args_of({{"pretrained", p}, {"device_map", "auto"}}), llama));
  EXPECT_FALSE(
      transformers_path_reason(args_of({{"pretrained", p}, {"load_in_4bit", "False"}}), llama));
  auto why =
      transformers_path_reason(args_of({{"pretrained", p}, {"load_in_4bit", "True"}}), llama);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("load_in_4bit=true"), std::string::npos) << *why;
  why = transformers_path_reason(args_of({{"pretrained", p}, {"attn_implementation", "sdpa"}}),
                                 llama);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("attn_implementation=sdpa"), std::string::npos) << *why;
  why = transformers_path_reason(args_of({{"pretrained", p}, {"parallelize", "True"}}), llama);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("parallelize=True"), std::string::npos) << *why;

  write_folder({{"architectures", {"MambaForCausalLM"}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'MambaForCausalLM' has no native implementation"), std::string::npos);
  // The folder's own code runs only under trust_remote_code=True, a native architecture too.
  write_folder({{"architectures", {"LlamaForCausalLM"}},
                {"auto_map", {{"AutoModelForCausalLM", "modeling_x.XForCausalLM"}}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  EXPECT_FALSE(why);
  why = transformers_path_reason(
      args_of({{"pretrained", dir_.string()}, {"trust_remote_code", "True"}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("modeling_x.XForCausalLM"), std::string::npos) << *why;
  // A method or layout lm-eval does not dequantise itself (quant_weights.cpp) goes to
  // transformers, named; the ones it does, and a method nobody knows, stay native.
  write_folder({{"architectures", {"LlamaForCausalLM"}},
                {"quantization_config", {{"quant_method", "awq"}, {"version", "gemv"}}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("(awq, version gemv)"), std::string::npos) << *why;
  write_folder({{"architectures", {"LlamaForCausalLM"}},
                {"quantization_config", {{"quant_method", "hqq"}}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("(hqq)"), std::string::npos) << *why;
  write_folder(
      {{"architectures", {"LlamaForCausalLM"}},
       {"quantization_config", {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("LLM.int8()"), std::string::npos) << *why;
  // bitsandbytes 4-bit is native, unless its codes are stored in another dtype than uint8.
  write_folder({{"architectures", {"LlamaForCausalLM"}},
                {"quantization_config",
                 {{"quant_method", "bitsandbytes"},
                  {"load_in_4bit", true},
                  {"bnb_4bit_quant_storage", "bfloat16"}}}});
  why = transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("bitsandbytes 4-bit, quant_storage bfloat16"), std::string::npos) << *why;
  for (const Json& q : {Json{{"quant_method", "awq"}, {"version", "GEMM"}},
                        Json{{"quant_method", "gptq"}, {"bits", 4}}, Json{{"quant_method", "fp8"}},
                        Json{{"quant_method", "bitsandbytes"},
                             {"load_in_4bit", true},
                             {"bnb_4bit_quant_storage", "uint8"}},
                        Json{{"quant_method", "compressed-tensors"}, {"format", "pack-quantized"}},
                        Json{{"quant_method", "no-such-method"}}}) {
    write_folder({{"architectures", {"LlamaForCausalLM"}}, {"quantization_config", q}});
    EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_))
        << q.dump();
  }
  // GPT-OSS's MXFP4 experts are dequantised natively; MXFP4 on another architecture is not.
  write_folder({{"architectures", {"GptOssForCausalLM"}},
                {"quantization_config", {{"quant_method", "mxfp4"}}}});
  EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_));
  write_folder({{"architectures", {"LlamaForCausalLM"}},
                {"quantization_config", {{"quant_method", "mxfp4"}}}});
  EXPECT_TRUE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_));
  // A config.json with no architecture, or one the native loader refuses (nested too deep),
  // stays native so that its loader names what is wrong.
  write_folder({{"architectures", Json::array()}});
  EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_));
  std::ofstream(dir_ / "config.json") << std::string(600, '[') << std::string(600, ']');
  EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_));
  // A peft type or LoRA variant lm-eval does not merge (hf/lora.cpp) is peft's to apply; LoRA,
  // DoRA, IA3, LoHa and LoKr are merged natively. A folder without a readable adapter_config.json
  // stays native so that the native loader names what is missing.
  const fs::path ckpt = lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_ckpt";
  auto with_peft = [&](const fs::path& adapter) {
    return transformers_path_reason(args_of({{"pretrained", p}, {"peft", adapter.string()}}),
                                    llama);
  };
  why = with_peft(ckpt / "adalora_llama");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("adalora_llama has peft_type ADALORA"), std::string::npos) << *why;
  for (const char* native :
       {"lora_plain", "dora_llama", "ia3_llama", "gpt2_lora", "loha_llama", "lokr_llama"})
    EXPECT_FALSE(with_peft(ckpt / native)) << native;
  EXPECT_FALSE(with_peft(dir_));
  for (const auto& [key, value] : std::vector<std::pair<std::string, Json>>{
           {"use_qalora", true}, {"layer_replication", Json::array({Json::array({0, 1})})}}) {
    Json c = Json::parse(lmeval::testing::read_file(ckpt / "lora_plain" / "adapter_config.json"));
    c[key] = value;
    std::ofstream(dir_ / "adapter_config.json", std::ios::trunc) << c.dump();
    why = with_peft(dir_);
    ASSERT_TRUE(why) << key;
    EXPECT_NE(why->find(key + " set (a LoRA variant lm-eval does not merge)"), std::string::npos)
        << *why;
  }
  Json dora_bias = {{"peft_type", "LORA"}, {"use_dora", true}, {"lora_bias", true}};
  std::ofstream(dir_ / "adapter_config.json", std::ios::trunc) << dora_bias.dump();
  why = with_peft(dir_);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("use_dora with lora_bias"), std::string::npos) << *why;
  std::ofstream(dir_ / "adapter_config.json", std::ios::trunc) << "{";
  EXPECT_FALSE(with_peft(dir_));
  fs::remove(dir_ / "adapter_config.json");
  // An encoder-decoder is the native seq2seq backend's (T5 runs, the others are refused there).
  write_folder({{"architectures", {"T5ForConditionalGeneration"}},
                {"model_type", "t5"},
                {"is_encoder_decoder", true}});
  EXPECT_FALSE(transformers_path_reason(args_of({{"pretrained", dir_.string()}}), dir_));
}

// A GGUF's own general.architecture decides, not the folder's config.json: one that transformers'
// GGUF loader reads and lm-eval has no native implementation of runs through transformers; those
// lm-eval reads, or refuses with a reason of its own, and files it cannot read as GGUF do not.
TEST_F(TransformersPath, GgufFilesOfArchitecturesLmEvalLacksRunThroughTransformers) {
  write_folder();  // config.json of an architecture lm-eval lacks, beside the GGUF
  auto reason = [&](const std::string& bytes) {
    std::ofstream(dir_ / "m.gguf", std::ios::binary | std::ios::trunc) << bytes;
    return transformers_path_reason(
        args_of({{"pretrained", dir_.string()}, {"gguf_file", "m.gguf"}}), dir_);
  };
  // The architecture after keys of every kind the reader skips (nested arrays included).
  MiniGguf g;
  g.u32("general.alignment", 32).boolean("x.flag", true).texts("x.names", {"a", "bc"});
  g.i32s("x.ids", {1, 2, 3});
  g.str(g.kv, "x.nested");
  MiniGguf::put<uint32_t>(g.kv, 9);
  MiniGguf::put<uint32_t>(g.kv, 9);
  MiniGguf::put<uint64_t>(g.kv, 1);
  MiniGguf::put<uint32_t>(g.kv, 8);
  MiniGguf::put<uint64_t>(g.kv, 1);
  MiniGguf::str(g.kv, "deep");
  ++g.n_kv;
  for (const char* arch : {"mamba", "lfm2", "nemotron", "gemma4", "minimax-m2"}) {
    MiniGguf f = g;
    f.text("general.architecture", arch);
    EXPECT_EQ(gguf_architecture(dir_ / "m.gguf").value_or("?"), "?");
    const auto why = reason(f.bytes());
    ASSERT_TRUE(why) << arch;
    EXPECT_EQ(gguf_architecture(dir_ / "m.gguf"), arch);
    EXPECT_NE(why->find("GGUF architecture '" + std::string(arch) + "'"), std::string::npos)
        << *why;
    EXPECT_NE(why->find("general.architecture of " + (dir_ / "m.gguf").string()), std::string::npos)
        << *why;
    fs::remove(dir_ / "m.gguf");
  }
  for (const char* arch : {"llama", "qwen3moe", "gpt-oss", "t5", "rwkv6"}) {
    MiniGguf f = g;
    f.text("general.architecture", arch);
    EXPECT_FALSE(reason(f.bytes())) << arch;
  }
  // Not readable as GGUF: the native loader names what is wrong.
  MiniGguf v1 = MiniGguf::llama("mamba");
  v1.version = 1;
  EXPECT_FALSE(reason(v1.bytes()));
  const std::string whole = MiniGguf::llama("mamba").bytes();
  EXPECT_FALSE(reason(whole.substr(0, 40)));  // cut inside the metadata
  EXPECT_FALSE(reason("not a gguf file at all"));
  EXPECT_TRUE(reason(whole));
  fs::remove(dir_ / "m.gguf");
  EXPECT_FALSE(transformers_path_reason(
      args_of({{"pretrained", dir_.string()}, {"gguf_file", "m.gguf"}}), dir_));
}

TEST_F(TransformersPath, AGgufThroughTransformersIsLoadedFromItsFile) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder();
  std::ofstream(dir_ / "m.gguf", std::ios::binary) << MiniGguf::llama("mamba").bytes();
  auto lm = load({{"gguf_file", "m.gguf"}, {"tokenizer", dir_.string()}});
  ASSERT_TRUE(lm->transformers_reason());
  EXPECT_NE(lm->transformers_reason()->find("GGUF architecture 'mamba'"), std::string::npos);
  EXPECT_EQ(lm->model_info()["hf_execution"]["path"], "transformers");
  const auto log = calls();
  ASSERT_GE(log.size(), 2U);
  EXPECT_EQ(log[1]["call"], "AutoModelForCausalLM.from_pretrained");
  EXPECT_EQ(log[1]["path"], dir_.string());
  EXPECT_EQ(log[1]["kwargs"]["gguf_file"], "m.gguf");
}

TEST_F(TransformersPath, FromPretrainedReceivesTheModelArgsAsHflmPassesThem) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder();
  auto lm = load({{"dtype", "float32"},
                  {"trust_remote_code", "True"},
                  {"attn_implementation", "eager"},
                  {"revision", "v1"}});
  ASSERT_TRUE(lm->transformers_reason());
  EXPECT_EQ(lm->model_info()["hf_execution"]["path"], "transformers");
  // The first reason found: the from_pretrained key, before the architecture.
  EXPECT_NE(lm->model_info()["hf_execution"]["reason"].get<std::string>().find(
                "attn_implementation=eager"),
            std::string::npos);
  EXPECT_EQ(lm->model_info()["model_num_parameters"], kVocab * kVocab);
  EXPECT_EQ(lm->max_length(), 64);  // the Python config's max_position_embeddings
  const auto log = calls();
  ASSERT_GE(log.size(), 2U);
  EXPECT_EQ(log[0]["call"], "AutoConfig.from_pretrained");
  EXPECT_EQ(log[0]["kwargs"], (Json{{"revision", "v1"},
                                    {"trust_remote_code", true},
                                    {"gguf_file", nullptr},
                                    {"subfolder", ""}}));
  EXPECT_EQ(log[1]["call"], "AutoModelForCausalLM.from_pretrained");
  EXPECT_EQ(log[1]["path"], dir_.string());
  // HFLM._create_model: dtype by name, the model's own code allowed, the accelerate arguments of
  // one device, and the key HFLM does not read passed on.
  EXPECT_EQ(log[1]["kwargs"], (Json{{"revision", "v1"},
                                    {"dtype", "torch.float32"},
                                    {"trust_remote_code", true},
                                    {"gguf_file", nullptr},
                                    {"quantization_config", nullptr},
                                    {"subfolder", ""},
                                    {"attn_implementation", "eager"},
                                    {"max_memory", nullptr},
                                    {"device_map", {{"", "cpu"}}}}));
}

TEST_F(TransformersPath, ParallelizeGivesTheAccelerateArguments) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder();
  load({{"parallelize", "True"},
        {"max_memory_per_gpu", "10GiB"},
        {"max_cpu_memory", "30GiB"},
        {"offload_folder", "/tmp/off"}});
  const auto log = calls();
  ASSERT_GE(log.size(), 2U);
  const Json& kw = log[1]["kwargs"];
  EXPECT_EQ(kw["device_map"], "auto");
  EXPECT_EQ(kw["max_memory"], (Json{{"cpu", "30GiB"}}));  // no GPU here: none of its own
  EXPECT_EQ(kw["offload_folder"], "/tmp/off");
}

TEST_F(TransformersPath, LoglikelihoodsAreTheModelsOwn) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder();
  auto lm = load();
  const std::vector<LoglikelihoodRequest> reqs = {{"Once upon a time", " there was"},
                                                  {"Once upon a time", " a cat"},
                                                  {"", "hello world"},
                                                  {"The dog", " ran"}};
  const auto got = lm->loglikelihood(reqs);
  ASSERT_EQ(got.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto [ctx, cont] = lm->encode_request(reqs[i]);
    std::vector<Token> all = ctx;
    all.insert(all.end(), cont.begin(), cont.end());
    double want = 0;
    bool greedy = true;
    for (size_t k = ctx.size(); k < all.size(); ++k) {
      want += fake_logprob(all[k - 1], all[k]);
      greedy = greedy && fake_argmax(all[k - 1]) == all[k];
    }
    EXPECT_NEAR(got[i].loglikelihood, want, 1e-9) << reqs[i].context << "|" << reqs[i].continuation;
    EXPECT_EQ(got[i].is_greedy, greedy);
  }
  // Rolling windows (max_length 64) summed as the reference sums them.
  std::string text;
  for (int i = 0; i < 30; ++i) text += "the cat sat on the mat. ";
  const auto rolled = lm->loglikelihood_rolling({text});
  double want = 0;
  for (const auto& [ctx, cont] : rolling_windows(lm->tok_encode(text), lm->prefix_token_id(), 64)) {
    std::vector<Token> all = ctx;
    all.insert(all.end(), cont.begin(), cont.end());
    for (size_t k = ctx.size(); k < all.size(); ++k) want += fake_logprob(all[k - 1], all[k]);
  }
  EXPECT_NEAR(rolled[0], want, 1e-7);
}

TEST_F(TransformersPath, GenerationsStopAsTheReferencesDo) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder();
  auto lm = load();
  const std::vector<std::string> contexts = {"Once upon a time", "The dog"};
  // Greedy continuations by the formula, 12 tokens, decoded; the stop string is a piece of the
  // first one's text, so that generation ends at it.
  std::vector<std::string> free_text;
  for (const auto& c : contexts) {
    std::vector<Token> ids = lm->tok_encode(c);
    std::vector<Token> gen;
    for (int k = 0; k < 12; ++k) {
      gen.push_back(static_cast<Token>(fake_argmax(ids.back())));
      ids.push_back(gen.back());
      if (gen.back() == 2) break;  // EOS ends the row (config.json's eos_token_id)
    }
    free_text.push_back(lm->tokenizer().decode(gen, true));
  }
  ASSERT_GT(free_text[0].size(), 6U);
  const std::string stop = free_text[0].substr(free_text[0].size() / 2, 2);
  const std::vector<GenerationRequest> reqs = {
      {contexts[0], Json{{"until", {stop}}, {"max_gen_toks", 12}}},
      {contexts[1], Json{{"until", Json::array()}, {"max_gen_toks", 12}}}};
  const auto got = lm->generate_until(reqs);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0], free_text[0].substr(0, free_text[0].find(stop)));
  EXPECT_EQ(got[1], free_text[1]);
  bool generated = false;
  for (const auto& c : calls())
    if (c["call"] == "generate") {
      generated = true;
      EXPECT_EQ(c["kwargs"]["do_sample"], false);
      EXPECT_EQ(c["kwargs"]["use_cache"], true);
      EXPECT_FALSE(c["kwargs"].contains("temperature"));  // _model_generate drops it when greedy
    }
  EXPECT_TRUE(generated);
}

TEST_F(TransformersPath, AnExceptionInFromPretrainedIsShown) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  require_python();
  write_folder({{"fake_raise", "weights are corrupt (test)"}});
  try {
    load();
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("runs through transformers"), std::string::npos) << m;
    EXPECT_NE(m.find("ValueError: weights are corrupt (test)"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace lmeval::hf
