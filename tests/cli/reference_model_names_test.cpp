// The reference's model names (issue 30, point 4): each one lm-eval does not run exits 2 before
// any task or dataset is loaded, saying so and what to use instead; `ls models` lists every name
// of the reference's registry with its status. The names come from the reference itself
// (tests/models/goldens/reference_model_names.txt, scripts/gen_reference_model_names.py).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::lmeval_binary;
using lmeval::testing::run_command;

namespace {

std::vector<std::string> reference_names() {
  std::ifstream in(lmeval::testing::source_dir() /
                   "tests/models/goldens/reference_model_names.txt");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line.substr(0, line.find('\t')));
  return out;
}

// The `ls models` row of `name` (its first cell followed by a space or a bar), or "".
std::string row_of(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|" + name, 0) != 0 || line.size() <= name.size() + 1) continue;
    const char next = line[name.size() + 1];
    if (next == ' ' || next == '|') return line;
  }
  return "";
}

lmeval::testing::CommandResult lm(const fs::path& dir, const std::string& args) {
  return run_command("cd '" + dir.string() + "' && LMEVAL_NO_INDEX_CACHE=1 '" +
                     lmeval_binary().string() + "' " + args + " </dev/null");
}

}  // namespace

TEST(ReferenceModelNames, GoldenListIsTheReferences) {
  const auto names = reference_names();
  ASSERT_EQ(names.size(), 38u) << "regenerate with scripts/gen_reference_model_names.py";
  for (const char* n : {"vllm", "sglang", "hf", "openvino", "winml", "vllm-vlm", "steered"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(ReferenceModelNames, LsModelsListsEveryNameWithItsStatus) {
  auto r = run_command("'" + lmeval_binary().string() + "' ls models");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" Model "), std::string::npos);
  EXPECT_NE(r.out.find("Status"), std::string::npos);
  const bool has_hf =
      !row_of(r.out, "hf").empty() && row_of(r.out, "hf").find("refused") == std::string::npos;
  for (const auto& n : reference_names()) {
    const std::string row = row_of(r.out, n);
    const bool hf_family = n == "hf" || n == "hf-auto" || n == "huggingface";
    if (hf_family && !has_hf) continue;  // a build without libtorch does not list them
    EXPECT_FALSE(row.empty()) << n << " is not listed:\n" << r.out;
    const bool refused = row.find("refused: lm-eval does not run it") != std::string::npos;
    if (n == "dummy" || n.rfind("local-", 0) == 0 || n.rfind("openai-", 0) == 0 ||
        (hf_family && has_hf))
      EXPECT_FALSE(refused) << row;
    if (n == "openvino" || n == "winml" || n == "steered" || n == "hf-multimodal" ||
        n == "vllm-vlm" || n == "nemo_lm" || n == "megatron_lm" || n == "mamba_ssm")
      EXPECT_TRUE(refused && row.find("instead: ") != std::string::npos) << row;
  }
  EXPECT_NE(row_of(r.out, "local-completions").find("client of a server you start"),
            std::string::npos);
}

// Every refused name: exit 2 naming --model, the name and what to use instead, before the task
// (here one that does not exist) is looked up.
TEST(ReferenceModelNames, RefusedBeforeTasksAreLoaded) {
  lmeval::testing::ScratchDir scratch{"lmeval_refmodels"};
  auto ls = run_command("'" + lmeval_binary().string() + "' ls models");
  int refused = 0;
  for (const auto& n : reference_names()) {
    if (row_of(ls.out, n).find("refused:") == std::string::npos) continue;
    ++refused;
    auto r = lm(scratch.path(),
                "run --model " + n + " --model_args pretrained=x --tasks no_such_task_zz");
    EXPECT_EQ(r.exit_code, 2) << n << ": " << r.err;
    EXPECT_NE(r.err.find("lm-eval does not run the reference's model '" + n + "'"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("instead: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no_such_task_zz"), std::string::npos) << n << ": " << r.err;
  }
  EXPECT_GE(refused, 20);
}

// A dataset that cannot be read is not touched either: the model is refused first.
TEST(ReferenceModelNames, RefusedBeforeDataIsLoaded) {
  lmeval::testing::ScratchDir scratch{"lmeval_refmodels"};
  scratch.write("tasks/t1.yaml",
                "task: t1\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: "
                "/nonexistent/zz.jsonl\noutput_type: generate_until\ntest_split: test\n"
                "doc_to_text: q\ndoc_to_target: a\n");
  auto r = lm(scratch.path(), "run --model openvino --tasks t1 --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'openvino'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--model hf"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("zz.jsonl"), std::string::npos) << r.err;
  // The same task with a model that runs does reach the data (so the check above can fail).
  auto d = lm(scratch.path(), "run --model dummy --tasks t1 --include_path tasks");
  EXPECT_NE(d.exit_code, 0);
  EXPECT_NE(d.err.find("zz.jsonl"), std::string::npos) << d.err;
}

TEST(ReferenceModelNames, UnknownNameListsTheNamesThatRun) {
  lmeval::testing::ScratchDir scratch{"lmeval_refmodels"};
  auto r = lm(scratch.path(), "run --model no-such-model --tasks no_such_task_zz");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown model 'no-such-model'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("local-completions"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no_such_task_zz"), std::string::npos) << r.err;
}

TEST(ReferenceModelNames, ValidateSaysTheSame) {
  lmeval::testing::ScratchDir scratch{"lmeval_refmodels"};
  scratch.write("tasks/t1.yaml",
                "task: t1\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: "
                "/nonexistent/zz.jsonl\noutput_type: generate_until\ntest_split: test\n"
                "doc_to_text: q\ndoc_to_target: a\n");
  auto r = lm(scratch.path(), "validate --model nemo_lm --tasks t1 --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("lm-eval does not run the reference's model 'nemo_lm'"),
            std::string::npos)
      << r.out << r.err;
}
