// LMEVAL_HF_DUMP (debug_dump.hpp): a forward call's intermediates land in one safetensors file
// under the canonical names scripts/dump_half_hidden_states.py compares with transformers'.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "dump_reader.hpp"
#include "models/hf/debug_dump.hpp"
#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;

TEST(HfDebugDump, AForwardCallsIntermediatesGoToOneSafetensorsFile) {
  const fs::path dir = fs::temp_directory_path() / "lmeval_hf_dump_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  debug::dump_to(dir.string());  // as LMEVAL_HF_DUMP=dir does
  const fs::path model_dir =
      lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / "granite";
  LoadOptions opt;
  opt.dtype = "bfloat16";
  auto model = Transformer::load(model_dir, opt);
  const std::vector<Token> ids = {1, 5, 9, 13, 2};
  const int64_t T = static_cast<int64_t>(ids.size()), V = model->config().vocab_size;
  const std::vector<float> lp = model->full_logprobs({ids}, {}, {});
  model->full_logprobs({ids}, {}, {});  // the next call writes the first one's file
  const testing::DumpFile file(dir / "forward_0000.safetensors");
  for (const char* name : {"ids", "embed", "L0.norm0_in", "L0.norm0", "L0.qkv", "L0.q_rope",
                           "L0.k_rope", "L0.attn", "L0.attn_out", "L0.gate_up", "L0.mlp_act",
                           "L0.mlp_out", "L0.out", "L1.out", "final_norm", "logits"})
    EXPECT_TRUE(file.has(name)) << name;
  const testing::DumpedTensor id_t = file.tensor("ids");
  EXPECT_EQ(id_t.dtype, "I64");
  EXPECT_EQ(id_t.shape, (std::vector<int64_t>{1, T}));
  ASSERT_EQ(id_t.bytes.size(), static_cast<size_t>(8 * T));
  for (int64_t t = 0; t < T; ++t) {
    int64_t id = 0;
    std::memcpy(&id, id_t.bytes.data() + 8 * t, 8);
    EXPECT_EQ(id, ids[t]);
  }
  // The dumped logits are those the log-probs came from: log_softmax of them gives them back.
  const testing::DumpedTensor lg = file.tensor("logits");
  ASSERT_EQ(lg.shape, (std::vector<int64_t>{T, V}));
  std::vector<float> logits(static_cast<size_t>(T * V));
  std::memcpy(logits.data(), lg.bytes.data(), logits.size() * sizeof(float));
  for (int64_t t = 0; t < T; ++t) {
    double m = -INFINITY, s = 0;
    for (int64_t v = 0; v < V; ++v) m = std::max<double>(m, logits[t * V + v]);
    for (int64_t v = 0; v < V; ++v) s += std::exp(logits[t * V + v] - m);
    for (int64_t v = 0; v < V; v += 37)
      EXPECT_NEAR(logits[t * V + v] - m - std::log(s), lp[t * V + v], 1e-4) << t << " " << v;
  }
  debug::dump_to("");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lmeval::hf
