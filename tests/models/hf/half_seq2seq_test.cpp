// The encoder-decoder backend (T5) in float16 and bfloat16 on the CPU against transformers' own
// numbers for the same checkpoints (tests/fixtures/hf_arch/half_seq2seq.json,
// scripts/gen_half_seq2seq_goldens.py), and dtype=auto as transformers resolves it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "half_bits.hpp"
#include "models/hf/encoder_decoder.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) {
  return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / name;
}

// As HfReducedPrecision: the goldens' CPU capability and thread count, which torch's kernels
// follow.
const nlohmann::json& goldens() {
  static const nlohmann::json& g = [&]() -> const nlohmann::json& {
    const nlohmann::json& j = half_bits::golden("half_seq2seq.json");
    half_bits::follow_goldens_environment(j["meta"]);
    return j;
  }();
  return g;
}

class HalfSeq2SeqTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HalfSeq2SeqTest, LogprobsSumsAndGenerationsAreTransformers) {
  const std::string name = GetParam();
  for (const std::string dtype : {"float16", "bfloat16"}) {
    const nlohmann::json& per = goldens()["fixtures"][name][dtype];
    LoadOptions opt;
    opt.dtype = dtype;
    auto model = EncoderDecoder::load(fixture(name), opt);
    EXPECT_EQ(model->dtype_name(), "torch." + dtype);
    const int64_t V = model->config().vocab_size;
    for (const auto& in : per["inputs"]) {
      const auto enc = in["encoder_ids"].get<std::vector<Token>>();
      const auto labels = in["labels"].get<std::vector<Token>>();
      const auto dec = in["decoder_input_ids"].get<std::vector<Token>>();
      const std::vector<float> lp =
          model->full_logprobs({enc}, {std::vector<int64_t>(enc.size(), 1)}, {dec});
      const auto want = in["label_logprobs"].get<std::vector<double>>();
      double worst = 0;
      for (size_t i = 0; i < labels.size(); ++i)
        worst = std::max(worst, std::abs(lp[i * V + labels[i]] - want[i]));
      EXPECT_LE(worst, 1e-4) << name << " " << dtype;
      EXPECT_EQ(model->score({{enc, labels}})[0].logprob, in["hflm_sum_logprob"].get<double>())
          << name << " " << dtype;
    }
    for (const auto& g : per["generate"]) {
      SamplingOptions so;
      so.max_new_tokens = g["max_new_tokens"].get<int64_t>();
      const auto got = model->generate({g["prompt_ids"].get<std::vector<Token>>()}, so, nullptr);
      ASSERT_EQ(got.size(), 1U);
      EXPECT_EQ(got[0], g["new_ids"].get<std::vector<Token>>()) << name << " " << dtype;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HfHalfSeq2Seq, HalfSeq2SeqTest, ::testing::Values("t5", "flan_t5"));

// transformers' _get_dtype for dtype="auto": the config's torch_dtype (float16 here), on the CPU
// too.
TEST(HfHalfSeq2Seq, AutoDtypeIsTheConfigs) {
  EXPECT_EQ(EncoderDecoder::load(fixture("flan_t5"), {})->dtype_name(), "torch.float16");
}

}  // namespace
}  // namespace lmeval::hf
