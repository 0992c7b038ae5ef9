// Several LoRA adapters over one base in one command (`peft=a,b`, `peft=[a,b]`, a YAML list in
// --config): one run and one results file per adapter, each scoring as the reference's HFLM does
// with that adapter alone (tests/fixtures/hf_ckpt/goldens.json "hflm", made by
// scripts/gen_hf_ckpt_fixtures.py with peft and lm_eval's HFLM).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

fs::path ckpt() { return lmeval::testing::source_dir() / "tests/fixtures/hf_ckpt"; }
std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

bool has_hf_backend() {
  auto r = lmeval::testing::run_command(q(lmeval::testing::lmeval_binary()) + " ls models");
  return r.exit_code == 0 && r.out.find("|hf ") != std::string::npos;
}

// The reference HFLM's log-likelihoods of the golden requests with pretrained=llama and `adapter`.
Json golden_of(const std::string& adapter) {
  const Json all = Json::parse(lmeval::testing::read_file(ckpt() / "goldens.json"))["hflm"];
  for (const auto& g : all)
    if (g["model_args"].value("pretrained", "") == "llama" &&
        g["model_args"].value("peft", "") == adapter)
      return g;
  return {};
}

// A loglikelihood task over the golden requests (context, continuation as given).
void write_task(const fs::path& dir, const Json& requests) {
  std::ofstream data(dir / "reqs.jsonl");
  for (const auto& r : requests) data << Json{{"ctx", r[0]}, {"cont", r[1]}}.dump() << "\n";
  std::ofstream(dir / "reqs.yaml") << "task: adapter_reqs\n"
                                      "dataset_path: json\n"
                                      "dataset_kwargs:\n"
                                      "  data_files:\n"
                                      "    test: "
                                   << (dir / "reqs.jsonl").string()
                                   << "\n"
                                      "test_split: test\n"
                                      "output_type: loglikelihood\n"
                                      "doc_to_text: \"{{ctx}}\"\n"
                                      "doc_to_target: \"{{cont}}\"\n"
                                      "target_delimiter: \"\"\n"
                                      "metric_list:\n"
                                      "  - metric: acc\n";
}

// adapter folder name -> the first element of each samples line's resps ([loglikelihood, greedy]).
std::map<std::string, std::vector<Json>> samples_by_adapter(const fs::path& out) {
  std::map<std::string, std::vector<Json>> found;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("results_", 0) == 0) {
      const Json r = Json::parse(lmeval::testing::read_file(e.path()));
      const std::string peft = r["config"]["model_args"].value("peft", "");
      std::vector<Json> lines;
      for (const auto& s : fs::directory_iterator(e.path().parent_path()))
        if (s.path().filename().string().rfind("samples_adapter_reqs", 0) == 0) {
          std::ifstream in(s.path());
          for (std::string line; std::getline(in, line);)
            lines.push_back(Json::parse(line)["resps"][0][0][0]);
        }
      found[fs::path(peft).filename().string()] = lines;
    }
  }
  return found;
}

class AdapterList : public ::testing::TestWithParam<std::string> {};

TEST_P(AdapterList, OneRunPerAdapterEachAsTheReference) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  lmeval::testing::ScratchDir d("lmeval_adapters");
  const Json plain = golden_of("lora_plain"), mts = golden_of("lora_mts");
  ASSERT_FALSE(plain.is_null());
  ASSERT_FALSE(mts.is_null());
  ASSERT_EQ(plain["requests"], mts["requests"]);
  write_task(d.path(), plain["requests"]);
  const std::string base = "pretrained=" + (ckpt() / "llama").string() + ",tokenizer=" +
                           (lmeval::testing::shared_dir() / "fixtures/llama").string() +
                           ",dtype=float32";
  const std::string a = (ckpt() / "lora_plain").string(), b = (ckpt() / "lora_mts").string();
  std::string model_flags;
  if (GetParam() == "commas") {
    model_flags = "--model_args " + q(base + ",peft=" + a + "," + b);
  } else if (GetParam() == "brackets") {
    model_flags = "--model_args " + q(base + ",peft=[" + a + "," + b + "]");
  } else {
    std::ofstream(d.path() / "eval.yaml")
        << "model: hf\nmodel_args:\n  pretrained: " << (ckpt() / "llama").string()
        << "\n  tokenizer: " << (lmeval::testing::shared_dir() / "fixtures/llama").string()
        << "\n  dtype: float32\n  peft:\n    - " << a << "\n    - " << b << "\n";
    model_flags = "--config " + q(d.path() / "eval.yaml");
  }
  const fs::path out = d.path() / "out";
  auto r =
      lmeval::testing::run_command(q(lmeval::testing::lmeval_binary()) + " run --model hf " +
                                   model_flags + " --device cpu --include_path " + q(d.path()) +
                                   " --tasks adapter_reqs --log_samples --output_path " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("adapter 1/2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("adapter 2/2"), std::string::npos) << r.err;
  const auto found = samples_by_adapter(out);
  ASSERT_EQ(found.size(), 2u) << r.err;
  for (const auto& [name, golden] : {std::pair{"lora_plain", plain}, std::pair{"lora_mts", mts}}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(found.count(name)) << r.err;
    const auto& lls = found.at(name);
    ASSERT_EQ(lls.size(), golden["loglikelihood"].size());
    // Samples are in document order; each resps' first item is the log-likelihood (as text when
    // the reference's samples hold it so).
    for (size_t i = 0; i < lls.size(); ++i) {
      const double got =
          lls[i].is_string() ? std::stod(lls[i].get<std::string>()) : lls[i].get<double>();
      EXPECT_NEAR(got, golden["loglikelihood"][i].get<double>(), 1e-4) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, AdapterList, ::testing::Values("commas", "brackets", "config"));

// Runs `adapters` (folder names under hf_ckpt) over the llama fixture in one command; returns the
// command's result and leaves results and samples under `out`.
lmeval::testing::CommandResult run_adapters(const fs::path& dir,
                                            const std::vector<std::string>& adapters,
                                            const fs::path& out, const std::string& extra = "") {
  std::string list;
  for (const auto& a : adapters) list += (list.empty() ? "" : ",") + (ckpt() / a).string();
  const std::string args = "pretrained=" + (ckpt() / "llama").string() + ",tokenizer=" +
                           (lmeval::testing::shared_dir() / "fixtures/llama").string() +
                           ",dtype=float32,peft=" + (adapters.size() > 1 ? "[" + list + "]" : list);
  return lmeval::testing::run_command(
      q(lmeval::testing::lmeval_binary()) + " run --model hf --model_args " + q(args) +
      " --device cpu --include_path " + q(dir) +
      " --tasks adapter_reqs --log_samples --output_path " + q(out) + extra);
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// One base for three adapters: the model is built once (one "hf: loaded" line), and each
// adapter's log-likelihoods are those of that adapter run alone, bit for bit. The order puts a
// modules_to_save adapter (whole tensors replaced) and an embedding adapter before others, so a
// tensor either left changed would show in the next adapter's numbers.
TEST(AdapterList, SharedBaseScoresEachAdapterAsItsOwnRunBitForBit) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  lmeval::testing::ScratchDir d("lmeval_adapters_shared");
  write_task(d.path(), golden_of("lora_plain")["requests"]);
  const std::vector<std::string> order = {"lora_mts", "lora_embed", "lora_plain"};
  auto shared = run_adapters(d.path(), order, d.path() / "shared");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_EQ(count_of(shared.err, "hf: loaded "), 1u) << shared.err;
  EXPECT_NE(shared.err.find("hf: base model loaded once for 3 adapters"), std::string::npos)
      << shared.err;
  EXPECT_EQ(count_of(shared.err, "hf: switched to adapter "), 2u) << shared.err;
  const auto together = samples_by_adapter(d.path() / "shared");
  ASSERT_EQ(together.size(), 3u) << shared.err;
  for (const auto& a : order) {
    SCOPED_TRACE(a);
    auto alone = run_adapters(d.path(), {a}, d.path() / ("alone_" + a));
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const auto own = samples_by_adapter(d.path() / ("alone_" + a));
    ASSERT_EQ(own.count(a), 1u);
    ASSERT_EQ(together.count(a), 1u);
    ASSERT_FALSE(own.at(a).empty());
    // The samples' log-likelihoods as written (full precision): equal, not close.
    EXPECT_EQ(Json(together.at(a)).dump(), Json(own.at(a)).dump());
  }
  // The adapters differ from each other, so equal numbers above are not those of one adapter.
  EXPECT_NE(Json(together.at("lora_mts")).dump(), Json(together.at("lora_plain")).dump());
  EXPECT_NE(Json(together.at("lora_embed")).dump(), Json(together.at("lora_plain")).dump());
}

// A bad adapter among several is found before the first runs: exit 2 naming its file and module,
// and no results written for the good ones before it.
TEST(AdapterList, BadAdapterAmongSeveralIsExit2BeforeAnyRun) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  lmeval::testing::ScratchDir d("lmeval_adapters_bad_module");
  write_task(d.path(), golden_of("lora_plain")["requests"]);
  const fs::path out = d.path() / "out";
  auto r = run_adapters(d.path(), {"lora_plain", "lora_mts", "lora_missing_module"}, out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("module model.layers.5.self_attn.q_proj is not in the base model"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lora_missing_module/adapter_model.safetensors"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("adapter 1/3"), std::string::npos) << r.err;
  if (fs::exists(out))
    for (const auto& e : fs::recursive_directory_iterator(out))
      EXPECT_NE(e.path().filename().string().rfind("results_", 0), 0u)
          << e.path() << ": results were written before the bad adapter was found";
}

// A seq2seq model takes no adapter (models.md, backend): a list of them is refused as one is,
// before any run.
TEST(AdapterList, Seq2seqWithSeveralAdaptersIsExit2BeforeAnyRun) {
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
  const fs::path t5 = lmeval::testing::source_dir() / "tests/fixtures/hf_arch/t5";
  auto r = lmeval::testing::run_command(
      q(lmeval::testing::lmeval_binary()) + " run --model hf --model_args " +
      q("pretrained=" + t5.string() + ",peft=[" + (ckpt() / "lora_plain").string() + "," +
        (ckpt() / "lora_mts").string() + "]") +
      " --device cpu --tasks demo_story_cloze");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("peft is not supported for encoder-decoder (seq2seq) models"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("adapter 1/2"), std::string::npos) << r.err;
}

TEST(AdapterList, EmptyEntryIsExit2NamingPeft) {
  lmeval::testing::ScratchDir d("lmeval_adapters_bad");
  auto r = lmeval::testing::run_command(
      q(lmeval::testing::lmeval_binary()) +
      " run --model hf --model_args 'pretrained=x,peft=[a,,b]' --tasks demo_story_cloze");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("adapter 2 of peft is empty"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--model_args peft"), std::string::npos) << r.err;
}

}  // namespace
