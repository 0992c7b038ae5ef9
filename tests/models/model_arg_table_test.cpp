// The model_args tables (models/model_arg_table.hpp): docs/models.md lists each backend's table,
// parsing applies it as the backends did before the tables (key order, None, ranges), and the
// unknown-key errors read as they did.
#include "lmeval/models/model_arg_table.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_args.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "models/model_arg_docs.hpp"

namespace lmeval {
namespace {

ModelRegistry core_and_hf() {
  ModelRegistry reg;
  register_core_models(reg);
  register_hf_model(reg);
  return reg;
}

TEST(Models_ModelArgTable, DocsListEveryKeyOfHfAndDummy) {
  ModelRegistry reg = core_and_hf();
  for (const char* model : {"hf", "dummy"}) {
    SCOPED_TRACE(model);
    const ModelInfoEntry* e = reg.find(model);
    ASSERT_NE(e, nullptr);
    testing::expect_documented(model, e->args);
  }
}

TEST(Models_ModelArgTable, RegistryKnownArgsAreTheTableKeys) {
  ModelRegistry reg = core_and_hf();
  // The keys hf accepted before its table, in the order its unknown-key error listed them, and
  // peft and delta after.
  const std::vector<std::string> hf_keys = {"pretrained",
                                            "backend",
                                            "revision",
                                            "subfolder",
                                            "tokenizer",
                                            "gguf_file",
                                            "max_length",
                                            "device",
                                            "dtype",
                                            "softmax_dtype",
                                            "batch_size",
                                            "max_batch_size",
                                            "add_bos_token",
                                            "prefix_token_id",
                                            "logits_cache",
                                            "truncation",
                                            "trust_remote_code",
                                            "use_fast_tokenizer",
                                            "think_end_token",
                                            "parallelize",
                                            "max_memory_per_gpu",
                                            "max_cpu_memory",
                                            "offload_folder",
                                            "device_map",
                                            "load_in_4bit",
                                            "load_in_8bit",
                                            "bnb_4bit_compute_dtype",
                                            "bnb_4bit_quant_type",
                                            "bnb_4bit_use_double_quant",
                                            "attn_implementation",
                                            "peft",
                                            "delta",
                                            "threads"};
  EXPECT_EQ(reg.find("hf")->known_args, hf_keys);
  EXPECT_EQ(reg.find("huggingface")->known_args, hf_keys);
  EXPECT_EQ(hf_model_known_args(), hf_keys);
  EXPECT_EQ(reg.find("dummy")->known_args,
            (std::vector<std::string>{"pretrained", "salt", "tokenizer", "trust_remote_code"}));
  for (const char* model : {"hf", "dummy"}) {
    std::set<std::string> seen;
    for (const auto& a : reg.find(model)->args) {
      EXPECT_TRUE(seen.insert(a.key).second) << model << ": " << a.key << " twice";
      EXPECT_FALSE(a.doc.empty()) << model << ": " << a.key << " has no doc text";
    }
  }
}

TEST(Models_ModelArgTable, UnknownKeyErrorsReadAsBefore) {
  try {
    hf::parse_hf_args(Json{{"pretrained", "x"}, {"bogus", 1}}, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unknown model_args key 'bogus' for model hf");
    EXPECT_EQ(e.where().field, "--model_args bogus");
    EXPECT_EQ(e.expected(),
              "one of pretrained, backend, revision, subfolder, tokenizer, gguf_file, max_length, "
              "device, "
              "dtype, softmax_dtype, batch_size, max_batch_size, add_bos_token, prefix_token_id, "
              "logits_cache, truncation, trust_remote_code, use_fast_tokenizer, think_end_token, "
              "parallelize, max_memory_per_gpu, max_cpu_memory, offload_folder, device_map, "
              "load_in_4bit, load_in_8bit, bnb_4bit_compute_dtype, bnb_4bit_quant_type, "
              "bnb_4bit_use_double_quant, attn_implementation, peft, delta, threads");
  }
  ModelRegistry reg = core_and_hf();
  try {
    reg.find("dummy")->factory(Json{{"pretrained", "x"}, {"seed", 1}}, {});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unknown model_args key 'seed' for model dummy");
    EXPECT_EQ(e.where().field, "--model_args");
    EXPECT_EQ(e.expected(), "pretrained (used only as the model name), salt or tokenizer");
  }
  EXPECT_NE(reg.find("dummy")->factory(Json{{"trust_remote_code", true}, {"salt", "a"}}, {}),
            nullptr);
}

// Every integer key whose accepted values read "A to B" refuses A-1 and B+1 with a message naming
// the key and that range, and takes A and B.
TEST(Models_ModelArgTable, HfIntegerRangesAreTheDocumentedOnes) {
  const std::regex range(R"((-?\d+) to (-?\d+))");
  size_t checked = 0;
  for (const auto& a : hf::hf_model_args()) {
    if (a.info.type != ModelArgType::Int) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(a.info.accepted, m, range)) << a.info.key;
    const int64_t lo = std::stoll(m[1]), hi = std::stoll(m[2]);
    for (int64_t ok : {lo, hi}) {
      hf::HfArgs args;
      EXPECT_NO_THROW(model_args::apply(hf::hf_model_args(), Json{{a.info.key, ok}}, args,
                                        ModelArgOrder::Table))
          << a.info.key << "=" << ok;
    }
    for (int64_t bad : {lo - 1, hi + 1}) {
      hf::HfArgs args;
      try {
        model_args::apply(hf::hf_model_args(), Json{{a.info.key, bad}}, args, ModelArgOrder::Table);
        ADD_FAILURE() << a.info.key << "=" << bad << " accepted";
      } catch (const UserError& e) {
        EXPECT_EQ(e.where().field, "--model_args " + a.info.key);
        EXPECT_EQ(e.expected(), "an integer from " + a.info.accepted);
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4u);  // max_length, max_batch_size, prefix_token_id, threads
}

// parse_hf_args as before its table: keys apply in the order given, None keeps a default only
// where the old code skipped it.
TEST(Models_ModelArgTable, HfKeysApplyInTheOrderGiven) {
  Json args = Json::object();
  args["pretrained"] = "org/model";
  args["subfolder"] = "step1000";
  // subfolder is its own argument (HFLM passes it to from_pretrained), whatever the order.
  EXPECT_EQ(hf::parse_hf_args(args, {}).pretrained, "org/model");
  EXPECT_EQ(hf::parse_hf_args(args, {}).subfolder, "step1000");
  Json late = Json::object();
  late["subfolder"] = "step1000";
  late["pretrained"] = "org/model";
  EXPECT_EQ(hf::parse_hf_args(late, {}).subfolder, "step1000");
  // None: tokenizer/max_length keep their defaults; revision takes Python's str(None).
  hf::HfArgs a = hf::parse_hf_args(Json{{"pretrained", "x"},
                                        {"tokenizer", "None"},
                                        {"max_length", nullptr},
                                        {"revision", "None"}},
                                   {});
  EXPECT_EQ(a.tokenizer, "");
  EXPECT_FALSE(a.max_length.has_value());
  EXPECT_EQ(a.revision, "None");
  // None is no boolean where the old code did not skip it.
  EXPECT_THROW(hf::parse_hf_args(Json{{"pretrained", "x"}, {"logits_cache", nullptr}}, {}),
               UserError);
  // parallelize and the from_pretrained keys are taken for the transformers path.
  EXPECT_TRUE(
      hf::parse_hf_args(Json{{"pretrained", "x"}, {"parallelize", "True"}}, {}).parallelize);
  const auto kw = hf::parse_hf_args(Json{{"pretrained", "x"},
                                         {"load_in_4bit", "True"},
                                         {"attn_implementation", "eager"},
                                         {"max_memory_per_gpu", 1000}},
                                    {})
                      .transformers_kwargs;
  EXPECT_EQ(kw, (Json{{"load_in_4bit", true},
                      {"attn_implementation", "eager"},
                      {"max_memory_per_gpu", 1000}}));
  EXPECT_THROW(hf::parse_hf_args(Json{{"pretrained", "x"}, {"load_in_8bit", "maybe"}}, {}),
               UserError);
  EXPECT_THROW(hf::parse_hf_args(Json{{"pretrained", "x"}, {"backend", "encoder"}}, {}), UserError);
  EXPECT_EQ(hf::parse_hf_args(Json{{"pretrained", "x"}, {"backend", "seq2seq"}}, {}).backend,
            "seq2seq");
  // A subfolder without pretrained is still no pretrained.
  EXPECT_THROW(hf::parse_hf_args(Json{{"subfolder", "x"}}, {}), UserError);
  EXPECT_EQ(hf::parse_hf_args(Json{{"pretrained", "x"}, {"threads", "3"}}, {}).threads, 3);
}

// The generic table: both orders, None, and the entry shapes.
struct Toy {
  std::string name = "dflt";
  std::optional<int64_t> n;
  int small = 7;
  bool flag = false;
  std::vector<std::string> seen;
};

TEST(Models_ModelArgTable, AppliesAsGivenOrInTableOrder) {
  ModelArgTable<Toy> table = {
      model_args::text(&Toy::name, {.key = "name", .doc = "d"}),
      model_args::integer(&Toy::n, 0, 10, {.key = "n", .doc = "d"}),
      model_args::integer(&Toy::small, -2, 2, {.key = "small", .doc = "d"}),
      model_args::none_is_a_value(model_args::boolean(&Toy::flag, {.key = "flag", .doc = "d"})),
  };
  for (auto& e : table) {
    auto inner = e.apply;
    const std::string key = e.info.key;
    e.apply = [inner, key](Toy& t, const Json& v) {
      t.seen.push_back(key);
      inner(t, v);
    };
  }
  Json args = Json::object();
  args["small"] = "-2";
  args["name"] = 5;
  args["n"] = "None";
  Toy given;
  model_args::apply(table, args, given, ModelArgOrder::AsGiven);
  EXPECT_EQ(given.seen, (std::vector<std::string>{"small", "name"}));  // None skipped
  EXPECT_EQ(given.small, -2);
  EXPECT_EQ(given.name, "5");
  EXPECT_FALSE(given.n.has_value());
  Toy ordered;
  model_args::apply(table, args, ordered, ModelArgOrder::Table);
  EXPECT_EQ(ordered.seen, (std::vector<std::string>{"name", "small"}));
  Toy bad;
  EXPECT_THROW(model_args::apply(table, Json{{"flag", nullptr}}, bad, ModelArgOrder::Table),
               UserError);
  EXPECT_THROW(model_args::apply(table, Json{{"small", 3}}, bad, ModelArgOrder::Table), UserError);
  EXPECT_EQ(model_args::keys(table), (std::vector<std::string>{"name", "n", "small", "flag"}));
  EXPECT_EQ(model_args::doc_rows({{.key = "k",
                                   .type = ModelArgType::Int,
                                   .default_value = "`1`",
                                   .accepted = "a | b",
                                   .doc = "x"}})
                .back(),
            "| `k` | int | `1` | a \\| b | x |");
}

}  // namespace
}  // namespace lmeval
