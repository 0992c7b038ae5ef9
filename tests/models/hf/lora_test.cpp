// PEFT LoRA adapters merged at load against peft's own unmerged PeftModel (goldens of
// scripts/gen_ckpt_fixtures.py: targets by list and by regex, rsLoRA, rank/alpha patterns,
// layers_to_transform, exclude_modules, modules_to_save, embeddings, a .bin adapter, GPT-2's Conv1D
// layers with bias="all" and lora_bias; of scripts/gen_peft_fixtures.py: DoRA and IA3), and bad
// or mismatched adapters refused naming the file and the module.
#include "models/hf/lora.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "models/hf/ckpt_fixtures.hpp"
#include "support/scratch_dir.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ckpt_fixtures;

std::unique_ptr<Transformer> with_adapter(const std::string& base, const fs::path& adapter) {
  LoadOptions o = testing::f32();
  o.weights.peft = adapter;
  return Transformer::load(ckpt_fixtures() / base, o);
}

TEST(HfLora, EveryAdapterScoresAsPeft) {
  const json g = testing::ckpt_goldens()["adapters"];
  ASSERT_GE(g.size(), 7u);
  for (const auto& [name, golden] : g.items()) {
    SCOPED_TRACE(name);
    auto model = with_adapter(golden["base"], ckpt_fixtures() / name);
    const auto lp = testing::next_token_logprobs(*model, golden["inputs"]);
    // Merged in float32 where peft adds the low-rank product to each layer's output.
    EXPECT_LT(testing::max_diff(lp, golden["next_token_logprobs"]), 2e-5);
  }
}

// DoRA (linear layers, GPT-2's Conv1D layers, an embedding), IA3 (outputs and feedforward
// inputs scaled, a regex feedforward_modules, GPT-2's biases), LoHa (an alpha_pattern) and LoKr
// (factors whole and decomposed, a rank_pattern) merged at load against peft's own unmerged
// PeftModel (scripts/gen_peft_fixtures.py).
TEST(HfLora, DoraIa3LohaAndLokrAdaptersScoreAsPeft) {
  const json g = testing::peft_goldens()["adapters"];
  std::vector<std::string> merged, through_peft;
  for (const auto& [name, golden] : g.items()) {
    SCOPED_TRACE(name);
    if (adapter_reason(ckpt_fixtures() / name)) {
      through_peft.push_back(name);
      continue;
    }
    merged.push_back(name);
    auto model = with_adapter(golden["base"], ckpt_fixtures() / name);
    const auto lp = testing::next_token_logprobs(*model, golden["inputs"]);
    const double d = testing::max_diff(lp, golden["next_token_logprobs"]);
    std::cout << "[peft] " << name << ": max next-token log-prob difference " << d << "\n";
    EXPECT_LT(d, 2e-5);
  }
  EXPECT_EQ(merged, (std::vector<std::string>{"dora_gpt2", "dora_llama", "ia3_gpt2", "ia3_llama",
                                              "loha_llama", "lokr_llama"}));
  EXPECT_EQ(through_peft, (std::vector<std::string>{"adalora_llama"}));
}

// A copy of an adapter folder to change.
struct AdapterCopy {
  lmeval::testing::ScratchDir dir{"lmeval_lora"};
  explicit AdapterCopy(const std::string& from) {
    for (const auto& e : fs::directory_iterator(ckpt_fixtures() / from)) {
      fs::copy_file(e.path(), dir.path() / e.path().filename());
      fs::permissions(dir.path() / e.path().filename(),
                      fs::perms::owner_read | fs::perms::owner_write);
    }
  }
  json config() const {
    return json::parse(lmeval::testing::read_file(dir.path() / "adapter_config.json"));
  }
  void set(const std::string& key, const json& value) const {
    json c = config();
    c[key] = value;
    dir.write("adapter_config.json", c.dump());
  }
  // Replaces the weights with float32 tensors of the given shapes (values 0.01·index).
  void write_weights(const std::vector<std::pair<std::string, std::vector<int64_t>>>& tensors) {
    json header = json::object();
    std::string data;
    for (const auto& [name, shape] : tensors) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<float> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>(i % 7);
      header[name] = {
          {"dtype", "F32"}, {"shape", shape}, {"data_offsets", {data.size(), data.size() + 4 * n}}};
      data.append(reinterpret_cast<const char*>(v.data()), 4 * n);
    }
    const std::string h = header.dump();
    std::string out(8, '\0');
    const uint64_t len = h.size();
    std::memcpy(out.data(), &len, 8);
    dir.write("adapter_model.safetensors", out + h + data);
  }
  fs::path path() const { return dir.path(); }
};

struct Refusal {
  std::string message, file, field;
};

Refusal refusal(const std::string& base, const fs::path& adapter) {
  try {
    with_adapter(base, adapter);
  } catch (const UserError& e) {
    return {e.what(), e.where().file, e.where().field};
  }
  ADD_FAILURE() << "no error";
  return {};
}

#define EXPECT_REFUSED(base, adapter, phrase, file_name)                                  \
  do {                                                                                    \
    const Refusal r_ = refusal(base, adapter);                                            \
    EXPECT_NE(r_.message.find(phrase), std::string::npos) << r_.message;                  \
    EXPECT_EQ(fs::path(r_.file).filename(), file_name) << r_.message << " | " << r_.file; \
  } while (0)

TEST(HfLora, AdaptersOfAnotherModelAreRefusedNamingTheModule) {
  // Trained on a wider Llama: the factors do not fit.
  const Refusal wide = refusal("llama", ckpt_fixtures() / "lora_other_base");
  EXPECT_NE(wide.message.find("module model.layers.0.self_attn.q_proj: lora factors [2, 24]"),
            std::string::npos)
      << wide.message;
  EXPECT_NE(wide.message.find("do not fit its weight [16, 16]"), std::string::npos);
  EXPECT_EQ(fs::path(wide.file).filename(), "adapter_model.safetensors");
  EXPECT_NE(wide.field.find("model.layers.0.self_attn.q_proj"), std::string::npos);
  // Layer 5 of a 2-layer model.
  EXPECT_REFUSED("llama", ckpt_fixtures() / "lora_missing_module",
                 "module model.layers.5.self_attn.q_proj is not in the base model",
                 "adapter_model.safetensors");
  // A Llama adapter on GPT-2: no target module exists there.
  EXPECT_REFUSED("gpt2", ckpt_fixtures() / "lora_plain", "match no module of the base model",
                 "adapter_config.json");
}

TEST(HfLora, BadAdapterConfigsAreRefusedNamingTheField) {
  const std::vector<std::tuple<std::string, json, std::string>> cases = {
      // What adapter_reason sends through transformers, should it reach the native loader.
      {"peft_type", "PREFIX_TUNING", "the adapter has peft_type PREFIX_TUNING"},
      {"use_qalora", true, "the adapter has use_qalora set"},
      {"peft_type", 3, "peft_type is 3"},
      {"use_dora", "yes", "use_dora is \"yes\""},
      {"r", 8, "rank 4 and 4 where adapter_config.json gives r=8"},
      {"r", 0, "r is 0"},
      {"lora_alpha", "x", "lora_alpha is \"x\""},
      {"bias", "some", "bias is \"some\""},
      {"target_modules", json::array({"nonexistent"}), "match no module of the base model"},
      {"target_modules", "([", "is not a regular expression"},
      {"target_modules", 5, "target_modules is 5"},
      {"layers_to_transform", "x", "layers_to_transform is \"x\""},
      {"rank_pattern", json{{"q_proj", "big"}}, "rank_pattern is"},
      {"layer_replication", json::array({json::array({0, 1})}), "layer_replication set"},
      {"target_parameters", json::array({"mlp.experts"}), "target_parameters set"},
  };
  for (const auto& [key, value, phrase] : cases) {
    SCOPED_TRACE(key + "=" + value.dump());
    AdapterCopy a("lora_plain");
    a.set(key, value);
    const Refusal r = refusal("llama", a.path());
    EXPECT_NE(r.message.find(phrase), std::string::npos) << r.message;
    if (key != "r" || value != 8) {
      EXPECT_EQ(fs::path(r.file).filename(), "adapter_config.json") << r.message;
      EXPECT_EQ(r.field, "$." + key);
    }
  }
  AdapterCopy c("lora_plain");
  c.dir.write("adapter_config.json", "[1, 2]");
  EXPECT_REFUSED("llama", c.path(), "adapter_config.json is not an object", "adapter_config.json");
  c.dir.write("adapter_config.json", "{");
  EXPECT_REFUSED("llama", c.path(), "invalid JSON", "adapter_config.json");
}

TEST(HfLora, MissingFilesAreRefused) {
  lmeval::testing::ScratchDir empty("lmeval_lora_empty");
  EXPECT_REFUSED("llama", empty.path() / "nope", "does not exist", "nope");
  const Refusal none = refusal("llama", empty.path());
  EXPECT_NE(none.message.find("has no adapter_config.json"), std::string::npos) << none.message;
  AdapterCopy a("lora_plain");
  fs::remove(a.path() / "adapter_model.safetensors");
  const Refusal w = refusal("llama", a.path());
  EXPECT_NE(w.message.find("no adapter_model.safetensors or adapter_model.bin"), std::string::npos)
      << w.message;
  a.dir.write("adapter_model.safetensors", "garbage");
  EXPECT_REFUSED("llama", a.path(), "corrupt safetensors file", "adapter_model.safetensors");
}

TEST(HfLora, TensorsPeftWouldNotLoadOrLmEvalCannotMergeAreRefused) {
  const std::string p = "base_model.model.";
  const std::string v = "model.layers.0.self_attn.v_proj";
  {
    // DoRA: one magnitude per output row, and one for every module (peft would start a missing
    // one from the norm of its factors before loading them).
    AdapterCopy a("lora_plain");
    a.set("use_dora", true);
    a.write_weights({{p + v + ".lora_A.weight", {4, 16}},
                     {p + v + ".lora_B.weight", {8, 4}},
                     {p + v + ".lora_magnitude_vector", {16}}});
    EXPECT_REFUSED("llama", a.path(), "lora_magnitude_vector [16] does not fit its weight [8, 16]",
                   "adapter_model.safetensors");
    a.write_weights({{p + v + ".lora_A.weight", {4, 16}}, {p + v + ".lora_B.weight", {8, 4}}});
    EXPECT_REFUSED("llama", a.path(), "module " + v + " lacks its lora_magnitude_vector",
                   "adapter_model.safetensors");
    // Without use_dora peft builds no DoRA layer and leaves the file's magnitudes unused.
    a.set("use_dora", false);
    a.write_weights({{p + v + ".lora_A.weight", {4, 16}},
                     {p + v + ".lora_B.weight", {8, 4}},
                     {p + v + ".lora_magnitude_vector", {8}}});
    EXPECT_NO_THROW(with_adapter("llama", a.path()));
  }
  {
    // IA3: [out, 1] for an output, [1, in] for a feedforward layer's input.
    const std::string k = "model.layers.0.self_attn.k_proj", d = "model.layers.0.mlp.down_proj";
    AdapterCopy a("ia3_llama");
    a.write_weights({{p + k + ".ia3_l", {1, 16}}});
    EXPECT_REFUSED("llama", a.path(),
                   "module " + k + ": ia3_l [1, 16] does not fit its weight [8, 16]",
                   "adapter_model.safetensors");
    a.write_weights({{p + d + ".ia3_l", {16, 1}}});
    EXPECT_REFUSED("llama", a.path(), "a feedforward layer: one factor per input",
                   "adapter_model.safetensors");
    a.write_weights({{p + k + ".lora_A.weight", {4, 16}}, {p + k + ".lora_B.weight", {8, 4}}});
    EXPECT_REFUSED("llama", a.path(),
                   "has LoRA tensors in an adapter whose adapter_config.json gives peft_type IA3",
                   "adapter_model.safetensors");
    a.write_weights({{p + "model.layers.5.self_attn.k_proj.ia3_l", {8, 1}}});
    EXPECT_REFUSED("llama", a.path(), "model.layers.5.self_attn.k_proj is not in the base model",
                   "adapter_model.safetensors");
    AdapterCopy l("lora_plain");
    l.write_weights({{p + v + ".ia3_l", {8, 1}}});
    EXPECT_REFUSED("llama", l.path(), "has an IA3 vector (ia3_l)", "adapter_model.safetensors");
    l.write_weights({{p + v + ".ia3_x", {8, 1}}});
    EXPECT_REFUSED("llama", l.path(), "is of no LoRA, IA3, LoHa or LoKr layer",
                   "adapter_model.safetensors");
    l.write_weights({{p + v + ".hada_w1_a", {8, 4}}});
    EXPECT_REFUSED("llama", l.path(), "has LoHa tensors (hada_*) in an adapter whose",
                   "adapter_model.safetensors");
  }
  {
    // LoHa: (w1_a·w1_b) ⊙ (w2_a·w2_b) of the weight's shape, rank r (2 here; v_proj is [8, 16]).
    AdapterCopy a("loha_llama");
    a.write_weights({{p + v + ".hada_w1_a", {8, 2}},
                     {p + v + ".hada_w1_b", {2, 16}},
                     {p + v + ".hada_w2_a", {8, 2}}});
    EXPECT_REFUSED("llama", a.path(), "module " + v + " lacks its hada_w2_a and hada_w2_b",
                   "adapter_model.safetensors");
    a.write_weights({{p + v + ".hada_w1_a", {8, 3}},
                     {p + v + ".hada_w1_b", {3, 16}},
                     {p + v + ".hada_w2_a", {8, 3}},
                     {p + v + ".hada_w2_b", {3, 16}}});
    EXPECT_REFUSED("llama", a.path(), "where adapter_config.json gives r=2",
                   "adapter_model.safetensors");
    a.write_weights({{p + v + ".hada_w1_a", {16, 2}},
                     {p + v + ".hada_w1_b", {2, 16}},
                     {p + v + ".hada_w2_a", {16, 2}},
                     {p + v + ".hada_w2_b", {2, 16}}});
    EXPECT_REFUSED("llama", a.path(),
                   "LoHa products [16, 16] and [16, 16] do not fit its weight [8, 16]",
                   "adapter_model.safetensors");
    a.write_weights({{p + v + ".hada_t1", {2, 2}}});
    EXPECT_REFUSED("llama", a.path(), "a CP decomposition", "adapter_model.safetensors");
    // LoKr: kron(w1, w2) of the weight's shape.
    AdapterCopy k("lokr_llama");
    const std::string q = "model.layers.0.self_attn.q_proj";
    k.write_weights({{p + q + ".lokr_w1", {2, 4}}, {p + q + ".lokr_w2", {4, 4}}});
    EXPECT_REFUSED("llama", k.path(),
                   "the Kronecker product of [2, 4] and [4, 4] does not fit its weight [16, 16]",
                   "adapter_model.safetensors");
    k.write_weights({{p + q + ".lokr_w1", {4, 4}}});
    EXPECT_REFUSED("llama", k.path(), "lacks its lokr_w2 (or lokr_w2_a and lokr_w2_b)",
                   "adapter_model.safetensors");
    // GPT-2's Conv1D layers are no nn.Linear to peft's LoHa.
    AdapterCopy g("loha_llama");
    g.set("target_modules", json::array({"c_attn"}));
    const std::string c = "transformer.h.0.attn.c_attn";
    g.write_weights({{p + c + ".hada_w1_a", {48, 2}},
                     {p + c + ".hada_w1_b", {2, 16}},
                     {p + c + ".hada_w2_a", {48, 2}},
                     {p + c + ".hada_w2_b", {2, 16}}});
    EXPECT_REFUSED("gpt2", g.path(), "is not a linear layer lm-eval merges LOHA into",
                   "adapter_model.safetensors");
  }
  {
    AdapterCopy a("lora_plain");
    a.write_weights({{"model.layers.0.self_attn.v_proj.lora_A.weight", {4, 16}}});
    EXPECT_REFUSED("llama", a.path(), "is not named base_model.model.",
                   "adapter_model.safetensors");
  }
  {
    AdapterCopy a("lora_plain");
    a.write_weights({{p + v + ".lora_A.weight", {4, 16}}});
    EXPECT_REFUSED("llama", a.path(), "module " + v + " lacks its lora_B tensor",
                   "adapter_model.safetensors");
  }
  {
    // lora_bias on a layer without a bias (Llama's v_proj): peft adds it to the output; the
    // weights lm-eval merges into have no place for it.
    AdapterCopy a("lora_plain");
    a.write_weights({{p + v + ".lora_A.weight", {4, 16}},
                     {p + v + ".lora_B.weight", {8, 4}},
                     {p + v + ".lora_B.bias", {8}}});
    EXPECT_REFUSED("llama", a.path(), "has a lora_B bias but the base model's layer has no bias",
                   "adapter_model.safetensors");
  }
  {
    AdapterCopy a("lora_plain");
    a.write_weights({{p + "model.norm.weight", {17}}});
    EXPECT_REFUSED("llama", a.path(),
                   "model.norm.weight has shape [17] but the base model's has [16]",
                   "adapter_model.safetensors");
  }
  {
    // GPT-2 ties lm_head to wte: neither an embedding LoRA nor a modules_to_save copy of lm_head
    // can be merged into the one shared tensor.
    AdapterCopy a("gpt2_lora");
    a.set("target_modules", json::array({"wte"}));
    a.write_weights({{p + "transformer.wte.lora_embedding_A", {2, 512}},
                     {p + "transformer.wte.lora_embedding_B", {16, 2}}});
    EXPECT_REFUSED("gpt2", a.path(), "shares its weights with the output layer",
                   "adapter_model.safetensors");
    a.set("modules_to_save", json::array({"lm_head"}));
    a.write_weights({{p + "lm_head.weight", {512, 16}}});
    EXPECT_REFUSED("gpt2", a.path(), "ties to its input embeddings", "adapter_model.safetensors");
  }
}

TEST(HfLora, ModulesToSaveUnderTheWrappersName) {
  // lm_head.modules_to_save.<adapter>.weight, as the wrapper's own state dict names the copy.
  AdapterCopy a("lora_mts");
  testing::rename_safetensors(
      ckpt_fixtures() / "lora_mts" / "adapter_model.safetensors",
      a.path() / "adapter_model.safetensors", [](const std::string& n) {
        return n == "base_model.model.lm_head.weight"
                   ? std::string("base_model.model.lm_head.modules_to_save.default.weight")
                   : n;
      });
  const json g = testing::ckpt_goldens()["adapters"]["lora_mts"];
  auto model = with_adapter("llama", a.path());
  EXPECT_LT(testing::max_diff(testing::next_token_logprobs(*model, g["inputs"]),
                              g["next_token_logprobs"]),
            2e-5);
}

TEST(HfLora, LayersTheConfigDoesNotTargetAreSkippedAsPeftSkipsThem) {
  // The file holds q_proj and v_proj factors; a config targeting k_proj makes peft build LoRA
  // layers for k_proj only (B = 0 without weights) and ignore the file's: the base's numbers.
  AdapterCopy a("lora_plain");
  a.set("target_modules", json::array({"k_proj"}));
  const json in = testing::ckpt_goldens()["formats"]["llama"];
  auto adapted = with_adapter("llama", a.path());
  auto base = Transformer::load(ckpt_fixtures() / "llama", testing::f32());
  EXPECT_EQ(testing::next_token_logprobs(*adapted, in["inputs"]),
            testing::next_token_logprobs(*base, in["inputs"]));
}

}  // namespace
}  // namespace lmeval::hf
