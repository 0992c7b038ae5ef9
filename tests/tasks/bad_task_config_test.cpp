// Hand-written broken task configurations: each is refused with a UserError that names the file,
// the line or field and what was expected, where the reference raises (a crash or a traceback
// there), and never crashes lm-eval.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/task_index.hpp"
#include "lmeval/tasks/task_selection.hpp"
#include "support/scratch_dir.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

namespace {

// A scratch task folder; the index cache is off so that each test reads its own files.
struct TempDir : lmeval::testing::ScratchDir {
  TempDir() : ScratchDir("lmeval_bad_task") { setenv("LMEVAL_NO_INDEX_CACHE", "1", 1); }
};

// The message of the UserError select_tasks throws for `names` over the folder, or "" if none.
std::string selection_error(const TempDir& d, const std::vector<std::string>& names) {
  auto index = lmeval::TaskIndex::build({d.path()});
  try {
    lmeval::select_tasks(index, names, Json::object());
  } catch (const lmeval::UserError& e) {
    return e.what();
  }
  return "";
}

const char* kTask = "task: t\ndataset_path: json\noutput_type: multiple_choice\n";

}  // namespace

// The reference recurses until RecursionError; we used to recurse until the stack overflowed.
TEST(Tasks_BadConfig, GroupContainingItselfIsRefusedWithTheCycle) {
  TempDir d;
  d.write("g.yaml", "group: gself\ntask:\n  - gself\n");
  std::string e = selection_error(d, {"gself"});
  EXPECT_NE(e.find("g.yaml:3"), std::string::npos) << e;  // the member's own line
  EXPECT_NE(e.find("task[0]"), std::string::npos) << e;
  EXPECT_NE(e.find("gself -> gself"), std::string::npos) << e;
  EXPECT_NE(e.find("expected groups that do not contain themselves"), std::string::npos) << e;
}

TEST(Tasks_BadConfig, GroupCycleThroughAnotherGroupIsRefused) {
  TempDir d;
  d.write("t.yaml", kTask);
  d.write("a.yaml", "group: ga\ntask:\n  - t\n  - gb\n");
  d.write("b.yaml", "group: gb\ntask:\n  - group: ga\n");
  std::string e = selection_error(d, {"ga"});
  EXPECT_NE(e.find("b.yaml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("ga -> gb -> ga"), std::string::npos) << e;
  // The same group twice side by side is no cycle.
  d.write("c.yaml", "group: gc\ntask:\n  - gd\n  - ge\n");
  d.write("d.yaml", "group: gd\ntask:\n  - t\n");
  d.write("e.yaml", "group: ge\ntask:\n  - gd\n");
  EXPECT_EQ(selection_error(d, {"gc"}).find("contains it"), std::string::npos);
}

// repeats 0 or below: no request and nothing for the filters; the reference fails later with
// an IndexError in take_first.
TEST(Tasks_BadConfig, RepeatsBelowOneIsRefusedAtItsLine) {
  TempDir d;
  d.write("t.yaml", std::string(kTask) + "repeats: 0\n");
  std::string e = selection_error(d, {"t"});
  EXPECT_NE(e.find("t.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("repeats"), std::string::npos) << e;
  EXPECT_NE(e.find("expected an integer of at least 1"), std::string::npos) << e;
  d.write("t.yaml", std::string(kTask) + "repeats: -2\n");
  EXPECT_NE(selection_error(d, {"t"}).find("t.yaml:4"), std::string::npos);
  d.write("t.yaml", std::string(kTask) + "repeats: 3\n");
  EXPECT_EQ(selection_error(d, {"t"}), "");
  // Issue 32: a billion repeats ran out of memory (bad_alloc) after 49 s.
  d.write("t.yaml", std::string(kTask) + "repeats: 1000000000\n");
  e = selection_error(d, {"t"});
  EXPECT_NE(e.find("t.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("expected an integer from 1 to 10000"), std::string::npos) << e;
  d.write("t.yaml", std::string(kTask) + "repeats: 10000\n");
  EXPECT_EQ(selection_error(d, {"t"}), "");
}

// TaskConfig.__post_init__ converts temperature with float(): CPython's float() takes
// 0.5, "0.5", " 1e-1 " and True, and raises for "hot", None and [1].
TEST(Tasks_BadConfig, TemperatureIsConvertedAsPythonsFloatDoes) {
  TempDir d;
  const std::string gen = "task: t\ndataset_path: json\noutput_type: generate_until\n";
  for (const char* bad : {"hot", "null", "[1]", "''"}) {
    d.write("t.yaml", gen + "generation_kwargs:\n  temperature: " + bad + "\n");
    std::string e = selection_error(d, {"t"});
    EXPECT_NE(e.find("t.yaml:4"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("generation_kwargs.temperature"), std::string::npos) << e;
    EXPECT_NE(e.find("expected a number"), std::string::npos) << e;
  }
  auto index_of = [&](const char* value) {
    d.write("t.yaml", gen + "generation_kwargs:\n  temperature: " + value + "\n");
    auto index = lmeval::TaskIndex::build({d.path()});
    auto sel = lmeval::select_tasks(index, {"t"}, Json::object());
    return sel.tasks.at(0).get(lmeval::TaskField::generation_kwargs)["temperature"];
  };
  EXPECT_EQ(index_of("'0.5'"), Json(0.5));
  EXPECT_EQ(index_of("\" 1e-1 \""), Json(0.1));
  EXPECT_EQ(index_of("true"), Json(1.0));
  EXPECT_TRUE(index_of("0").is_number_float());
}

// A key a group passes down to its tasks is reported where the group wrote it.
TEST(Tasks_BadConfig, GroupOverrideErrorsPointIntoTheGroupFile) {
  TempDir d;
  d.write("t.yaml", kTask);
  d.write("g.yaml", "group: g\ntask:\n  - t\nfrobkey: 1\n");
  std::string e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown task field 'frobkey'"), std::string::npos) << e;
  d.write("g.yaml", "group: g\ntask:\n  - task: t\n    num_fewshot: lots\n");
  e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:4:5: task[0].num_fewshot: field 'num_fewshot'"), std::string::npos)
      << e;  // at the member's own key
}

// A group member mapping's keys, and the values nested in them, are located at their own lines
// (of the group file, or of an inline group inside it), not at the group's `task:` line.
TEST(Tasks_BadConfig, GroupMemberKeysAreLocatedAtTheirOwnLines) {
  TempDir d;
  d.write("t.yaml", kTask);
  d.write("g.yaml",
          "group: g\n"
          "task:\n"
          "  - t\n"
          "  - task: t\n"
          "    task_alias: second\n"
          "    dataset_kwargs:\n"
          "      data_files:\n"
          "        test: [a.jsonl, 7]\n");
  std::string e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:8:"), std::string::npos) << e;
  EXPECT_NE(e.find("task[1].dataset_kwargs.data_files.test[1]"), std::string::npos) << e;
  // A member not in the index is an inline task: its keys at their lines too.
  d.write("g.yaml",
          "group: g\n"
          "task:\n"
          "  - task: inline_t\n"
          "    dataset_path: json\n"
          "    output_type: multiple_choice\n"
          "    repeats: 0\n");
  e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:6:5: task[0].repeats"), std::string::npos) << e;
  // An inline group's members: at their lines inside it.
  d.write("g.yaml",
          "group: g\n"
          "task:\n"
          "  - group: inner\n"
          "    task:\n"
          "      - t\n"
          "      - task: t\n"
          "        num_fewshot: many\n");
  e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:7:9: task[1].num_fewshot"), std::string::npos) << e;
  // A key the group passes down is located where the group wrote it, nested values included.
  d.write("g.yaml",
          "group: g\n"
          "task:\n"
          "  - t\n"
          "dataset_kwargs:\n"
          "  data_files:\n"
          "    test: 5\n");
  e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:6:5: dataset_kwargs.data_files.test"), std::string::npos) << e;
}

// The reference's index fails on a non-string tag and leaves the task out.
TEST(Tasks_BadConfig, NonStringTagIsRefusedAtItsLine) {
  TempDir d;
  for (const char* tag : {"5", "[a, 5]", "{a: 1}"}) {
    d.write("t.yaml", std::string(kTask) + "tag: " + tag + "\n");
    std::string e = selection_error(d, {"t"});
    EXPECT_NE(e.find("t.yaml:4"), std::string::npos) << tag << ": " << e;
    EXPECT_NE(e.find("expected a tag name or a list of tag names"), std::string::npos) << e;
  }
  d.write("t.yaml", std::string(kTask) + "tag: [a, b]\n");
  EXPECT_EQ(selection_error(d, {"t"}), "");
}

// The reference runs an empty group and reports nothing for it; lm-eval refuses it at its line
// (docs/fidelity.md), not with "no tasks found".
TEST(Tasks_BadConfig, EmptyGroupIsRefusedAtItsLine) {
  TempDir d;
  d.write("g.yaml", "group: g\ntask: []\n");
  std::string e = selection_error(d, {"g"});
  EXPECT_NE(e.find("g.yaml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("empty list"), std::string::npos) << e;
}
