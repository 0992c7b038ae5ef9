// Faults in a model folder that the hf backend must refuse with a message naming the file, the
// field or tensor, and what was expected (UserError: exit 2), never a crash, an out-of-bounds read
// or a silent score: safetensors layouts the safetensors library rejects, config.json sizes out of
// range, a model_type transformers would not build, token ids past the vocabulary and positions
// past a learned position table.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "models/hf/hf_lm.hpp"
#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class CheckpointFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmeval_ckpt_faults_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Copies ../shared/fixtures/<name> (config, weights, tokenizer) into the scratch folder.
  void copy_fixture(const std::string& name) {
    const fs::path from = lmeval::testing::shared_dir() / "fixtures" / name;
    for (const char* f :
         {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}) {
      fs::copy_file(from / f, dir_ / f, fs::copy_options::overwrite_existing);
      fs::permissions(dir_ / f, fs::perms::owner_read | fs::perms::owner_write);
    }
  }
  json config() const { return json::parse(lmeval::testing::read_file(dir_ / "config.json")); }
  void write_config(const json& c) const {
    std::ofstream(dir_ / "config.json", std::ios::trunc) << c.dump();
  }
  // The safetensors file split into its JSON header and data section.
  std::pair<json, std::string> safetensors() const {
    const std::string b = lmeval::testing::read_file(dir_ / "model.safetensors");
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    return {json::parse(b.substr(8, n)), b.substr(8 + n)};
  }
  static json safetensors_at(const fs::path& p) {
    const std::string b = lmeval::testing::read_file(p);
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    return json::parse(b.substr(8, n));
  }
  static constexpr const char* kShard = "model-00001-of-00001.safetensors";
  // Renames the fixture's weights to one index-named shard; returns a weight_map naming every
  // tensor in it.
  json single_shard_weight_map() const {
    fs::rename(dir_ / "model.safetensors", dir_ / kShard);
    const json header = safetensors_at(dir_ / kShard);
    json map = json::object();
    for (const auto& [name, e] : header.items())
      if (name != "__metadata__") map[name] = kShard;
    return map;
  }
  void write_index(const json& weight_map) const {
    std::ofstream(dir_ / "model.safetensors.index.json", std::ios::trunc)
        << json{{"metadata", json::object()}, {"weight_map", weight_map}}.dump();
  }
  void write_safetensors(const json& header, const std::string& data) const {
    const std::string h = header.dump();
    const uint64_t n = h.size();
    std::string out(8, '\0');
    std::memcpy(out.data(), &n, 8);
    std::ofstream(dir_ / "model.safetensors", std::ios::binary | std::ios::trunc)
        << out << h << data;
  }
  // The UserError of loading the folder as "message | location | expected"; "" when it loads.
  std::string load_error() const {
    try {
      Transformer::load(dir_, {});
    } catch (const UserError& e) {
      return std::string(e.what()) + " | " + e.where().to_string() + " | " + e.expected();
    }
    return "";
  }
  // The UserError of `f` as above ("" when none), any other exception failing the test.
  template <typename F>
  static std::string error_of(F&& f) {
    try {
      f();
    } catch (const UserError& e) {
      return std::string(e.what()) + " | " + e.where().to_string() + " | " + e.expected();
    }
    return "";
  }

  fs::path dir_;
  static inline int counter_ = 0;
};

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST_F(CheckpointFaults, OverlappingGappedOrUncoveredDataIsRefusedAsSafetensorsDoes) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  const auto [header, data] = safetensors();
  // Two tensors of the same size: the second pointed at the first one's bytes.
  std::string first, second;
  for (const auto& [name, e] : header.items())
    if (name != "__metadata__" && e["shape"] == json::array({64}))
      (first.empty() ? first : second) = name;
  ASSERT_FALSE(second.empty());
  json overlap = header;
  overlap[second]["data_offsets"] = header[first]["data_offsets"];
  write_safetensors(overlap, data);
  std::string e = load_error();
  EXPECT_HAS(e, "model.safetensors");
  EXPECT_HAS(e, "overlap");
  // Trailing bytes after the last tensor: the safetensors library's "file not fully covered".
  write_safetensors(header, data + std::string(16, '\0'));
  e = load_error();
  EXPECT_HAS(e, "not covered by any tensor");
  EXPECT_HAS(e, "model.safetensors");
  // A shape whose element count overflows 64 bits is named as such, not as "needs 0 bytes".
  json huge = header;
  huge[first]["shape"] = {uint64_t{1} << 40, uint64_t{1} << 40};
  write_safetensors(huge, data);
  e = load_error();
  EXPECT_HAS(e, "$." + first);
  EXPECT_HAS(e, "overflow");
  write_safetensors(header, data);
  EXPECT_EQ(load_error(), "");
}

TEST_F(CheckpointFaults, AFolderWhereAFileBelongsIsNamed) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  fs::remove(dir_ / "model.safetensors");
  fs::create_directory(dir_ / "model.safetensors");
  std::string e = load_error();
  EXPECT_HAS(e, "model.safetensors");
  EXPECT_HAS(e, "is a folder");
  fs::remove(dir_ / "config.json");
  fs::create_directory(dir_ / "config.json");
  e = load_error();
  EXPECT_HAS(e, "config.json");
  EXPECT_HAS(e, "is a folder");
}

TEST_F(CheckpointFaults, ConfigSizesOutOfRangeNameTheField) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  const json good = config();
  struct Case {
    const char* field;
    json value;
  };
  // Each is refused before anything is allocated from it (2^40 layers was a std::bad_alloc).
  for (const Case& c :
       {Case{"num_hidden_layers", int64_t{1} << 40}, Case{"num_hidden_layers", 0},
        Case{"num_attention_heads", 0}, Case{"num_attention_heads", -8}, Case{"hidden_size", -64},
        Case{"intermediate_size", 0}, Case{"vocab_size", 0}, Case{"num_key_value_heads", -1},
        Case{"head_dim", -4}, Case{"max_position_embeddings", 0},
        Case{"max_position_embeddings", -1}}) {
    json cfg = good;
    cfg[c.field] = c.value;
    write_config(cfg);
    std::string e;
    EXPECT_NO_THROW(e = load_error()) << c.field << "=" << c.value.dump();
    EXPECT_HAS(e, std::string("$.") + c.field);
    EXPECT_HAS(e, "config.json");
  }
  // head_dim 0 falls back to hidden_size / num_attention_heads, as transformers' `or` does.
  json cfg = good;
  cfg["head_dim"] = 0;
  write_config(cfg);
  EXPECT_EQ(load_error(), "");
}

TEST_F(CheckpointFaults, ModelTypeOtherThanTheArchitecturesIsRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  json cfg = config();
  // transformers' AutoConfig raises for a model_type it does not know, and builds the model of
  // model_type (not of architectures) for one it knows.
  for (const char* type : {"nonsense", "gpt2"}) {
    cfg["model_type"] = type;
    write_config(cfg);
    std::string e = load_error();
    EXPECT_HAS(e, "$.model_type");
    EXPECT_HAS(e, "'llama'");
  }
  cfg.erase("model_type");
  write_config(cfg);
  EXPECT_EQ(load_error(), "");
}

TEST_F(CheckpointFaults, AnArchitectureWithNoNativeImplementationIsNamedWithTheWayToRunIt) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  json cfg = config();
  cfg["architectures"] = {"MambaForCausalLM"};
  cfg.erase("model_type");
  write_config(cfg);
  std::string e = load_error();
  EXPECT_HAS(e, "'MambaForCausalLM'");
  EXPECT_HAS(e, "$.architectures");
  EXPECT_HAS(e, "Olmo2ForCausalLM");              // the list of native architectures
  EXPECT_HAS(e, "runs it through transformers");  // the way to run it anyway
}

TEST_F(CheckpointFaults, TokenIdsPastTheVocabularyAreRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  auto m = Transformer::load(dir_, {});
  const Token V = static_cast<Token>(m->config().vocab_size);  // 512
  // An input id, a scored target, and a prompt id each past the embedding table: these read
  // outside the weights (a segfault, or a plausible score from other memory) without the check.
  for (const ScoreRow& row : {ScoreRow{{1, 5, V + 99999, 7}, {ScoreSpan{1, {5}}}},
                              ScoreRow{{1, 5, 6, 7}, {ScoreSpan{1, {V}}}},
                              ScoreRow{{1, -3, 6, 7}, {ScoreSpan{1, {5}}}}}) {
    std::string e = error_of([&] { m->score({row}); });
    EXPECT_HAS(e, "outside the model's vocabulary");
    EXPECT_HAS(e, "config.json");
    EXPECT_HAS(e, "$.vocab_size");
    e = error_of([&] { m->score_trees({ScoreTree{row.tokens, {ScoreRow{{}, row.spans}}}}); });
    EXPECT_HAS(e, "outside the model's vocabulary");
  }
  SamplingOptions opt;
  opt.max_new_tokens = 2;
  std::string e = error_of([&] { m->generate({{1, 5, V}}, opt, nullptr); });
  EXPECT_HAS(e, "outside the model's vocabulary");
  EXPECT_EQ(error_of([&] { m->score({ScoreRow{{1, 5, V - 1}, {ScoreSpan{1, {V - 1}}}}}); }), "");
}

TEST_F(CheckpointFaults, PositionsPastALearnedTableAreRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/gpt2/config.json");
  copy_fixture("gpt2");
  auto m = Transformer::load(dir_, {});
  ASSERT_EQ(m->config().learned_positions, 256);
  // max_length=2048 on a model with 256 positions: scoring read past the table (NaN scores) and
  // generation failed inside libtorch.
  std::vector<Token> long_row(300, 5);
  std::string e = error_of([&] { m->score({ScoreRow{long_row, {ScoreSpan{1, {5}}}}}); });
  EXPECT_HAS(e, "256");
  EXPECT_HAS(e, "$.n_positions");
  EXPECT_HAS(e, "max_length");
  SamplingOptions opt;
  opt.max_new_tokens = 20;
  e = error_of([&] { m->generate({std::vector<Token>(250, 5)}, opt, nullptr); });
  EXPECT_HAS(e, "$.n_positions");
  std::vector<Token> fits(256, 5);
  EXPECT_EQ(error_of([&] { m->score({ScoreRow{fits, {ScoreSpan{1, {5}}}}}); }), "");
  opt.max_new_tokens = 6;
  EXPECT_EQ(error_of([&] { m->generate({std::vector<Token>(250, 5)}, opt, nullptr); }), "");
}

TEST_F(CheckpointFaults, TensorsTheConfigHasNoPlaceForAreWarnedAbout) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  auto load_log = [&] {
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    Transformer::load(dir_, {});
    return ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
  };
  EXPECT_EQ(load_log().find("not used by"), std::string::npos);
  // config.json says 1 layer, the weights hold 2: transformers runs the one layer and warns.
  json cfg = config();
  cfg["num_hidden_layers"] = 1;
  write_config(cfg);
  const std::string log = load_log();
  EXPECT_HAS(log, "not used by LlamaForCausalLM");
  EXPECT_HAS(log, "model.layers.1.");
  EXPECT_HAS(log, "config.json");
}

TEST_F(CheckpointFaults, ShardNamesOutsideTheModelFolderAreRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  // One shard holding everything, named by an index; then names that leave the folder.
  const json map = single_shard_weight_map();
  write_index(map);
  EXPECT_EQ(load_error(), "");
  const std::string first = map.begin().key();
  for (const std::string bad : {std::string("../model-00001-of-00001.safetensors"),
                                (dir_ / "model-00001-of-00001.safetensors").string(),
                                std::string(""), std::string("sub/../../x.safetensors")}) {
    json m = map;
    m[first] = bad;
    write_index(m);
    const std::string e = load_error();
    EXPECT_HAS(e, "model.safetensors.index.json");
    EXPECT_HAS(e, "$.weight_map." + first);
    EXPECT_HAS(e, "a file inside");
  }
}

TEST_F(CheckpointFaults, NanScoresAreKeptButWarnedAbout) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  auto scores_and_log = [&] {
    HFLM lm(parse_hf_args(Json{{"pretrained", dir_.string()}, {"device", "cpu"}}, {}));
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    auto r = lm.loglikelihood({{"Once upon a time", " there was"}, {"The cat", " sat"}});
    return std::make_pair(
        r, ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr());
  };
  auto [good, quiet] = scores_and_log();
  EXPECT_FALSE(std::isnan(good[0].loglikelihood));
  EXPECT_EQ(quiet.find("NaN"), std::string::npos) << quiet;
  // A negative RMSNorm epsilon: rsqrt of a negative variance, NaN from the first layer on, as in
  // transformers (which says nothing).
  json cfg = config();
  cfg["rms_norm_eps"] = -1.0;
  write_config(cfg);
  auto [bad, log] = scores_and_log();
  EXPECT_TRUE(std::isnan(bad[0].loglikelihood));
  EXPECT_HAS(log, "2 of 2 loglikelihood scores are NaN");
}

// Generation settings transformers' generate raises for are refused naming the gen_kwargs field,
// instead of generating with other settings (a negative temperature sampled at 1, a max_gen_toks
// of -5 generated one token).
TEST_F(CheckpointFaults, GenerationSettingsTransformersRefusesAreRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  HFLM lm(parse_hf_args(Json{{"pretrained", dir_.string()}, {"device", "cpu"}}, {}));
  auto gen_error = [&](const Json& kw) {
    return error_of([&] { lm.generate_until({GenerationRequest{"Once upon a time", kw}}); });
  };
  const Json until = {"\n"};
  EXPECT_HAS(
      gen_error(
          {{"until", until}, {"do_sample", true}, {"temperature", -1.0}, {"max_gen_toks", 2}}),
      "generation_kwargs.temperature");
  EXPECT_HAS(
      gen_error({{"until", until}, {"do_sample", true}, {"temperature", 0.0}, {"max_gen_toks", 2}}),
      "generation_kwargs.temperature");
  EXPECT_HAS(gen_error({{"until", until}, {"do_sample", true}, {"top_k", -3}, {"max_gen_toks", 2}}),
             "generation_kwargs.top_k");
  EXPECT_HAS(
      gen_error({{"until", until}, {"do_sample", true}, {"top_p", -0.5}, {"max_gen_toks", 2}}),
      "generation_kwargs.top_p");
  EXPECT_HAS(gen_error({{"until", until}, {"max_gen_toks", -5}}), "max_gen_toks");
  EXPECT_HAS(gen_error({{"until", until}, {"max_gen_toks", 0}}), "max_gen_toks");
  // Greedy decoding ignores the sampling settings, as transformers does; temperature 0 is greedy.
  EXPECT_EQ(gen_error({{"until", until}, {"temperature", -1.0}, {"max_gen_toks", 2}}), "");
  EXPECT_EQ(gen_error({{"until", until}, {"temperature", 0.0}, {"max_gen_toks", 2}}), "");
  EXPECT_EQ(gen_error({{"until", until},
                       {"do_sample", true},
                       {"temperature", 0.7},
                       {"top_k", 0},
                       {"max_gen_toks", 2}}),
            "");
}

// config.json values transformers refuses when it reads the config (probed with transformers
// 5.24 in the torch venv): rope_parameters / rope_scaling that are no mapping
// (StrictDataclassFieldValidationError), a dtype / torch_dtype name torch lacks (AttributeError
// from getattr(torch, name), whatever dtype the model is loaded in). `dtype` wins over
// `torch_dtype` there, so a bad torch_dtype beside a good dtype loads.
TEST_F(CheckpointFaults, ConfigValuesTransformersRefusesAreRefused) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  const json good = config();
  for (const json& rope : {json("default"), json(5), json::array({1, 2})}) {
    json cfg = good;
    cfg["rope_parameters"] = rope;
    write_config(cfg);
    const std::string e = load_error();
    EXPECT_HAS(e, "config.json");
    EXPECT_HAS(e, "$.rope_parameters");
    EXPECT_HAS(e, "not a mapping");
  }
  json cfg = good;
  cfg.erase("rope_parameters");
  cfg["rope_theta"] = 10000.0;
  cfg["rope_scaling"] = "linear";  // transformers 4.x's name, converted into rope_parameters
  write_config(cfg);
  EXPECT_HAS(load_error(), "$.rope_scaling");
  for (const char* key : {"dtype", "torch_dtype"}) {
    cfg = good;
    cfg.erase("dtype");
    cfg[key] = "float33";
    write_config(cfg);
    for (const char* dtype : {"auto", "float32"}) {
      LoadOptions lo;
      lo.dtype = dtype;
      const std::string e = error_of([&] { Transformer::load(dir_, lo); });
      EXPECT_HAS(e, std::string("$.") + key);
      EXPECT_HAS(e, "'float33' is not a torch dtype");
    }
  }
  cfg = good;
  cfg["dtype"] = "float32";
  cfg["torch_dtype"] = "float33";
  write_config(cfg);
  EXPECT_EQ(load_error(), "");
  cfg = good;
  cfg["dtype"] = "bfloat16";
  write_config(cfg);
  EXPECT_EQ(load_error(), "");
}

// An index naming tensors that no shard holds: transformers loads the model regardless (probed:
// 21 weights loaded, same logits), so lm-eval does too.
TEST_F(CheckpointFaults, IndexEntriesNoShardHoldsAreAcceptedAsTransformersDoes) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  json map = single_shard_weight_map();
  map["model.layers.9.mlp.up_proj.weight"] = kShard;
  map["bogus.tensor"] = kShard;
  write_index(map);
  EXPECT_EQ(load_error(), "");
}

// resolve_max_length reads the model's config object, which transformers' config class fills
// with its default when config.json leaves max_position_embeddings out (LlamaConfig: 2048); the
// tokenizer's model_max_length, here -5, is then never used (probed: resolve_max_length == 2048).
TEST_F(CheckpointFaults, MaxLengthComesFromTheConfigClassNotANegativeTokenizerLength) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/config.json");
  copy_fixture("llama");
  json cfg = config();
  cfg.erase("max_position_embeddings");
  write_config(cfg);
  json tok = json::parse(lmeval::testing::read_file(dir_ / "tokenizer_config.json"));
  tok["model_max_length"] = -5;
  std::ofstream(dir_ / "tokenizer_config.json", std::ios::trunc) << tok.dump();
  HFLM lm(parse_hf_args(Json{{"pretrained", dir_.string()}, {"device", "cpu"}}, {}));
  EXPECT_EQ(lm.max_length(), 2048);
  auto r = lm.loglikelihood({{"Once upon a time", " there was"}});
  EXPECT_FALSE(std::isnan(r[0].loglikelihood));
}

}  // namespace
}  // namespace lmeval::hf
