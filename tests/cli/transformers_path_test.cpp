// `lm-eval run --model hf` on a model that runs through transformers (the hf backend's
// transformers path), over tests/fixtures/fake_transformers (a pure-Python stand-in for torch and
// transformers): the one log line naming the path and why, the results recording it, and the
// errors: an environment without torch (exit 2, what is missing and how to install it), an
// exception in from_pretrained (exit 2, its message), no Python plugin (exit 2, how to build it);
// a native model with a peft adapter lm-eval does not merge (tests/fixtures/fake_peft's PeftModel
// applies it; without peft, exit 2 saying how to install it).
// Skipped, saying why, without the hf plugin, the Python plugin or ../shared's llama tokenizer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../models/hf/gguf_test_support.hpp"
#include "lmeval/core/json.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;
using lmeval::testing::lmeval_binary;
using lmeval::testing::run_command;
using lmeval::testing::shared_dir;
using lmeval::testing::source_dir;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

class TransformersPathCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path bin = lmeval_binary().parent_path();
    if (!fs::exists(bin / "liblmeval_hf_cpu.so") && !fs::exists(bin / "liblmeval_hf_cuda.so"))
      GTEST_SKIP() << "lm-eval was built without libtorch (no hf plugin)";
    if (!fs::exists(bin / "liblmeval_python.so"))
      GTEST_SKIP() << "lm-eval was built without its Python plugin (LMEVAL_WITH_PYTHON)";
    if (shared_dir().empty() || !fs::exists(shared_dir() / "fixtures/llama/tokenizer.json"))
      GTEST_SKIP() << "../shared/fixtures/llama is absent (set LMEVAL_SHARED_DIR)";
    dir_ = fs::temp_directory_path() /
           ("lmeval_tf_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "model");
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
      fs::copy_file(shared_dir() / "fixtures/llama" / f, dir_ / "model" / f);
    write_config(Json::object());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_config(const Json& extra) const {
    Json c = {{"architectures", {"FakeBigramForCausalLM"}},
              {"model_type", "fake_bigram"},
              {"vocab_size", 512},
              {"bos_token_id", 1},
              {"eos_token_id", 2},
              {"max_position_embeddings", 64}};
    for (const auto& [k, v] : extra.items()) c[k] = v;
    std::ofstream(dir_ / "model" / "config.json", std::ios::trunc) << c.dump();
  }
  // `lm-eval run` of the folder's model with `fake` (folders under tests/fixtures, joined by ':')
  // first on PYTHONPATH; `model_args` follow pretrained.
  lmeval::testing::CommandResult run(const std::string& fake, const std::string& extra = "",
                                     const std::string& model_args = "") const {
    std::string path;
    for (size_t at = 0; at <= fake.size();) {
      const size_t end = std::min(fake.find(':', at), fake.size());
      path += (path.empty() ? "" : ":") +
              (source_dir() / "tests/fixtures" / fake.substr(at, end - at)).string();
      at = end + 1;
    }
    return run_command("FAKE_TRANSFORMERS_LOG=" + quoted(dir_ / "calls.jsonl") +
                       " PYTHONPATH=" + quoted(fs::path(path)) + " " + quoted(lmeval_binary()) +
                       " run --model hf --device cpu --model_args " +
                       "pretrained=" + quoted(dir_ / "model") + model_args +
                       " --tasks demo_story_cloze --limit 2 --output_path " + quoted(dir_ / "out") +
                       " " + extra);
  }

  // The run's results_*.json under out/ (empty when none was written).
  Json results_file() const {
    Json results;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "out"))
      if (e.path().filename().string().rfind("results_", 0) == 0)
        results = Json::parse(lmeval::testing::read_file(e.path()));
    return results;
  }

  fs::path dir_;
};

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_F(TransformersPathCli, TheRunSaysOnceWhichPathRunsAndWhyAndRecordsIt) {
  auto r = run("fake_transformers");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "runs through transformers in the embedded Python"), 1U) << r.err;
  EXPECT_NE(r.err.find("'FakeBigramForCausalLM' has no native implementation"), std::string::npos)
      << r.err;
  Json results = results_file();
  ASSERT_TRUE(results.contains("config")) << "no results file";
  EXPECT_EQ(results["config"]["hf_execution"]["path"], "transformers");
  EXPECT_NE(
      results["config"]["hf_execution"]["reason"].get<std::string>().find("FakeBigramForCausalLM"),
      std::string::npos);
}

// A GGUF of an architecture lm-eval lacks beside a config.json of one it runs: lm-eval reads the
// file's general.architecture before it opens a plugin, so the native plugin (which would refuse
// the file, exit 2) is never opened.
TEST_F(TransformersPathCli, AGgufOfAnArchitectureLmEvalLacksRunsThroughTransformers) {
  write_config({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}});
  std::ofstream(dir_ / "model" / "m.gguf", std::ios::binary)
      << lmeval::hf::MiniGguf::llama("mamba").bytes();
  auto r = run("fake_transformers", "", ",gguf_file=m.gguf,tokenizer=" + quoted(dir_ / "model"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "runs through transformers in the embedded Python"), 1U) << r.err;
  EXPECT_NE(r.err.find("GGUF architecture 'mamba' (general.architecture of "), std::string::npos)
      << r.err;
  EXPECT_EQ(results_file()["config"]["hf_execution"]["path"], "transformers");
}

TEST_F(TransformersPathCli, WithoutTorchItIsExit2SayingWhatIsMissingAndHowToInstallIt) {
  auto r = run("fake_transformers_no_torch");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("runs through transformers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lacks torch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pip install torch transformers"), std::string::npos) << r.err;
}

// A Llama (an architecture lm-eval runs) with an AdaLoRA adapter: peft applies it, in
// transformers.
TEST_F(TransformersPathCli, AnAdapterLmEvalDoesNotMergeRunsThroughPeft) {
  write_config({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}});
  const fs::path adapter = source_dir() / "tests/fixtures/hf_ckpt/adalora_llama";
  auto r = run("fake_transformers:fake_peft", "", ",peft=" + quoted(adapter));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "runs through transformers in the embedded Python"), 1U) << r.err;
  EXPECT_NE(r.err.find("has peft_type ADALORA (lm-eval merges LORA, DoRA included, IA3, LOHA"),
            std::string::npos)
      << r.err;
  Json results = results_file();
  ASSERT_TRUE(results.contains("config")) << "no results file";
  EXPECT_EQ(results["config"]["hf_execution"]["path"], "transformers");
  EXPECT_NE(
      results["config"]["hf_execution"]["reason"].get<std::string>().find("peft_type ADALORA"),
      std::string::npos);
  bool applied = false;
  std::istringstream calls(lmeval::testing::read_file(dir_ / "calls.jsonl"));
  for (std::string line; std::getline(calls, line);) {
    const Json c = Json::parse(line);
    if (c["call"] == "PeftModel.from_pretrained") {
      applied = true;
      EXPECT_EQ(c["path"], adapter.string());
      EXPECT_EQ(c["kwargs"], (Json{{"revision", "main"}}));  // HFLM._create_model's call
    }
  }
  EXPECT_TRUE(applied);
  // A LoRA adapter on the same model runs natively (no fake torch needed).
  auto native = run("fake_transformers:fake_peft", "",
                    ",peft=" + quoted(source_dir() / "tests/fixtures/hf_ckpt/lora_plain"));
  EXPECT_EQ(count(native.err, "runs through transformers"), 0U) << native.err;
}

TEST_F(TransformersPathCli, AnAdapterPeftMustApplyWithoutPeftIsExit2SayingHowToInstallIt) {
  write_config({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}});
  auto r = run("fake_transformers", "",
               ",peft=" + quoted(source_dir() / "tests/fixtures/hf_ckpt/adalora_llama"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("runs through transformers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lacks peft"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pip install peft"), std::string::npos) << r.err;
}

TEST_F(TransformersPathCli, AnExceptionInFromPretrainedIsExit2WithItsMessage) {
  write_config({{"fake_raise", "the checkpoint is broken (test)"}});
  auto r = run("fake_transformers");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ValueError: the checkpoint is broken (test)"), std::string::npos) << r.err;
}

TEST_F(TransformersPathCli, CustomCodeNeedsTrustRemoteCodeAsInTheReference) {
  write_config({{"auto_map", {{"AutoModelForCausalLM", "modeling_fake.FakeForCausalLM"}}}});
  auto refused = run("fake_transformers");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("trust_remote_code=True"), std::string::npos) << refused.err;
  auto r = run("fake_transformers", "--trust_remote_code");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(TransformersPathCli, WithoutThePythonPluginItIsExit2SayingHowToBuildIt) {
  // A plugin folder holding only the hf plugins.
  fs::create_directories(dir_ / "plugins");
  for (const char* p :
       {"liblmeval_hf_cpu.so", "liblmeval_hf_cuda.so", "liblmeval_hf_transformers.so"})
    if (fs::exists(lmeval_binary().parent_path() / p))
      fs::create_symlink(lmeval_binary().parent_path() / p, dir_ / "plugins" / p);
  auto r = run("fake_transformers", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // the same model with the plugin
  auto without = run_command("LMEVAL_PLUGIN_DIR=" + quoted(dir_ / "plugins") + " " +
                             quoted(lmeval_binary()) + " run --model hf --device cpu " +
                             "--model_args pretrained=" + quoted(dir_ / "model") +
                             " --tasks demo_story_cloze --limit 2");
  EXPECT_EQ(without.exit_code, 2) << without.err;
  EXPECT_NE(without.err.find("liblmeval_python.so"), std::string::npos) << without.err;
  EXPECT_NE(without.err.find("runs through transformers"), std::string::npos) << without.err;
}

}  // namespace
