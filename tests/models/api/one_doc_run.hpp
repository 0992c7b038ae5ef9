// What the API backends' "the key is in no output" tests share: a one-document generate_until
// task in a scratch folder, a whole `lm-eval run` of it with one backend's flags, and the check
// that a secret shows in neither the run's output streams nor any file it wrote.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api::test {

// The task `tg` (tasks/tg.yaml): generate_until on one document whose question is `question`
// (data/test.jsonl).
inline void write_one_doc_task(const lmeval::testing::ScratchDir& scratch,
                               const std::string& question) {
  scratch.write("data/test.jsonl", "{\"q\": \"" + question + "\", \"a\": \"x\"}\n");
  scratch.write("tasks/tg.yaml",
                "task: tg\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
                    (scratch.path() / "data/test.jsonl").string() +
                    "\noutput_type: generate_until\ntest_split: test\ndoc_to_text: q\n"
                    "doc_to_target: a\ngeneration_kwargs:\n  until: [\"\\n\"]\n");
}

// env: shell assignments put before the binary (e.g. "VAR='x' "); model_flags: --model and its
// model_args (and any flag of the run's own).
inline lmeval::testing::CommandResult run_one_doc(const lmeval::testing::ScratchDir& scratch,
                                                  const std::string& env,
                                                  const std::string& model_flags) {
  write_one_doc_task(scratch, "Hi");
  return lmeval::testing::run_command(
      "cd '" + scratch.path().string() + "' && LMEVAL_NO_INDEX_CACHE=1 " + env + "'" +
      lmeval::testing::lmeval_binary().string() + "' run " + model_flags +
      " --tasks tg --include_path tasks --output_path out --log_samples --verbosity DEBUG");
}

inline void expect_secret_in_no_output(const lmeval::testing::CommandResult& r,
                                       const lmeval::testing::ScratchDir& scratch,
                                       const std::string& secret) {
  namespace fs = std::filesystem;
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
  if (!fs::exists(scratch.path() / "out")) return;
  for (const auto& e : fs::recursive_directory_iterator(scratch.path() / "out"))
    if (e.is_regular_file())
      EXPECT_EQ(lmeval::testing::read_file(e.path()).find(secret), std::string::npos) << e.path();
}

}  // namespace lmeval::api::test
