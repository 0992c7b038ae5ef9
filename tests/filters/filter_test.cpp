// Tests of the filters module against the reference's filter classes
// (scripts/gen_filter_goldens.py) and of its configuration errors.
#include "lmeval/filters/filter.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "support/test_support.hpp"

namespace lmeval {
namespace {

std::vector<Json> load_goldens() {
  std::ifstream in(testing::source_dir() / "tests/filters/goldens/filter_goldens.jsonl");
  std::vector<Json> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

std::vector<const Json*> doc_ptrs(const Json& docs) {
  std::vector<const Json*> out;
  for (const Json& d : docs) out.push_back(&d);
  return out;
}

SourceLocation at(const std::string& field) {
  SourceLocation where;
  where.file = "task.yaml";
  where.field = field;
  return where;
}

TEST(Filters_Reference, MatchesReferenceGoldens) {
  std::vector<Json> cases = load_goldens();
  ASSERT_GT(cases.size(), 50u) << "tests/filters/goldens/filter_goldens.jsonl missing or short";
  size_t values = 0, identical = 0, failures = 0;
  std::ostringstream report;
  auto fail = [&](const Json& c, const std::string& msg) {
    if (++failures <= 30) report << c["case"].get<std::string>() << ": " << msg << "\n";
  };
  for (const Json& c : cases) {
    std::vector<Json> resps(c["resps"].begin(), c["resps"].end());
    std::vector<const Json*> docs = doc_ptrs(c["docs"]);
    if (c.contains("config_error")) {
      // Unknown filters, bad kwargs and bad regexes are caught when the pipeline is built.
      try {
        FilterEnsemble::from_config(c["entry"], at("filter_list[0]"));
        fail(c, "expected a UserError (reference: " + c["config_error"].get<std::string>() + ")");
      } catch (const UserError&) {
      }
      continue;
    }
    if (c.contains("runtime_error")) {
      try {
        FilterEnsemble::from_config(c["entry"], at("filter_list[0]")).apply(resps, docs);
        fail(c, "expected an error (reference: " + c["runtime_error"].get<std::string>() + ")");
      } catch (const UserError&) {
      } catch (const RuntimeError&) {
      }
      continue;
    }
    std::vector<Json> got;
    try {
      got = FilterEnsemble::from_config(c["entry"], at("filter_list[0]")).apply(resps, docs);
    } catch (const std::exception& e) {
      fail(c, std::string("threw ") + e.what());
      continue;
    }
    const Json& want = c["expected"];
    if (got.size() != want.size()) {
      fail(c, "instance count " + std::to_string(got.size()));
      continue;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      ++values;
      if (got[i] == want[i])
        ++identical;
      else
        fail(c,
             "instance " + std::to_string(i) + " want " + want[i].dump() + " got " + got[i].dump());
    }
  }
  std::cout << "[filter goldens] " << cases.size() << " cases, " << identical << "/" << values
            << " filtered values identical\n";
  EXPECT_EQ(failures, 0u) << report.str();
}

// The reference's own samples (../shared/goldens, made with the hashfake model): every logged
// doc's `resps` through the task's pipeline must give its `filtered_resps`.
TEST(Filters_Reference, ReproducesSharedSamples) {
  LMEVAL_REQUIRE_SHARED("goldens/samples");
  LMEVAL_REQUIRE_SHARED("spec/lm_eval_reference_tasks_configs.json");
  Json configs = Json::parse(
      testing::read_file(testing::shared_dir() / "spec/lm_eval_reference_tasks_configs.json"));
  size_t docs = 0, identical = 0, failures = 0;
  std::ostringstream report;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(testing::shared_dir() / "goldens/samples")) {
    if (entry.path().extension() != ".jsonl") continue;
    std::string task = entry.path().stem().string();
    task = task.substr(0, task.find("__"));
    std::map<std::string, FilterEnsemble> pipelines;
    const Json* task_config = configs["tasks"].contains(task) ? &configs["tasks"][task] : nullptr;
    if (task_config && task_config->contains("filter_list") &&
        !(*task_config)["filter_list"].is_null()) {
      const Json& list = (*task_config)["filter_list"];
      for (size_t i = 0; i < list.size(); ++i) {
        auto ens =
            FilterEnsemble::from_config(list[i], at("filter_list[" + std::to_string(i) + "]"));
        pipelines.emplace(ens.name(), ens);
      }
    } else {
      pipelines.emplace("none", FilterEnsemble::default_none());
    }
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      Json sample = Json::parse(line);
      auto it = pipelines.find(sample["filter"].get<std::string>());
      if (it == pipelines.end()) {
        ++failures;
        report << entry.path().filename() << ": no pipeline " << sample["filter"] << "\n";
        continue;
      }
      std::vector<Json> resps(sample["resps"].begin(), sample["resps"].end());
      std::vector<const Json*> doc_list(resps.size(), &sample["doc"]);
      Json got = it->second.apply(resps, doc_list);
      ++docs;
      if (got == sample["filtered_resps"]) {
        ++identical;
      } else if (++failures <= 20) {
        report << entry.path().filename() << " doc " << sample["doc_id"] << " filter "
               << sample["filter"] << ": want " << sample["filtered_resps"].dump() << " got "
               << got.dump() << "\n";
      }
    }
  }
  std::cout << "[shared samples] " << identical << "/" << docs
            << " docs' filtered_resps identical\n";
  EXPECT_GT(docs, 100u);
  EXPECT_EQ(failures, 0u) << report.str();
}

TEST(Filters_Config, UnknownFilterNamesFieldAndSuggests) {
  Json entry = Json::parse(R"({"name": "strict-match",
      "filter": [{"function": "regex"}, {"function": "take_frist"}]})");
  try {
    FilterEnsemble::from_config(entry, at("filter_list[1]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.where().field, "filter_list[1].filter[1].function");
    EXPECT_NE(msg.find("task.yaml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("take_frist"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'take_first'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("majority_vote"), std::string::npos) << msg;  // the known names
  }
}

TEST(Filters_Config, BadKwargsNameTheField) {
  Json entry = Json::parse(
      R"J({"name": "x", "filter": [{"function": "regex", "regex_patern": "(\\d+)"}]})J");
  try {
    FilterEnsemble::from_config(entry, at("filter_list[0]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "filter_list[0].filter[0].regex_patern");
    EXPECT_NE(std::string(e.what()).find("did you mean 'regex_pattern'"), std::string::npos)
        << e.what();
  }
  entry = Json::parse(R"({"name": "x", "filter": [{"function": "regex", "group_select": "1"}]})");
  try {
    FilterEnsemble::from_config(entry, at("filter_list[0]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "filter_list[0].filter[0].group_select");
  }
  entry = Json::parse(R"({"name": "x", "filter": [{"function": "take_first_k"}]})");
  EXPECT_THROW(FilterEnsemble::from_config(entry, at("filter_list[0]")), UserError);
  entry = Json::parse(R"({"name": "x", "filter": [{"function": "map", "mapping_dict": [1]}]})");
  EXPECT_THROW(FilterEnsemble::from_config(entry, at("filter_list[0]")), UserError);
}

TEST(Filters_Config, BadRegexNamesPatternAndPosition) {
  Json entry = Json::parse(R"J({"name": "x", "filter": [{"function": "regex",
      "regex_pattern": "#### (\\-?[0-9"}]})J");
  try {
    FilterEnsemble::from_config(entry, at("filter_list[0]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.where().field, "filter_list[0].filter[0].regex_pattern");
    EXPECT_NE(msg.find("#### (\\-?[0-9"), std::string::npos) << msg;
    EXPECT_NE(msg.find("position"), std::string::npos) << msg;
  }
  entry = Json::parse(R"J({"name": "x", "filter": [{"function": "multi_choice_regex",
      "regexes_to_ignore": [",", "(a"]}]})J");
  try {
    FilterEnsemble::from_config(entry, at("filter_list[0]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().field, "filter_list[0].filter[0].regexes_to_ignore[1]");
  }
}

TEST(Filters_Config, MalformedEntries) {
  for (const char* text :
       {R"([1])", R"({"filter": []})", R"({"name": 3, "filter": []})", R"({"name": "a"})",
        R"({"name": "a", "filter": {"function": "take_first"}})",
        R"({"name": "a", "filter": ["take_first"]})", R"({"name": "a", "filter": [{"k": 1}]})",
        R"({"name": "a", "filter": [{"function": 7}]})",
        R"({"name": "a", "filter": [{"function": "regex", "regex_pattern": 5}]})"}) {
    EXPECT_THROW(FilterEnsemble::from_config(Json::parse(text), at("filter_list[0]")), UserError)
        << text;
  }
}

TEST(Filters_Ensemble, DefaultNoneTakesFirst) {
  FilterEnsemble none = FilterEnsemble::default_none();
  EXPECT_EQ(none.name(), "none");
  std::vector<Json> resps = {Json::parse(R"([[-1.5, true]])"), Json::parse(R"([-2.0])"),
                             Json::parse(R"(["text", "other"])")};
  Json doc = Json::object();
  std::vector<const Json*> docs(3, &doc);
  std::vector<Json> out = none.apply(resps, docs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], Json::parse("[-1.5, true]"));
  EXPECT_EQ(out[1], -2.0);
  EXPECT_EQ(out[2], "text");
  // Pipelines start from the raw resps each time: the input is untouched.
  EXPECT_EQ(resps[2], Json::parse(R"(["text", "other"])"));
}

TEST(Filters_Ensemble, EmptyTask) {
  FilterEnsemble none = FilterEnsemble::default_none();
  EXPECT_TRUE(none.apply({}, {}).empty());
}

TEST(Filters_Registry, BuiltinNamesAndCustomFilters) {
  register_builtin_filters();
  register_builtin_filters();  // idempotent
  FilterRegistry& r = FilterRegistry::instance();
  for (const char* name :
       {"take_first", "take_first_k", "majority_vote", "regex", "regex_pos", "remove_whitespace",
        "lowercase", "uppercase", "map", "format_span", "multi_choice_regex", "custom"})
    EXPECT_TRUE(r.contains(name)) << name;
  EXPECT_FALSE(r.contains("decontaminate"));  // not imported by the reference

  // `custom` with a registered C++ filter function named by a !function reference.
  r.add_function("mytask/utils.first_upper",
                 [](std::vector<Json> resps, const std::vector<const Json*>&) {
                   for (Json& x : resps) x = "<" + x[0].get<std::string>() + ">";
                   return resps;
                 });
  Json entry = Json::parse(R"({"name": "c", "filter": [{"function": "custom",
      "filter_fn": {"!function": "utils.first_upper", "dir": "mytask"}}]})");
  auto ens = FilterEnsemble::from_config(entry, at("filter_list[0]"));
  Json doc;
  EXPECT_EQ(ens.apply({Json::parse(R"(["a","b"])")}, {&doc})[0], "<a>");
  entry["filter"][0]["filter_fn"]["dir"] = "othertask";
  EXPECT_THROW(FilterEnsemble::from_config(entry, at("filter_list[0]")), UserError);

  // A filter class from a task's utils.py, named with `function: !function utils.X`.
  r.add("mytask/utils.Shout", [](const Json&, const SourceLocation&) {
    struct Shout : Filter {
      std::vector<Json> apply(std::vector<Json> resps,
                              const std::vector<const Json*>&) const override {
        for (Json& x : resps) x = x[0].get<std::string>() + "!";
        return resps;
      }
    };
    return std::make_unique<Shout>();
  });
  entry = Json::parse(R"({"name": "s", "filter": [
      {"function": {"!function": "utils.Shout", "dir": "mytask", "file": "t.yaml", "line": 3}}]})");
  EXPECT_EQ(FilterEnsemble::from_config(entry, at("filter_list[0]"))
                .apply({Json::parse(R"(["hi"])")}, {&doc})[0],
            "hi!");
  entry["filter"][0]["function"]["!function"] = "utils.Missing";
  try {
    FilterEnsemble::from_config(entry, at("filter_list[0]"));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, "t.yaml");
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(std::string(e.what()).find("utils.Missing"), std::string::npos);
  }
}

TEST(Filters_Runtime, ErrorsSayWhatTheReferenceDoes) {
  Json entry = Json::parse(R"J({"name": "flex", "filter": [{"function": "regex",
      "regex_pattern": "(\\d+)", "group_select": 3}]})J");
  auto ens = FilterEnsemble::from_config(entry, at("filter_list[0]"));
  Json doc;
  try {
    ens.apply({Json::parse(R"(["1 2"])")}, {&doc});
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("IndexError"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmeval
