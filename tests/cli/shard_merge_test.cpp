// `run --shard I/N` + `merge`: the merged results and samples equal one whole run's (timings
// aside), with the dummy model and with hf on a fixture, including a corpus-level metric
// (wikitext's perplexities are computed from all documents after the merge).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::results_without_timings;
using lmeval::testing::run_command;
using lmeval::testing::samples_of;
using lmeval::testing::shared_dir;

namespace {

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("lmeval_shard_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path);
  }
  ~Dir() { fs::remove_all(path); }
};

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Runs `args` whole and in `n` shards, merges the parts (given last to first), and compares.
void expect_merge_equals_whole(const std::string& args, int n,
                               const std::vector<std::string>& tasks, const std::string& label) {
  Dir dir(label);
  std::string bin = quoted(lmeval_binary());
  auto whole = run_command(bin + " run " + args + " --log_samples --output_path " +
                           quoted(dir.path / "whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::string parts;
  for (int i = 1; i <= n; ++i) {
    auto r = run_command(bin + " run " + args + " --log_samples --shard " + std::to_string(i) +
                         "/" + std::to_string(n) + " --output_path " + quoted(dir.path / "parts"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    parts = quoted(dir.path / "parts" /
                   ("shard_" + std::to_string(i) + "of" + std::to_string(n) + ".json")) +
            " " + parts;
  }
  auto merged =
      run_command(bin + " merge " + parts + " --output_path " + quoted(dir.path / "merged"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(results_without_timings(dir.path / "merged"),
            results_without_timings(dir.path / "whole"));
  for (const auto& t : tasks) {
    EXPECT_FALSE(samples_of(dir.path / "whole", t).empty()) << t;
    EXPECT_EQ(samples_of(dir.path / "merged", t), samples_of(dir.path / "whole", t)) << t;
  }
  // The console table is the whole run's too.
  EXPECT_EQ(merged.out.substr(merged.out.find('|')), whole.out.substr(whole.out.find('|')));
}

bool has_hf_backend() {
  auto r = run_command(quoted(lmeval_binary()) + " ls models");
  return r.exit_code == 0 && r.out.find("|hf ") != std::string::npos;
}

}  // namespace

TEST(Cli_ShardMerge, DummyDemoTaskInThreeParts) {
  expect_merge_equals_whole("--model dummy --model_args pretrained=dummy --tasks demo_story_cloze",
                            3, {"demo_story_cloze"}, "demo");
}

TEST(Cli_ShardMerge, DummyCorpusMetricsAndGenerationInFourParts) {
  LMEVAL_REQUIRE_SHARED("hf_data/EleutherAI/wikitext_document_level");
  LMEVAL_REQUIRE_SHARED("hf_data/openai/gsm8k");
  expect_merge_equals_whole(
      "--model dummy --model_args pretrained=dummy --tasks wikitext,gsm8k,demo_story_cloze "
      "--limit 12 --data_dir " +
          quoted(shared_dir() / "hf_data"),
      4, {"wikitext", "gsm8k", "demo_story_cloze"}, "corpus");
}

// Batch size 1: with larger batches each part pads and groups its own requests, which moves
// float32 loglikelihoods in their last bits (docs/fidelity.md).
TEST(Cli_ShardMerge, HfFixtureInTwoParts) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/model.safetensors");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  std::string model =
      "--model hf --model_args pretrained=" + quoted(shared_dir() / "fixtures/llama") +
      " --device cpu --batch_size 1 ";
  if (fs::exists(shared_dir() / "hf_data/EleutherAI/wikitext_document_level"))
    expect_merge_equals_whole(model + "--tasks demo_story_cloze,wikitext --limit 1 --data_dir " +
                                  quoted(shared_dir() / "hf_data"),
                              2, {"demo_story_cloze", "wikitext"}, "hf");
  else
    expect_merge_equals_whole(model + "--tasks demo_story_cloze --limit 6", 2, {"demo_story_cloze"},
                              "hf");
}

// With a chat template the prompts are rendered by the model's tokenizer: the parts record the
// renderings and merge serves them back (merge loads no model).
TEST(Cli_ShardMerge, HfChatTemplateInTwoParts) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/model.safetensors");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  Dir model("chat_model");
  fs::copy(shared_dir() / "fixtures/llama", model.path, fs::copy_options::recursive);
  auto config = nlohmann::ordered_json::parse(
      lmeval::testing::read_file(model.path / "tokenizer_config.json"));
  config["chat_template"] =
      "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
      "{% if add_generation_prompt %}<|assistant|>{% endif %}";
  std::ofstream(model.path / "tokenizer_config.json") << config.dump();
  expect_merge_equals_whole("--model hf --model_args pretrained=" + quoted(model.path) +
                                " --device cpu --batch_size 1 --tasks demo_story_cloze --limit 3"
                                " --apply_chat_template --system_instruction 'Pick the ending.'",
                            2, {"demo_story_cloze"}, "hf_chat");
}

TEST(Cli_ShardMerge, UsageErrorsExitTwo) {
  Dir dir("usage");
  std::string run = quoted(lmeval_binary()) + " run --model dummy --tasks demo_story_cloze ";
  auto r = run_command(run + "--shard 3/2 --output_path " + quoted(dir.path));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
  r = run_command(run + "--shard 1/2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--output_path"), std::string::npos) << r.err;

  ASSERT_EQ(run_command(run + "--shard 1/3 --output_path " + quoted(dir.path)).exit_code, 0);
  ASSERT_EQ(run_command(run + "--shard 3/3 --output_path " + quoted(dir.path)).exit_code, 0);
  r = run_command(quoted(lmeval_binary()) + " merge " + quoted(dir.path / "shard_1of3.json") + " " +
                  quoted(dir.path / "shard_3of3.json") + " --output_path " +
                  quoted(dir.path / "m"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("parts missing: 2/3"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path / "m"));
}

TEST(Cli_ShardMerge, PartsMayDifferInCacheAndOutputPath) {
  Dir dir("mixed");
  std::string bin = quoted(lmeval_binary());
  std::string args =
      " run --model dummy --model_args pretrained=dummy --tasks demo_story_cloze --log_samples ";
  std::string cache = " --use_cache " + quoted(dir.path / "c");
  ASSERT_EQ(
      run_command(bin + args + cache + " --output_path " + quoted(dir.path / "whole")).exit_code,
      0);
  // Part 1 with the (now full) cache, part 2 without one, each in its own folder.
  ASSERT_EQ(
      run_command(bin + args + cache + " --shard 1/2 --output_path " + quoted(dir.path / "p1"))
          .exit_code,
      0);
  ASSERT_EQ(
      run_command(bin + args + " --shard 2/2 --output_path " + quoted(dir.path / "p2")).exit_code,
      0);
  auto merged = run_command(bin + " merge " + quoted(dir.path / "p2/shard_2of2.json") + " " +
                            quoted(dir.path / "p1/shard_1of2.json") + " --output_path " +
                            quoted(dir.path / "merged"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(results_without_timings(dir.path / "merged"),
            results_without_timings(dir.path / "whole"));
  EXPECT_EQ(samples_of(dir.path / "merged", "demo_story_cloze"),
            samples_of(dir.path / "whole", "demo_story_cloze"));
}
