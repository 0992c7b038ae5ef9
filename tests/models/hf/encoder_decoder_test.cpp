// The encoder-decoder model (T5 v1.0 and v1.1 / Flan-T5 shapes) against transformers' own goldens
// (tests/fixtures/hf_arch/{t5,flan_t5}, scripts/gen_hf_seq2seq_fixtures.py), and config.json's
// T5 fields and errors.
#include "models/hf/encoder_decoder.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path fixture(const std::string& name) {
  return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch" / name;
}

// The goldens are transformers' float32 model of the float16 checkpoints (dtype=auto would load
// them in float16: half_seq2seq_test.cpp).
LoadOptions float32() {
  LoadOptions o;
  o.dtype = "float32";
  return o;
}

json read_json(const fs::path& p) { return json::parse(lmeval::testing::read_file(p)); }

class Seq2SeqFixtureTest : public ::testing::TestWithParam<std::string> {};

// Label log-probs given the encoder input (full rows and the scoring path), argmaxes, the
// right-padded batch HFLM scores, and greedy generations alone and left-padded together.
TEST_P(Seq2SeqFixtureTest, MatchesTransformers) {
  const std::string name = GetParam();
  const json golden = read_json(fixture(name) / "golden.json");
  auto model = EncoderDecoder::load(fixture(name), float32());
  const int64_t V = model->config().vocab_size;
  EXPECT_EQ(model->config().scale_decoder_outputs,
            golden["meta"]["scale_decoder_outputs"].get<bool>());
  double max_diff = 0;
  std::vector<Seq2SeqRow> rows;
  for (const auto& in : golden["inputs"]) {
    const auto enc = in["encoder_ids"].get<std::vector<Token>>();
    const auto labels = in["labels"].get<std::vector<Token>>();
    const auto dec = in["decoder_input_ids"].get<std::vector<Token>>();
    const auto T = static_cast<int64_t>(labels.size());
    std::vector<float> lp =
        model->full_logprobs({enc}, {std::vector<int64_t>(enc.size(), 1)}, {dec});
    ASSERT_EQ(static_cast<int64_t>(lp.size()), T * V);
    const auto want = in["label_logprobs"].get<std::vector<double>>();
    const auto argmax = in["argmax"].get<std::vector<int64_t>>();
    for (int64_t i = 0; i < T; ++i) {
      max_diff = std::max(max_diff, std::abs(lp[i * V + labels[i]] - want[i]));
      auto row = lp.begin() + i * V;
      EXPECT_EQ(std::max_element(row, row + V) - row, argmax[i]) << name << " position " << i;
    }
    const auto last = in["last_row_logprobs"].get<std::vector<double>>();
    for (int64_t v = 0; v < V; ++v)
      max_diff = std::max(max_diff, std::abs(lp[(T - 1) * V + v] - last[v]));
    auto one = model->score({{enc, labels}});
    EXPECT_NEAR(one[0].logprob, in["sum_logprob"].get<double>(), 1e-4 * T) << name;
    EXPECT_FALSE(one[0].is_greedy);  // random labels
    rows.push_back({enc, labels});
  }
  EXPECT_LT(max_diff, 1e-4) << name;

  // The three cases in one right-padded batch, as HFLM._loglikelihood_tokens feeds them.
  const json& bt = golden["batched"];
  const auto bids = bt["encoder_ids"].get<std::vector<std::vector<Token>>>();
  const auto mask = bt["attention_mask"].get<std::vector<std::vector<int64_t>>>();
  const auto blabels = bt["labels"].get<std::vector<std::vector<Token>>>();
  std::vector<std::vector<Token>> bdec;
  for (const auto& l : blabels) {
    std::vector<Token> d{0};
    d.insert(d.end(), l.begin(), l.end() - 1);
    bdec.push_back(d);
  }
  std::vector<float> blp = model->full_logprobs(bids, mask, bdec);
  const auto T = static_cast<int64_t>(blabels[0].size());
  const auto real = bt["label_logprobs_real"].get<std::vector<std::vector<double>>>();
  double bdiff = 0;
  for (size_t b = 0; b < real.size(); ++b)
    for (size_t i = 0; i < real[b].size(); ++i)
      bdiff = std::max(
          bdiff,
          std::abs(
              blp[(static_cast<int64_t>(b) * T + static_cast<int64_t>(i)) * V + blabels[b][i]] -
              real[b][i]));
  EXPECT_LT(bdiff, 1e-4) << name << " batched";
  auto batch = model->score(rows);
  for (size_t b = 0; b < rows.size(); ++b)
    EXPECT_NEAR(batch[b].logprob, golden["inputs"][b]["sum_logprob"].get<double>(),
                1e-4 * static_cast<double>(rows[b].targets.size()))
        << name << " batched score " << b;

  // Greedy generation: the cross-attention's keys once, the self-attention's cached.
  std::vector<std::vector<Token>> prompts;
  for (const auto& g : golden["generate"])
    prompts.push_back(g["prompt_ids"].get<std::vector<Token>>());
  SamplingOptions so;
  so.max_new_tokens = 20;
  so.eos_ids = {1};
  so.pad_id = 0;
  auto together = model->generate(prompts, so, {});
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(model->generate({prompts[i]}, so, {})[0],
              golden["generate"][i]["new_ids"].get<std::vector<Token>>())
        << name << " generation " << i;
    EXPECT_EQ(together[i], golden["generate"][i]["batched_new_ids"].get<std::vector<Token>>())
        << name << " batched generation " << i;
  }
}

// The choices of one question share one encoder pass; each scores as it does alone. bfloat16
// runs too (transformers computes in it; here within a loose bound of float32).
TEST(HfSeq2SeqScore, SharedContextsAndBfloat16) {
  const json golden = read_json(fixture("flan_t5") / "golden.json");
  auto model = EncoderDecoder::load(fixture("flan_t5"), float32());
  const auto enc = golden["inputs"][1]["encoder_ids"].get<std::vector<Token>>();
  const auto a = golden["inputs"][1]["labels"].get<std::vector<Token>>();
  const auto b = golden["inputs"][0]["labels"].get<std::vector<Token>>();
  const auto other = golden["inputs"][2]["encoder_ids"].get<std::vector<Token>>();
  auto together = model->score({{enc, a}, {other, b}, {enc, b}});
  EXPECT_NEAR(together[0].logprob, golden["inputs"][1]["sum_logprob"].get<double>(), 1e-3);
  EXPECT_NEAR(together[0].logprob, model->score({{enc, a}})[0].logprob, 1e-4);
  EXPECT_NEAR(together[1].logprob, model->score({{other, b}})[0].logprob, 1e-4);
  EXPECT_NEAR(together[2].logprob, model->score({{enc, b}})[0].logprob, 1e-4);
  EXPECT_GT(std::abs(together[1].logprob - together[2].logprob), 1e-3);  // contexts matter
  LoadOptions lo;
  lo.dtype = "bfloat16";
  auto bf = EncoderDecoder::load(fixture("flan_t5"), lo);
  EXPECT_EQ(bf->dtype_name(), "torch.bfloat16");
  auto s = bf->score({{enc, a}});
  EXPECT_TRUE(std::isfinite(s[0].logprob));
  EXPECT_NEAR(s[0].logprob, together[0].logprob, 0.05 * std::abs(together[0].logprob));
}

INSTANTIATE_TEST_SUITE_P(HfSeq2SeqFixtures, Seq2SeqFixtureTest, ::testing::Values("t5", "flan_t5"));

Json t5_config() {
  return Json{{"architectures", {"T5ForConditionalGeneration"}},
              {"model_type", "t5"},
              {"vocab_size", 128},
              {"decoder_start_token_id", 0}};
}

TEST(HfSeq2SeqConfig, T5FieldsAndDefaults) {
  EncoderDecoderConfig a = parse_encoder_decoder_config(t5_config(), "config.json");
  // T5Config's defaults: t5-small's shape, ReLU, scaled outputs.
  EXPECT_EQ(a.d_model, 512);
  EXPECT_EQ(a.d_kv, 64);
  EXPECT_EQ(a.num_heads, 8);
  EXPECT_EQ(a.encoder_layers, 6);
  EXPECT_EQ(a.decoder_layers, 6);
  EXPECT_EQ(a.relative_buckets, 32);
  EXPECT_EQ(a.relative_max_distance, 128);
  EXPECT_EQ(a.activation, Activation::kRelu);
  EXPECT_FALSE(a.gated_mlp);
  EXPECT_TRUE(a.scale_decoder_outputs);
  EXPECT_FALSE(a.max_position_embeddings.has_value());
  Json flan = t5_config();
  flan["feed_forward_proj"] = "gated-gelu";
  flan["tie_word_embeddings"] = false;
  flan["n_positions"] = 512;
  flan["num_decoder_layers"] = 3;
  a = parse_encoder_decoder_config(flan, "config.json");
  EXPECT_TRUE(a.gated_mlp);
  EXPECT_EQ(a.activation, Activation::kGeluNew);  // gated-gelu means gelu_new
  EXPECT_FALSE(a.scale_decoder_outputs);
  EXPECT_EQ(a.decoder_layers, 3);
  EXPECT_EQ(a.max_position_embeddings, std::optional<int64_t>(512));
  // transformers 5 saves the derived fields; they win over feed_forward_proj and the tie flag.
  flan["dense_act_fn"] = "gelu";
  flan["scale_decoder_outputs"] = true;
  a = parse_encoder_decoder_config(flan, "config.json");
  EXPECT_EQ(a.activation, Activation::kGeluExact);
  EXPECT_TRUE(a.scale_decoder_outputs);
}

void expect_config_error(const Json& j, const std::string& field, const std::string& what) {
  try {
    parse_encoder_decoder_config(j, "/m/config.json");
    FAIL() << "no error for " << field;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/m/config.json"), std::string::npos) << e.what();
  }
}

TEST(HfSeq2SeqConfig, BadFieldsNameFileAndField) {
  Json j = t5_config();
  j["feed_forward_proj"] = "fancy-gelu";
  expect_config_error(j, "$.feed_forward_proj", "not valid");
  j["feed_forward_proj"] = "gated-gelu-x";
  expect_config_error(j, "$.feed_forward_proj", "not valid");
  j["feed_forward_proj"] = "mish";
  expect_config_error(j, "$.feed_forward_proj", "not supported");
  j = t5_config();
  j.erase("decoder_start_token_id");
  expect_config_error(j, "$.decoder_start_token_id", "lacks");
  j = t5_config();
  j["d_model"] = 0;
  expect_config_error(j, "$.d_model", "is 0");
  // An encoder-decoder without a native implementation: named, with the list.
  j = t5_config();
  j["model_type"] = "bart";
  j["architectures"] = {"BartForConditionalGeneration"};
  expect_config_error(j, "$.model_type", "model_type 'bart' has no native encoder-decoder");
}

TEST(HfSeq2SeqConfig, Seq2SeqModelTypesAsTransformersMapsThem) {
  for (const char* t : {"t5", "mt5", "bart", "mbart", "pegasus", "umt5", "longt5"})
    EXPECT_TRUE(is_seq2seq_model_type(t)) << t;
  for (const char* t : {"llama", "gpt2", "t5x", ""}) EXPECT_FALSE(is_seq2seq_model_type(t)) << t;
}

TEST(HfSeq2SeqWeights, MissingOrMisshapenTensorNamed) {
  // The t5 fixture's config with one more layer than its weights hold.
  const fs::path dir = fs::temp_directory_path() / "lmeval_t5_bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fixture("t5") / "model.safetensors", dir / "model.safetensors");
  Json cfg = read_json(fixture("t5") / "config.json");
  cfg["num_layers"] = 3;
  std::ofstream(dir / "config.json") << cfg.dump();
  try {
    EncoderDecoder::load(dir, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.block.2.layer.0.layer_norm.weight"),
              std::string::npos)
        << e.what();
  }
  cfg = read_json(fixture("t5") / "config.json");
  cfg["d_ff"] = 100;
  std::ofstream(dir / "config.json") << cfg.dump();
  try {
    EncoderDecoder::load(dir, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("DenseReluDense.wi.weight' has shape"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lmeval::hf
