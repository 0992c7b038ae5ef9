// Issue 32: a JSON number beyond a double's range (1e999) in a data row, config.json, a
// safetensors header, tokenizer.json, a results, samples or merge file ended lm-eval with
// "internal error: ... number overflow" (exit 1). Each is a user error naming the file and line
// (or field) and the number.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::run_command;
using lmeval::testing::shared_dir;

namespace {

class NumberOverflow : public ::testing::Test {
 protected:
  lmeval::testing::CommandResult lm(const std::string& args) {
    return run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                       lmeval_binary().string() + "' " + args);
  }
  void expect_refused(const lmeval::testing::CommandResult& r, const std::string& where) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << "no '" << where << "' in\n" << r.err;
    EXPECT_NE(r.err.find("the number 1e999 "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" is out of range (expected numbers a double can hold"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  // A finished dummy run in `name` (results and samples of demo_story_cloze, 2 stories).
  fs::path run(const std::string& name) {
    auto r =
        lm("run --model dummy --tasks demo_story_cloze --limit 2 --log_samples "
           "--output_path " +
           name);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / name))
      if (e.path().filename().string().rfind("results_", 0) == 0) return e.path().parent_path();
    ADD_FAILURE() << "no results in " << name;
    return {};
  }
  static fs::path file_starting(const fs::path& dir, const std::string& prefix) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path();
    return {};
  }
  // Replaces the first `from` in `file` with `to`.
  static void edit(const fs::path& file, const std::string& from, const std::string& to) {
    std::string t = lmeval::testing::read_file(file);
    const auto at = t.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << file;
    t.replace(at, from.size(), to);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << t;
  }
  static bool has_hf_backend() {
    auto r = run_command("'" + lmeval_binary().string() + "' ls models");
    return r.exit_code == 0 && r.out.find("|hf ") != std::string::npos;
  }

  lmeval::testing::ScratchDir scratch_{"lmeval_overflow"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

TEST_F(NumberOverflow, DataRow) {
  scratch_.write("data/test.jsonl", "{\"q\": 1, \"label\": 0}\n{\"q\": 1e999, \"label\": 1}\n");
  scratch_.write("tasks/tx.yaml",
                 "task: tx\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                 "    test: " +
                     (dir_ / "data/test.jsonl").string() +
                     "\noutput_type: multiple_choice\ntest_split: test\n"
                     "doc_to_text: \"Q: {{q}}\"\ndoc_to_choice: [a, b]\n"
                     "doc_to_target: label\n");
  expect_refused(lm("run --model dummy --include_path tasks --tasks tx"),
                 (dir_ / "data/test.jsonl").string() + ":2:");
}

TEST_F(NumberOverflow, ResultsAndSamplesFiles) {
  const fs::path a = run("a"), b = run("b");
  const fs::path results = file_starting(a, "results_");
  edit(results, "\"acc,none\": ", "\"acc,none\": 1e999, \"was\": ");
  expect_refused(lm("compare '" + a.string() + "' '" + b.string() + "'"), results.string() + ":");

  const fs::path samples = file_starting(b, "samples_");
  edit(samples, "\"acc\": ", "\"acc\": 1e999, \"was\": ");
  expect_refused(lm("compare '" + run("c").string() + "' '" + b.string() + "'"),
                 samples.string() + ":1:");
}

TEST_F(NumberOverflow, MergePart) {
  auto r = lm("run --model dummy --tasks demo_story_cloze --limit 2 --shard 1/2 --output_path p");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::path part;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "p"))
    if (e.path().filename().string().rfind("shard_", 0) == 0) part = e.path();
  ASSERT_FALSE(part.empty());
  edit(part, "{", "{\"big\": 1e999, ");
  expect_refused(lm("merge '" + part.string() + "' --output_path m"), part.string() + ":1");
}

TEST_F(NumberOverflow, TokenizerJson) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  fs::create_directories(dir_ / "tok");
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(shared_dir() / "fixtures/llama" / f, dir_ / "tok" / f);
  edit(dir_ / "tok/tokenizer.json", "{", "{\"big\": 1e999, ");
  expect_refused(lm("run --model dummy --model_args tokenizer=tok --tasks demo_story_cloze "
                    "--limit 1"),
                 "tok/tokenizer.json:1");
}

TEST_F(NumberOverflow, HfConfigAndSafetensorsHeader) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/model.safetensors");
  if (!has_hf_backend()) GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  fs::copy(shared_dir() / "fixtures/llama", dir_ / "m", fs::copy_options::recursive);
  const std::string cmd =
      "run --model hf --model_args pretrained=m --device cpu --tasks "
      "demo_story_cloze --limit 1";
  const std::string config = lmeval::testing::read_file(dir_ / "m/config.json");
  edit(dir_ / "m/config.json", "{", "{\n\"big\": 1e999,");
  expect_refused(lm(cmd), "m/config.json:2");
  std::ofstream(dir_ / "m/config.json", std::ios::trunc) << config;

  const std::string header = R"({"w": {"dtype": "F32", "shape": [1e999], "data_offsets": [0, 4]}})";
  std::ofstream st(dir_ / "m/model.safetensors", std::ios::binary | std::ios::trunc);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) st.put(static_cast<char>((n >> (8 * i)) & 0xff));
  st << header << std::string(4, '\0');
  st.close();
  expect_refused(lm(cmd), "m/model.safetensors: the number 1e999 in the safetensors header");
}
