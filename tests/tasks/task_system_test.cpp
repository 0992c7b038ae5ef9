// Task system: fnmatch (vs Python), includes, cycles, unknown fields, selection and groups.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/task_config.hpp"
#include "lmeval/tasks/task_index.hpp"
#include "lmeval/tasks/task_selection.hpp"
#include "lmeval/tasks/task_yaml.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

using lmeval::testing::ScratchDir;

TEST(Tasks_Fnmatch, MatchesPythonFnmatchcase) {
  auto golden = Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() /
                                                       "tests/tasks/goldens/fnmatch.json"));
  ASSERT_GT(golden.size(), 100u);
  for (const auto& c : golden)
    EXPECT_EQ(lmeval::fnmatch(c["name"], c["pattern"]), c["match"].get<bool>())
        << c["name"] << " vs " << c["pattern"];
}

TEST(Tasks_Include, LocalKeysWinAndTaskListDropped) {
  ScratchDir d("lmeval_tasks_test");
  d.write(
      "base.yaml",
      "output_type: multiple_choice\ndoc_to_text: base\ntask_list: [x]\nmetadata:\n  version: 1\n");
  d.write("sub/t.yaml", "include: ../base.yaml\ntask: t\ndoc_to_text: local\n");
  auto y = lmeval::load_task_yaml(d.path() / "sub/t.yaml");
  EXPECT_EQ(y.value["doc_to_text"], "local");
  EXPECT_EQ(y.value["output_type"], "multiple_choice");
  EXPECT_FALSE(y.value.contains("task_list"));
  EXPECT_FALSE(y.value.contains("include"));
  // Where a key came from: the included file and its line.
  EXPECT_EQ(fs::path(y.where("output_type").file).filename(), "base.yaml");
  EXPECT_EQ(y.where("output_type").line, 1);
}

TEST(Tasks_Include, CycleIsDetectedWithItsPath) {
  ScratchDir d("lmeval_tasks_test");
  d.write("a.yaml", "include: b.yaml\ntask: a\n");
  d.write("b.yaml", "include: a.yaml\n");
  try {
    lmeval::load_task_yaml(d.path() / "a.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Include cycle at"), std::string::npos) << e.what();
  }
}

// The reference opens the included path and fails with IsADirectoryError.
TEST(Tasks_Include, IncludedFolderIsNamedAtTheLine) {
  ScratchDir d("lmeval_tasks_test");
  d.write("sub/x.yaml", "task: x\n");
  d.write("a.yaml", "task: a\ninclude: sub\n");
  try {
    lmeval::load_task_yaml(d.path() / "a.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find("included path sub is a folder"), std::string::npos)
        << e.what();
  }
}

TEST(Tasks_Include, MissingIncludeNamesTheLine) {
  ScratchDir d("lmeval_tasks_test");
  d.write("a.yaml", "task: a\ninclude: nope.yaml\n");
  try {
    lmeval::load_task_yaml(d.path() / "a.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_NE(std::string(e.what()).find("nope.yaml"), std::string::npos);
  }
}

TEST(Tasks_Config, UnknownFieldHasDidYouMeanAndLocation) {
  ScratchDir d("lmeval_tasks_test");
  d.write("t.yaml", "task: t\ndataset_path: json\ndoc_to_txt: '{{q}}'\n");
  auto y = lmeval::load_task_yaml(d.path() / "t.yaml");
  try {
    lmeval::make_task_config(y, y.value, "t.yaml");
    FAIL();
  } catch (const lmeval::UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("t.yaml:3"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'doc_to_text'"), std::string::npos) << m;
  }
}

TEST(Tasks_Config, GenerationDefaultsFollowPostInit) {
  ScratchDir d("lmeval_tasks_test");
  d.write("t.yaml",
          "task: t\ndataset_path: json\noutput_type: generate_until\nfewshot_delimiter: '\\n'\n");
  auto y = lmeval::load_task_yaml(d.path() / "t.yaml");
  auto cfg = lmeval::make_task_config(y, y.value, "t.yaml");
  EXPECT_EQ(cfg.get("generation_kwargs").dump(),
            R"({"temperature":0.0,"do_sample":false,"max_gen_toks":256,"until":["\\n"]})");
}

TEST(Tasks_Config, InvalidOutputTypeIsRejected) {
  ScratchDir d("lmeval_tasks_test");
  d.write("t.yaml", "task: t\ndataset_path: json\noutput_type: multi_choice\n");
  auto y = lmeval::load_task_yaml(d.path() / "t.yaml");
  EXPECT_THROW(lmeval::make_task_config(y, y.value, "t.yaml"), lmeval::UserError);
}

TEST(Tasks_Selection, GlobsGroupsTagsAndOverrides) {
  ScratchDir d("lmeval_tasks_test");
  d.write("a/t1.yaml", "task: t1\ndataset_path: json\ntag: [tg]\noutput_type: multiple_choice\n");
  d.write("a/t2.yaml", "task: t2\ndataset_path: json\ntag: tg\n");
  d.write("g.yaml",
          "group: g\ntask:\n  - tg\n  - task: t1\n    num_fewshot: 3\n    task_alias: inline\n"
          "num_fewshot: 2\naggregate_metric_list:\n  - metric: acc\nmetadata:\n  version: 2\n");
  setenv("LMEVAL_NO_INDEX_CACHE", "1", 1);
  auto index = lmeval::TaskIndex::build({d.path()});
  EXPECT_EQ(index.match("t*"), (std::vector<std::string>{"t1", "t2", "tg"}));
  EXPECT_EQ(index.find("t1")->output_type, "multiple_choice");
  // tg expands to t1, t2; the second member names t1 again within the same group, which the
  // reference rejects only across top-level items — here it is kept once.
  auto sel = lmeval::select_tasks(index, {"g"}, Json::object());
  ASSERT_EQ(sel.groups.size(), 1u);
  EXPECT_EQ(sel.groups[0].version, "2");
  ASSERT_GE(sel.tasks.size(), 2u);
  EXPECT_EQ(sel.tasks[0].name(), "t1");
  EXPECT_EQ(sel.tasks[0].get("num_fewshot"), 2);  // group-level override
  EXPECT_EQ(sel.tasks[1].name(), "t2");
  EXPECT_THROW(lmeval::select_tasks(index, {"nope"}, Json::object()), lmeval::UserError);
}

TEST(Tasks_Selection, UnknownNameSuggestsClosest) {
  ScratchDir d("lmeval_tasks_test");
  d.write("t.yaml", "task: arc_easy\ndataset_path: json\n");
  setenv("LMEVAL_NO_INDEX_CACHE", "1", 1);
  auto index = lmeval::TaskIndex::build({d.path()});
  try {
    lmeval::select_tasks(index, {"arc_esy"}, Json::object());
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Tasks not found: arc_esy"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("arc_easy"), std::string::npos);
  }
}

TEST(Tasks_Selection, MetadataMergedWithConfigSource) {
  ScratchDir d("lmeval_tasks_test");
  d.write("t.yaml", "task: t\ndataset_path: json\nmetadata:\n  version: 1.0\n");
  setenv("LMEVAL_NO_INDEX_CACHE", "1", 1);
  auto index = lmeval::TaskIndex::build({d.path()});
  auto sel = lmeval::select_tasks(index, {"t"}, Json::parse(R"({"pretrained":"m"})"));
  const Json& m = sel.tasks.at(0).get("metadata");
  EXPECT_EQ(m["version"], 1.0);
  EXPECT_EQ(m["pretrained"], "m");
  EXPECT_EQ(fs::path(m["config_source"].get<std::string>()).filename(), "t.yaml");
}

TEST(Tasks_Index, WarmCacheGivesTheColdEntriesAndNoticesChanges) {
  ScratchDir d("lmeval_tasks_test"), cache("lmeval_tasks_test_cache");
  d.write("a/t1.yaml", "task: t1\ndataset_path: json\ntag: [tg]\noutput_type: multiple_choice\n");
  d.write("b/g.yaml", "group: g\ntask: [t1]\n");
  d.write("c/broken.yaml", "task: [unclosed\n");
  unsetenv("LMEVAL_NO_INDEX_CACHE");
  setenv("XDG_CACHE_HOME", cache.path().c_str(), 1);
  auto summary = [](const lmeval::TaskIndex& index) {
    std::string s;
    for (const auto& n : index.all_names()) {
      const auto* e = index.find(n);
      s += n + "|" + std::to_string(static_cast<int>(e->kind)) + "|" + e->output_type + "|" +
           fs::path(e->yaml).filename().string() + "|" + std::to_string(e->tag_tasks.size()) + "\n";
    }
    return s + std::to_string(index.skipped().size());
  };
  const std::string expected = "g|1||g.yaml|0\nt1|0|multiple_choice|t1.yaml|0\ntg|2|||1\n1";
  auto cold = lmeval::TaskIndex::build({d.path()});
  EXPECT_EQ(summary(cold), expected);
  ASSERT_EQ(
      std::distance(fs::directory_iterator(cache.path() / "lm-eval"), fs::directory_iterator()), 1);
  EXPECT_EQ(summary(lmeval::TaskIndex::build({d.path()})), expected);  // from the cache
  // A changed file (other size) is read again.
  d.write("a/t1.yaml", "task: t1_renamed\ndataset_path: json\noutput_type: loglikelihood\n");
  EXPECT_EQ(summary(lmeval::TaskIndex::build({d.path()})),
            "g|1||g.yaml|0\nt1_renamed|0|loglikelihood|t1.yaml|0\n1");
  // A damaged cache file is not trusted.
  for (const auto& f : fs::directory_iterator(cache.path() / "lm-eval"))
    std::ofstream(f.path()) << "{\"version\": 2, ";
  EXPECT_EQ(summary(lmeval::TaskIndex::build({d.path()})),
            "g|1||g.yaml|0\nt1_renamed|0|loglikelihood|t1.yaml|0\n1");
  unsetenv("XDG_CACHE_HOME");
  setenv("LMEVAL_NO_INDEX_CACHE", "1", 1);
}
