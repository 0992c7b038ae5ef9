// float16 and bfloat16 on the CPU against transformers' own numbers for the same checkpoints
// (tests/fixtures/hf_arch/half_precision.json, scripts/gen_half_precision_goldens.py), and
// dtype=auto resolved as transformers' _get_dtype resolves it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "dump_reader.hpp"
#include "half_bits.hpp"
#include "models/hf/debug_dump.hpp"
#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path arch_dir() { return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch"; }

// torch's half-precision attention sums in vectors of its CPU capability's width (the goldens'
// "cpu_capability"), and lm-eval follows the capability torch would pick here
// (reduced_attention.cpp), so on an AVX-512 machine it is told, as torch would be, to take the
// goldens' one (ATEN_CPU_CAPABILITY), and of the goldens' torch thread count.
const json& goldens() {
  static const json g = [] {
    json j = json::parse(lmeval::testing::read_file(arch_dir() / "half_precision.json"));
    half_bits::follow_goldens_environment(j["meta"]);
    return j;
  }();
  return g;
}

// Bounds on |ours - transformers| per log-prob. A logit is rounded to the dtype (float16: 11
// significant bits, bfloat16: 8) on both sides, and the float32 sums inside the matrix products
// run in another order (OpenBLAS here, MKL / torch's 32-lane float16 dot in torch 2.15:
// scripts/half_matmul_order.py), so now and then a rounding lands the other way and moves the
// log-probs by an ulp of the logits. The bound is two ulps of a logit between 4 and 8 (float16
// 2 * 2^-8, bfloat16 2 * 2^-5); measured at most 0.0044 (float16) and 0.039 (bfloat16), both
// OLMo 2 (before torch 2.15's attention exponential and log_softmax roundings were reproduced:
// 0.0105 and 0.062, Gemma 3).
double row_bound(const std::string& dtype) { return dtype == "float16" ? 0.0078125 : 0.0625; }
// HFLM's sum is rounded to the dtype: one ulp of the sum (measured: equal but for GPT-OSS in
// bfloat16, one ulp).
double sum_bound(const std::string& dtype, double sum) {
  const double bits = dtype == "float16" ? 11 : 8;
  return std::ldexp(
      1.0, static_cast<int>(std::floor(std::log2(std::abs(sum)))) - static_cast<int>(bits) + 1);
}

// Where every operation rounds as torch's (half_gemm.hpp, activation.hpp, reduced_precision.hpp),
// the logits are transformers' bit for bit and the log-probs differ only by the float32
// log_softmax's own rounding (measured: under 5e-6): every fixture here, in both dtypes. The
// experts (Mixtral, Qwen MoE, OLMoE, GPT-OSS) as transformers' grouped_mm experts combine them
// (moe.cpp); SDPA's q·k and p·v summed in the order of torch's own gemm, not OpenBLAS's
// (reduced_attention.cpp: with OpenBLAS's Haswell kernel, float16 granite, OLMo 2, Phi, Falcon,
// Qwen2-MoE and DeepSeek were one ulp of a logit apart on the 20-token input); DeepSeek's MLA,
// whose values are narrower than its queries, as SDPA's math path computes it; Cohere's rotation
// as CohereRotaryEmbedding rounds its tables (rope_tables_rounded) and its LayerNorm as
// CohereLayerNorm's formula (layer_norm_formula). torch's half-precision kernels sum in an
// order set by the CPU's vector width (the goldens' "cpu_capability"; lm-eval reproduces the
// AVX2 order), so this holds against AVX2 goldens.
bool exact_fixture() { return goldens()["meta"].value("cpu_capability", "") == "AVX2"; }
constexpr double kExactBound = 1e-4;

class ReducedPrecisionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReducedPrecisionTest, RowsArgmaxesAndHflmSumsMatchTransformers) {
  const std::string name = GetParam();
  const json& per = goldens()["fixtures"][name];
  for (const std::string dtype : {"float16", "bfloat16"}) {
    LoadOptions opt;
    opt.dtype = dtype;
    auto model = Transformer::load(arch_dir() / name, opt);
    EXPECT_EQ(model->dtype_name(), "torch." + dtype);
    const int64_t V = model->config().vocab_size;
    for (const auto& in : per[dtype]["inputs"]) {
      const auto ids = in["input_ids"].get<std::vector<Token>>();
      const int64_t T = static_cast<int64_t>(ids.size());
      const std::vector<float> lp = model->full_logprobs({ids}, {}, {});
      ASSERT_EQ(static_cast<int64_t>(lp.size()), T * V);
      double worst = 0;
      const auto want_next = in["next_token_logprobs"].get<std::vector<double>>();
      for (int64_t i = 0; i + 1 < T; ++i)
        worst = std::max(worst, std::abs(lp[i * V + ids[i + 1]] - want_next[i]));
      const auto want_last = in["last_row_logprobs"].get<std::vector<double>>();
      for (int64_t v = 0; v < V; ++v)
        worst = std::max(worst, std::abs(lp[(T - 1) * V + v] - want_last[v]));
      EXPECT_LE(worst, exact_fixture() ? kExactBound : row_bound(dtype)) << name << " " << dtype;
      // Argmaxes where no row's two best logits are within the bound (a tie may break either way).
      if (in["min_top2_logit_margin"].get<double>() > row_bound(dtype)) {
        const auto want_argmax = in["argmax"].get<std::vector<int64_t>>();
        for (int64_t i = 0; i < T; ++i) {
          const float* row = lp.data() + i * V;
          EXPECT_EQ(std::max_element(row, row + V) - row, want_argmax[i]) << name << " " << i;
        }
      }
      // The scoring path: HFLM's log_softmax and sum in the dtype.
      ScoreRow r{ids, {ScoreSpan{0, std::vector<Token>(ids.begin() + 1, ids.end())}}};
      const double want = in["hflm_sum_logprob"].get<double>();
      EXPECT_NEAR(model->score({r})[0][0].logprob, want, sum_bound(dtype, want))
          << name << " " << dtype;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HfReducedPrecision, ReducedPrecisionTest,
                         ::testing::Values("granite", "olmo2", "gemma3", "bloom", "gptj", "gpt_oss",
                                           "phi_qk_layernorm", "falcon_40b", "falcon_rw", "mixtral",
                                           "qwen2_moe", "qwen3_moe", "olmoe", "deepseek_v2",
                                           "deepseek_v3", "cohere", "cohere2"));

// Greedy generation past the sliding window (or chunk) of the fixtures that have one (and
// DeepSeek-V2's, below), against transformers' generate: its cache keeps a windowed layer's last
// window - 1 keys only, and the kernels' sums depend on which keys are there (transformer_impl.hpp,
// attend_heads). Each step's logits are checked through two exact sums of them (the goldens'
// logit_sums), read back from the forward calls' dumps (debug_dump.hpp): a logit one unit in the
// last place off shows. The tokens are transformers' for every fixture here, and so are the logits,
// bit for bit: a step is one query over its row's keys in torch's flash kernel, whose small-block
// orders reduced_attention.cpp reproduces, a prompt's last token is its prefill's last row,
// DeepSeek-V2 rotates a step's one position as torch's scalar complex product rounds it
// (rotate_pairs_polar) and Llama 4's experts multiply in their [in, out] layout
// (MoeConfig::transposed_experts).
bool exact_steps() { return goldens()["meta"].value("cpu_capability", "") == "AVX2"; }

class ReducedPrecisionGenerateTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReducedPrecisionGenerateTest, GreedyStepsHaveTransformersLogits) {
  const std::string name = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("lmeval_half_generate_" + name);
  for (const std::string dtype : {"float16", "bfloat16"}) {
    LoadOptions opt;
    opt.dtype = dtype;
    auto model = Transformer::load(arch_dir() / name, opt);
    for (const auto& g : goldens()["fixtures"][name][dtype]["greedy"]) {
      const auto want = g["new_tokens"].get<std::vector<Token>>();
      SamplingOptions so;
      so.max_new_tokens = static_cast<int64_t>(want.size());
      so.eos_ids = {g["eos_token_id"].get<Token>()};
      fs::remove_all(dir);
      fs::create_directories(dir);
      debug::dump_to(dir.string());
      const auto got = model->generate({g["input_ids"].get<std::vector<Token>>()}, so, nullptr);
      debug::dump_to("");
      ASSERT_EQ(got.size(), 1U);
      EXPECT_EQ(got[0], want) << name << " " << dtype;
      // The calls that computed logits, one per step (the prompt's prefill computes none).
      std::vector<std::vector<float>> steps;
      for (const auto& f : testing::dump_files(dir)) {
        const testing::DumpFile file(f);
        if (!file.has("logits")) continue;
        const testing::DumpedTensor t = file.tensor("logits");
        steps.emplace_back(t.bytes.size() / sizeof(float));
        std::memcpy(steps.back().data(), t.bytes.data(), t.bytes.size());
      }
      const auto& sums = g["logit_sums"];
      ASSERT_EQ(steps.size(), sums.size()) << name << " " << dtype;
      if (!exact_steps()) continue;
      for (size_t s = 0; s < steps.size(); ++s) {
        double sum = 0, weighted = 0;
        for (size_t v = 0; v < steps[s].size(); ++v) {
          sum += steps[s][v];
          weighted += static_cast<double>(v + 1) * steps[s][v];
        }
        EXPECT_EQ(sum, sums[s][0].get<double>()) << name << " " << dtype << " step " << s;
        EXPECT_EQ(weighted, sums[s][1].get<double>()) << name << " " << dtype << " step " << s;
      }
    }
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(HfReducedPrecision, ReducedPrecisionGenerateTest,
                         ::testing::Values("gemma3", "starcoder2", "llama4", "cohere2", "exaone4",
                                           "olmo3", "deepseek_v2"));

// transformers' _get_dtype for dtype="auto": the config's dtype, else the first floating tensor's.
TEST(HfReducedPrecision, AutoDtypeIsTheConfigsElseTheCheckpoints) {
  auto model = Transformer::load(arch_dir() / "granite", {});
  EXPECT_EQ(model->dtype_name(), "torch.float16");
  const fs::path dir = fs::temp_directory_path() / "lmeval_auto_dtype_granite";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(arch_dir() / "granite" / "model.safetensors", dir / "model.safetensors");
  json cfg = json::parse(lmeval::testing::read_file(arch_dir() / "granite" / "config.json"));
  cfg.erase("dtype");
  cfg.erase("torch_dtype");
  std::ofstream(dir / "config.json") << cfg.dump();
  EXPECT_EQ(Transformer::load(dir, {})->dtype_name(), "torch.float16");
  cfg["dtype"] = "bfloat16";
  std::ofstream(dir / "config.json", std::ios::trunc) << cfg.dump();
  EXPECT_EQ(Transformer::load(dir, {})->dtype_name(), "torch.bfloat16");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lmeval::hf
