// GGUF files (gguf_file=): the reader's checks, dequantisation against gguf.quants.dequantize,
// the config transformers builds from the metadata, and log-probs against transformers' own
// loading of the same files (tests/fixtures/gguf, scripts/gen_gguf_fixtures.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "lmeval/core/error.hpp"
#include "models/hf/gguf_file.hpp"
#include "models/hf/gguf_model.hpp"
#include "models/hf/gguf_test_support.hpp"
#include "models/hf/hf_lm.hpp"
#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

TEST(GgufDequant, EveryTypeMatchesGgufQuantsBitForBit) {
  const json golden = read_json(fixtures() / "dequant.json");
  std::set<std::string> done, refused;
  for (const auto& [name, g] : golden.items()) {
    const GgmlType* t = ggml_type(g["type"].get<uint32_t>());
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(std::string(t->name), name);
    if (!t->dequantizable) {
      refused.insert(name);
      continue;
    }
    const std::string blocks = unhex(g["blocks_hex"].get<std::string>());
    const std::string want = unhex(g["float32_hex"].get<std::string>());
    const int64_t n = g["elements"].get<int64_t>();
    ASSERT_EQ(static_cast<size_t>(n / t->block) * t->block_bytes, blocks.size()) << name;
    std::vector<float> got(static_cast<size_t>(n));
    dequantize(*t, reinterpret_cast<const std::byte*>(blocks.data()), got.data(), n);
    std::vector<float> ref(static_cast<size_t>(n));
    std::memcpy(ref.data(), want.data(), want.size());
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i)
      if (std::memcmp(&got[i], &ref[i], 4) != 0) {
        ++bad;
        ADD_FAILURE() << name << " element " << i << ": " << got[i] << " vs " << ref[i];
      }
    done.insert(name);
  }
  EXPECT_EQ(done, (std::set<std::string>{"F32",   "F16",     "BF16",   "Q4_0",  "Q4_1",    "Q5_0",
                                         "Q5_1",  "Q8_0",    "Q2_K",   "Q3_K",  "Q4_K",    "Q5_K",
                                         "Q6_K",  "IQ4_NL",  "IQ4_XS", "TQ1_0", "TQ2_0",   "MXFP4",
                                         "NVFP4", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S",
                                         "IQ1_S", "IQ1_M"}));
  EXPECT_EQ(refused, std::set<std::string>{});
}

TEST(GgufFile, ReadsTheFixturesMetadataAndTensors) {
  GgufFile f(fixtures() / "llama_q4_0.gguf");
  EXPECT_EQ(f.version(), 3u);
  ASSERT_NE(f.find("general.architecture"), nullptr);
  EXPECT_EQ(f.find("general.architecture")->s, "llama");
  EXPECT_EQ(f.find("llama.block_count")->u, 2u);
  const GgufTensorInfo* q = f.tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->ne, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(std::string(q->type->name), "Q4_0");
  EXPECT_EQ(q->nbytes, 64u * 64 / 32 * 18);
  EXPECT_EQ(std::string(f.tensor("blk.0.attn_norm.weight")->type->name), "F32");
}

// Every prefix of a real file and random byte flips of its header: a UserError or a file read,
// never a read past the end.
TEST(GgufFile, TruncatedAndCorruptedFilesAreUserErrors) {
  const std::string bytes = lmeval::testing::read_file(fixtures() / "llama_q4_0.gguf");
  for (size_t n = 0; n < bytes.size(); n += (n < 4096 ? 11 : 4099)) {
    const fs::path p = temp_file("trunc.gguf", bytes.substr(0, n));
    const std::string msg = expect_user_error([&] { GgufFile f(p); });
    EXPECT_NE(msg.find(p.string()), std::string::npos) << n;
  }
  std::mt19937 rng(29);
  for (int k = 0; k < 100; ++k) {
    std::string b = bytes;
    for (int j = 0; j < 4; ++j) b[rng() % 2048] = static_cast<char>(rng());
    const fs::path p = temp_file("flip.gguf", b);
    try {
      // Whatever parses is read to its last byte (a bad bound would fault here).
      GgufFile f(p);
      for (const auto& t : f.tensors())
        if (t.type->dequantizable) {
          std::vector<float> out(static_cast<size_t>(t.numel()));
          dequantize(*t.type, t.data, out.data(), t.numel());
        }
    } catch (const UserError&) {
    }
  }
}

TEST(GgufFile, EachMalformationIsNamed) {
  auto msg = [](const std::string& name, const std::string& bytes) {
    const fs::path p = temp_file(name, bytes);
    return expect_user_error([&] { GgufFile f(p); });
  };
  EXPECT_NE(msg("magic", "GGML0000").find("magic bytes"), std::string::npos);
  MiniGguf v1 = MiniGguf::llama();
  v1.version = 1;
  EXPECT_NE(msg("v1", v1.bytes()).find("GGUF v1"), std::string::npos);
  MiniGguf be = MiniGguf::llama();
  be.version = 0x03000000u;
  EXPECT_NE(msg("be", be.bytes()).find("big-endian"), std::string::npos);
  std::string many = MiniGguf::llama().bytes();
  const uint64_t huge = 1ULL << 60;
  std::memcpy(&many[16], &huge, 8);
  EXPECT_NE(msg("count", many).find("metadata entries"), std::string::npos);
  MiniGguf bad_type = MiniGguf::llama();
  MiniGguf::str(bad_type.kv, "x");
  MiniGguf::put<uint32_t>(bad_type.kv, 99);
  ++bad_type.n_kv;
  EXPECT_NE(msg("type", bad_type.bytes()).find("unknown type 99"), std::string::npos);
  MiniGguf dup = MiniGguf::llama();
  dup.u32("llama.block_count", 2);
  EXPECT_NE(msg("dup", dup.bytes()).find("appears twice"), std::string::npos);
  MiniGguf rows = MiniGguf::llama();
  rows.tensor("t.weight", {20, 2}, 2, std::string(36, '\0'));  // Q4_0 rows of 20
  EXPECT_NE(msg("rows", rows.bytes()).find("not a multiple of its block of 32"), std::string::npos);
  MiniGguf past = MiniGguf::llama();
  past.tensor("t.weight", {32, 4}, 0, std::string(64, '\0'));  // 512 bytes needed
  EXPECT_NE(msg("past", past.bytes()).find("goes past the end"), std::string::npos);
  MiniGguf unknown = MiniGguf::llama();
  unknown.tensor("t.weight", {32}, 77, std::string(32, '\0'));
  EXPECT_NE(msg("ggml", unknown.bytes()).find("unknown ggml type 77"), std::string::npos);
  MiniGguf dims = MiniGguf::llama();
  dims.tensor("t.weight", {1, 1, 1, 1, 1}, 0, std::string(4, '\0'));
  EXPECT_NE(msg("dims", dims.bytes()).find("5 dimensions"), std::string::npos);
}

TEST(GgufConfig, AsTransformersBuildsIt) {
  const json golden = read_json(fixtures() / "golden.json");
  for (const auto& [name, g] : golden["models"].items()) {
    const Json c = gguf_config_json(GgufFile(fixtures() / (name + ".gguf")));
    const json& want = g["config"];
    EXPECT_EQ(c["model_type"], want["model_type"]) << name;
    for (const char* k :
         {"num_key_value_heads", "max_position_embeddings", "vocab_size", "bos_token_id",
          "eos_token_id", "tie_word_embeddings", "n_positions", "n_inner", "n_head", "n_layer",
          "multi_query", "new_decoder_architecture", "parallel_attn", "bias", "num_experts",
          "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
          "norm_topk_prob"})
      if (want.contains(k)) EXPECT_EQ(c.at(k).dump(), want[k].dump()) << name << " " << k;
    int epsilons = 0;
    for (const char* eps : {"rms_norm_eps", "layer_norm_eps", "norm_epsilon", "layer_norm_epsilon"})
      if (want.contains(eps)) {
        ++epsilons;
        EXPECT_EQ(c.at(eps).get<double>(), want[eps].get<double>()) << name;
      }
    EXPECT_EQ(epsilons, 1) << name;
    for (const char* k : {"use_qkv_bias", "use_parallel_residual"})
      if (want.contains(k)) EXPECT_EQ(c.at(k), want[k]) << name << " " << k;
    if (!want.contains("rope_parameters")) {
      EXPECT_FALSE(c.contains("rope_theta")) << name;
    } else if (!c.contains("rope_theta")) {
      EXPECT_EQ(json::parse(c["rope_parameters"].dump()), want["rope_parameters"]) << name;
      for (const char* k : {"query_pre_attn_scalar", "sliding_window"})
        if (want.contains(k)) EXPECT_EQ(c.at(k), want[k]) << name << " " << k;
    } else {
      EXPECT_EQ(c["rope_theta"].get<double>(), want["rope_parameters"]["rope_theta"].get<double>());
    }
    if (want.contains("head_dim")) EXPECT_EQ(c["head_dim"], want["head_dim"]) << name;
  }
  // Qwen3Config's head_dim stays 128, and an absent output.weight means tied embeddings.
  const fs::path q3 = temp_file("qwen3.gguf", MiniGguf::llama("qwen3").bytes());
  const Json c = gguf_config_json(GgufFile(q3));
  EXPECT_EQ(c["head_dim"], 128);
  EXPECT_EQ(c["architectures"][0], "Qwen3ForCausalLM");
  EXPECT_EQ(c["tie_word_embeddings"], true);
}

TEST(GgufConfig, UnsupportedArchitecturesAndMissingKeysAreNamed) {
  const fs::path oss = temp_file("gpt-oss.gguf", MiniGguf::llama("gpt-oss").bytes());
  std::string m = expect_user_error([&] { gguf_config_json(GgufFile(oss)); });
  EXPECT_NE(m.find("GGUF architecture 'gpt-oss' is not read natively"), std::string::npos) << m;
  EXPECT_NE(m.find("general.architecture"), std::string::npos) << m;
  EXPECT_NE(m.find(oss.string()), std::string::npos) << m;
  EXPECT_NE(m.find("--model gguf"), std::string::npos) << m;
  EXPECT_NE(m.find("natively from the Hugging Face checkpoint"), std::string::npos) << m;
  // Each architecture transformers' loader knows, with its own reason.
  for (const auto& [arch, why] :
       std::vector<std::pair<std::string, std::string>>{{"t5", "gated ReLU"},
                                                        {"t5encoder", "no language-model head"},
                                                        {"mistral", "no 'mistral' tensor map"},
                                                        {"deci", "no 'deci' model class"},
                                                        {"nemotron", "no native implementation"},
                                                        {"lfm2", "no native implementation"}}) {
    const fs::path p = temp_file(arch + ".gguf", MiniGguf::llama(arch).bytes());
    m = expect_user_error([&] { gguf_config_json(GgufFile(p)); });
    EXPECT_NE(m.find(p.string()), std::string::npos) << m;
    EXPECT_NE(m.find("'" + arch + "' is not read natively"), std::string::npos) << m;
    EXPECT_NE(m.find(why), std::string::npos) << m;
  }
  // Falcon-40B/180B: transformers reads a falcon file as Falcon-7B's one key-value head.
  MiniGguf falcon40 = MiniGguf::llama("falcon");
  falcon40.u32("falcon.attention.head_count_kv", 8);
  const fs::path f40 = temp_file("falcon40.gguf", falcon40.bytes());
  m = expect_user_error([&] { gguf_config_json(GgufFile(f40)); });
  EXPECT_NE(m.find("8 key-value heads"), std::string::npos) << m;
  EXPECT_NE(m.find("falcon.attention.head_count_kv"), std::string::npos) << m;
  EXPECT_NE(m.find(f40.string()), std::string::npos) << m;
  MiniGguf falcon7 = MiniGguf::llama("falcon");
  falcon7.u32("falcon.attention.head_count_kv", 1);
  EXPECT_EQ(gguf_config_json(GgufFile(temp_file("falcon7.gguf", falcon7.bytes())))["multi_query"],
            true);
  const fs::path rwkv = temp_file("rwkv.gguf", MiniGguf::llama("rwkv6").bytes());
  m = expect_user_error([&] { gguf_config_json(GgufFile(rwkv)); });
  EXPECT_EQ(m.find("transformers reads it"), std::string::npos) << m;
  EXPECT_NE(m.find("'rwkv6'"), std::string::npos) << m;
  MiniGguf named = MiniGguf::llama();
  named.text("general.name", "mistral");
  const fs::path mistral = temp_file("mistral.gguf", named.bytes());
  m = expect_user_error([&] { gguf_config_json(GgufFile(mistral)); });
  EXPECT_NE(m.find("general.name"), std::string::npos) << m;
  MiniGguf no_layers;
  no_layers.text("general.architecture", "llama").u32("llama.embedding_length", 32);
  const fs::path nl = temp_file("nolayers.gguf", no_layers.bytes());
  m = expect_user_error([&] { gguf_config_json(GgufFile(nl)); });
  EXPECT_NE(m.find("llama.block_count"), std::string::npos) << m;
}

// The expert sizes are the file's tensors' (where transformers keeps its config defaults), and a
// file without the experts or whose metadata disagrees with them is refused naming the tensor or
// the key.
TEST(GgufConfig, MoeExpertSizesComeFromTheTensors) {
  auto moe = [&](const std::string& arch, uint64_t size) {
    MiniGguf g = MiniGguf::llama(arch);
    g.tensor("blk.0.ffn_gate_exps.weight", {32, size, 3}, 0, std::string(32 * size * 3 * 4, '\0'));
    return g;
  };
  MiniGguf q3 = moe("qwen3moe", 64);
  q3.u32("qwen3moe.expert_count", 3);
  const Json c = gguf_config_json(GgufFile(temp_file("q3moe.gguf", q3.bytes())));
  EXPECT_EQ(c["architectures"][0], "Qwen3MoeForCausalLM");
  EXPECT_EQ(c["moe_intermediate_size"], 64);
  EXPECT_EQ(c["num_experts"], 3);
  EXPECT_EQ(c["norm_topk_prob"], true);
  MiniGguf q2 = moe("qwen2moe", 64);
  q2.tensor("blk.0.ffn_up_shexp.weight", {32, 96}, 0, std::string(32 * 96 * 4, '\0'));
  const Json c2 = gguf_config_json(GgufFile(temp_file("q2moe.gguf", q2.bytes())));
  EXPECT_EQ(c2["shared_expert_intermediate_size"], 96);
  EXPECT_EQ(c2["norm_topk_prob"], false);

  MiniGguf no_shared = moe("qwen2moe", 64);
  const fs::path ns = temp_file("q2moe_noshared.gguf", no_shared.bytes());
  std::string m = expect_user_error([&] { gguf_config_json(GgufFile(ns)); });
  EXPECT_NE(m.find("blk.0.ffn_up_shexp.weight' is missing"), std::string::npos) << m;
  EXPECT_NE(m.find(ns.string()), std::string::npos) << m;
  const fs::path dense = temp_file("q3moe_dense.gguf", MiniGguf::llama("qwen3moe").bytes());
  m = expect_user_error([&] { gguf_config_json(GgufFile(dense)); });
  EXPECT_NE(m.find("blk.0.ffn_gate_exps.weight' is missing"), std::string::npos) << m;
  MiniGguf flat = MiniGguf::llama("qwen3moe");
  flat.tensor("blk.0.ffn_gate_exps.weight", {32, 64}, 0, std::string(32 * 64 * 4, '\0'));
  m = expect_user_error(
      [&] { gguf_config_json(GgufFile(temp_file("q3flat.gguf", flat.bytes()))); });
  EXPECT_NE(m.find("has 2 dimensions where 3"), std::string::npos) << m;
  MiniGguf disagree = moe("qwen3moe", 64);
  disagree.u32("qwen3moe.expert_feed_forward_length", 768);
  m = expect_user_error(
      [&] { gguf_config_json(GgufFile(temp_file("q3dis.gguf", disagree.bytes()))); });
  EXPECT_NE(m.find("qwen3moe.expert_feed_forward_length' is 768 but tensor "
                   "'blk.0.ffn_gate_exps.weight' holds 64"),
            std::string::npos)
      << m;
}

// gate_exps and up_exps become one gate_up_proj, each expert's gate rows then its up rows
// (Qwen2MoeTensorProcessor); an up_exps of another shape is named.
TEST(GgufTensors, MoeGateAndUpAreFusedPerExpert) {
  GgufTensors q3(fixtures() / "qwen3moe_q8_0.gguf");
  const TensorView* gu = q3.find("model.layers.0.mlp.experts.gate_up_proj");
  ASSERT_NE(gu, nullptr);
  EXPECT_EQ(gu->shape, (std::vector<int64_t>{2, 2 * 768, 32}));
  EXPECT_NE(q3.find("model.layers.0.mlp.experts.down_proj"), nullptr);
  EXPECT_NE(q3.find("model.layers.0.mlp.gate.weight"), nullptr);
  GgufTensors q2(fixtures() / "qwen2moe_q4_0.gguf");
  const TensorView* sg = q2.find("model.layers.0.mlp.shared_expert_gate.weight");
  ASSERT_NE(sg, nullptr);
  EXPECT_EQ(sg->shape, (std::vector<int64_t>{1, 32}));
  // Expert 1's gate rows and expert 0's up rows from F32 tensors of known values.
  MiniGguf g = MiniGguf::llama("qwen3moe");
  auto f32s = [](int n, float base) {
    std::string b(static_cast<size_t>(n) * 4, '\0');
    for (int i = 0; i < n; ++i) {
      const float v = base + static_cast<float>(i);
      std::memcpy(&b[static_cast<size_t>(i) * 4], &v, 4);
    }
    return b;
  };
  g.tensor("blk.0.ffn_gate_exps.weight", {32, 2, 2}, 0, f32s(128, 0));
  g.tensor("blk.0.ffn_up_exps.weight", {32, 2, 2}, 0, f32s(128, 1000));
  GgufTensors t(temp_file("q3fuse.gguf", g.bytes()));
  const TensorView* f = t.find("model.layers.0.mlp.experts.gate_up_proj");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->shape, (std::vector<int64_t>{2, 4, 32}));
  const auto* v = reinterpret_cast<const float*>(f->data);
  EXPECT_EQ(v[0], 0.0f);              // expert 0, gate row 0
  EXPECT_EQ(v[2 * 32], 1000.0f);      // expert 0, up row 0
  EXPECT_EQ(v[4 * 32], 64.0f);        // expert 1, gate row 0
  EXPECT_EQ(v[6 * 32 + 1], 1065.0f);  // expert 1, up row 0, column 1
  MiniGguf bad = MiniGguf::llama("qwen3moe");
  bad.tensor("blk.0.ffn_gate_exps.weight", {32, 2, 2}, 0, f32s(128, 0));
  bad.tensor("blk.0.ffn_up_exps.weight", {32, 3, 2}, 0, f32s(192, 0));
  const fs::path bp = temp_file("q3badup.gguf", bad.bytes());
  GgufTensors bt(bp);
  const std::string m =
      expect_user_error([&] { bt.find("model.layers.0.mlp.experts.gate_up_proj"); });
  EXPECT_NE(m.find("blk.0.ffn_up_exps.weight"), std::string::npos) << m;
  EXPECT_NE(m.find(bp.string()), std::string::npos) << m;
}

TEST(GgufTensors, AnUnsupportedTypeIsRefusedNamingTheTensor) {
  MiniGguf g = MiniGguf::llama();
  g.tensor("token_embd.weight", {256, 4}, 15, std::string(4 * 292, '\0'));  // Q8_K
  const fs::path p = temp_file("iq2.gguf", g.bytes());
  GgufTensors t(p);
  const std::string m = expect_user_error([&] { t.find("model.embed_tokens.weight"); });
  EXPECT_NE(m.find("token_embd.weight"), std::string::npos) << m;
  EXPECT_NE(m.find("Q8_K"), std::string::npos) << m;
  EXPECT_EQ(t.find("no.such.tensor"), nullptr);
}

TEST(GgufTensors, FalconBiasesAreDroppedAndABadBloomQkvIsNamed) {
  // FalconConfig's bias=False: transformers has no parameter for a falcon file's linear biases.
  GgufTensors falcon(fixtures() / "falcon_q8_0.gguf");
  EXPECT_NE(falcon.find("transformer.h.0.self_attention.query_key_value.weight"), nullptr);
  EXPECT_EQ(falcon.find("transformer.h.0.self_attention.query_key_value.bias"), nullptr);
  EXPECT_NE(falcon.find("transformer.h.0.input_layernorm.bias"), nullptr);
  // BloomTensorProcessor needs 3 * hidden_size rows in attn_qkv.
  MiniGguf g = MiniGguf::llama("bloom");
  g.tensor("blk.0.attn_qkv.weight", {32, 95}, 0, std::string(32 * 95 * 4, '\0'));
  const fs::path p = temp_file("bloom_qkv.gguf", g.bytes());
  GgufTensors bloom(p);
  const std::string m = expect_user_error(
      [&] { bloom.find("transformer.h.0.self_attention.query_key_value.weight"); });
  EXPECT_NE(m.find("blk.0.attn_qkv.weight"), std::string::npos) << m;
  EXPECT_NE(m.find(p.string()), std::string::npos) << m;
  EXPECT_NE(m.find("3 * hidden_size rows"), std::string::npos) << m;
}

TEST(GgufModel, LogprobsMatchTransformersLoadingTheSameFile) {
  const json golden = read_json(fixtures() / "golden.json");
  for (const auto& [name, g] : golden["models"].items()) {
    LoadOptions o;
    o.weights.gguf = fixtures() / (name + ".gguf");
    auto model = Transformer::load(fixtures(), o);
    const int64_t V = model->config().vocab_size;
    double max_diff = 0;
    for (const auto& in : g["inputs"]) {
      const auto ids = in["input_ids"].get<std::vector<Token>>();
      const auto T = static_cast<int64_t>(ids.size());
      const std::vector<float> lp = model->full_logprobs({ids}, {}, {});
      ASSERT_EQ(static_cast<int64_t>(lp.size()), T * V);
      const auto next = in["next_token_logprobs"].get<std::vector<double>>();
      for (int64_t i = 0; i + 1 < T; ++i)
        max_diff = std::max(max_diff, std::abs(lp[i * V + ids[i + 1]] - next[i]));
      const auto last = in["last_row_logprobs"].get<std::vector<double>>();
      for (int64_t v = 0; v < V; ++v)
        max_diff = std::max(max_diff, std::abs(lp[(T - 1) * V + v] - last[v]));
      const auto argmax = in["argmax"].get<std::vector<int64_t>>();
      for (int64_t i = 0; i < T; ++i) {
        auto row = lp.begin() + i * V;
        EXPECT_EQ(std::max_element(row, row + V) - row, argmax[i]) << name << " position " << i;
      }
    }
    EXPECT_LT(max_diff, 1e-4) << name;
    std::printf("[gguf] %s: max |log-prob - transformers| = %.3g\n", name.c_str(), max_diff);
    // transformers' generate(do_sample=False, max_new_tokens=8, eos_token_id=None).
    SamplingOptions so;
    so.max_new_tokens = 8;
    const auto gen = model->generate({g["generation"]["prompt"].get<std::vector<Token>>()}, so, {});
    EXPECT_EQ(gen.at(0), g["generation"]["new_tokens"].get<std::vector<Token>>()) << name;
  }
}

TEST(GgufModel, HflmScoresRequestsAsTheReferencesHfGgufPath) {
  const json golden = read_json(fixtures() / "golden.json");
  for (const auto& [name, g] : golden["models"].items()) {
    if (g["requests"].empty()) continue;  // gemma3: a vocabulary smaller than the tokenizer's
    // The requests were encoded with the llama fixture's tokenizer (scripts/gen_gguf_fixtures.py).
    LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
    HFLM lm(parse_hf_args(
        Json{{"pretrained", fixtures().string()},
             {"gguf_file", name + ".gguf"},
             {"tokenizer", (lmeval::testing::shared_dir() / "fixtures" / "llama").string()},
             {"device", "cpu"}},
        {}));
    std::vector<LoglikelihoodRequest> reqs;
    for (const auto& r : g["requests"]) {
      reqs.push_back({r["context"].get<std::string>(), r["continuation"].get<std::string>()});
      auto [ctx, cont] = lm.encode_request(reqs.back());
      EXPECT_EQ(ctx, r["context_ids"].get<std::vector<Token>>()) << name;
      EXPECT_EQ(cont, r["continuation_ids"].get<std::vector<Token>>()) << name;
    }
    const auto res = lm.loglikelihood(reqs);
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_NEAR(res[i].loglikelihood, g["requests"][i]["logprob"].get<double>(), 1e-4) << name;
      EXPECT_EQ(res[i].is_greedy, g["requests"][i]["is_greedy"].get<bool>()) << name;
    }
    // HFLM.max_length: the config's n_positions / max_position_embeddings, else (BloomConfig has
    // neither, and the llama fixture's tokenizer a huge model_max_length) _DEFAULT_MAX_LENGTH.
    const json& c = g["config"];
    int64_t want_max = 2048;
    for (const char* k : {"n_positions", "max_position_embeddings"})
      if (c.contains(k)) want_max = c[k].get<int64_t>();
    EXPECT_EQ(lm.max_length(), want_max) << name;
  }
}

TEST(GgufModel, HflmRefusesWhatItCannotRun) {
  auto args = [](Json extra) {
    Json a = {{"pretrained", fixtures().string()},
              {"gguf_file", "llama_q4_0.gguf"},
              {"tokenizer", fixtures().string()},
              {"device", "cpu"}};
    for (auto& [k, v] : extra.items()) a[k] = v;
    return parse_hf_args(a, {});
  };
  std::string m = expect_user_error([&] { HFLM lm(args({{"gguf_file", "missing.gguf"}})); });
  EXPECT_NE(m.find("missing.gguf"), std::string::npos) << m;
  m = expect_user_error([&] { HFLM lm(args({{"pretrained", "org/repo"}})); });
  EXPECT_NE(m.find("local folder"), std::string::npos) << m;
  m = expect_user_error([&] { HFLM lm(args({{"delta", fixtures().string()}})); });
  EXPECT_NE(m.find("delta"), std::string::npos) << m;
  m = expect_user_error([&] { HFLM lm(args({{"backend", "seq2seq"}})); });
  EXPECT_NE(m.find("seq2seq"), std::string::npos) << m;
}

}  // namespace
}  // namespace lmeval::hf
