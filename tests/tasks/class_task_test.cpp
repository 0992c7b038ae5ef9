// make_class_task (src/tasks/class_task.cpp): the native port of squadv2's SQuAD2 class
// (src/tasks/class_tasks/squadv2_task.cpp) against the reference's own class driven as lm-eval's
// Python plugin drives it, on fixture rows with fixed responses
// (tests/tasks/squadv2_class_goldens.json, scripts/gen_squadv2_class_goldens.py): the requests
// of build, and score's samples, results, config, version, higher_is_better and n-samples, every
// value with its JSON type and key order. Also: which object is built for which binding.
#include "lmeval/tasks/class_task.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "support/test_support.hpp"

namespace {

using lmeval::Doc;
using lmeval::Json;
namespace fs = std::filesystem;

class FixtureRows : public lmeval::DataSource {
 public:
  explicit FixtureRows(std::optional<std::vector<Doc>> rows) : rows_(std::move(rows)) {}
  std::optional<std::vector<Doc>> load_split(const lmeval::DatasetRef& ref,
                                             const std::string& split) override {
    EXPECT_EQ(ref.path, "lighteval/squad_v2");
    EXPECT_FALSE(ref.name.has_value());
    EXPECT_EQ(split, "validation");  // the train split (the class's few-shot pool) is not read
    if (split == "validation") return rows_;
    return std::nullopt;
  }
  std::string describe() const override { return "fixture rows"; }

 private:
  std::optional<std::vector<Doc>> rows_;
};

// The first place where `got` differs from `want`, telling int from float and key orders apart;
// "" when they are the same.
std::string difference(const Json& got, const Json& want, const std::string& path) {
  // Python has one int: signed and unsigned JSON integers are the same type here.
  if (got.is_number_integer() && want.is_number_integer())
    return got == want ? "" : path + ": " + got.dump() + " vs " + want.dump();
  if (got.type() != want.type()) return path + ": " + got.dump() + " vs " + want.dump();
  if (got.is_number_float() && got.get<double>() != want.get<double>())
    return path + ": " + got.dump() + " vs " + want.dump();
  if (got.is_array()) {
    if (got.size() != want.size()) return path + ": size " + std::to_string(got.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (auto d = difference(got[i], want[i], path + "/" + std::to_string(i)); !d.empty())
        return d;
    return "";
  }
  if (got.is_object()) {
    if (got.size() != want.size()) return path + ": keys " + got.dump().substr(0, 300);
    for (auto g = got.begin(), w = want.begin(); g != got.end(); ++g, ++w) {
      if (g.key() != w.key()) return path + ": key " + g.key() + " vs " + w.key();
      if (auto d = difference(g.value(), w.value(), path + "/" + g.key()); !d.empty()) return d;
    }
    return "";
  }
  return got == want ? "" : path + ": " + got.dump() + " vs " + want.dump();
}

lmeval::TaskConfig class_config(Json ref) {
  lmeval::TaskConfig cfg;
  cfg.set(lmeval::TaskField::task, "squadv2");
  cfg.source.path = "tasks/squadv2/squadv2.yaml";
  ref["file"] = "tasks/squadv2/squadv2.yaml";
  ref["line"] = 2;
  cfg.python_class = std::move(ref);
  return cfg;
}

Json goldens() {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" /
                   "squadv2_class_goldens.json");
  return Json::parse(in);
}

TEST(ClassTask, Squadv2PortMatchesTheReferenceClass) {
  const Json g = goldens();
  ASSERT_EQ(g["cases"].size(), 4u);
  FixtureRows rows(g["rows"].get<std::vector<Doc>>());
  const auto cfg = class_config({{"!function", "task.SQuAD2"}, {"dir", "squadv2"}});
  for (const auto& c : g["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto task = lmeval::make_class_task(cfg, rows, "");
    Json n = task->call("configure", {{"num_fewshot", nullptr},
                                      {"gen_kwargs", nullptr},
                                      {"predict_only", false},
                                      {"fewshot_seed", 1234}});
    EXPECT_EQ(difference(n, Json(0), "num_fewshot"), "");
    Json built = task->call("build", {{"limit", c["limit"]},
                                      {"samples", c["samples"]},
                                      {"system_instruction", c["system_instruction"]},
                                      {"fewshot_seed", nullptr}});
    EXPECT_EQ(difference(built, c["requests"], "requests"), "");
    Json score = task->call(
        "score", {{"resps", c["resps"]}, {"log_samples", true}, {"bootstrap_iters", 100000}});
    EXPECT_EQ(difference(score, c["score"], "score"), "");
  }
}

TEST(ClassTask, Squadv2PortRefusesShotsAsTheReferenceRaises) {
  const Json g = goldens();
  FixtureRows rows(g["rows"].get<std::vector<Doc>>());
  auto task = lmeval::make_class_task(
      class_config({{"!function", "task.SQuAD2"}, {"dir", "squadv2"}}), rows, "");
  EXPECT_EQ(task->call("configure", {{"num_fewshot", 2},
                                     {"gen_kwargs", nullptr},
                                     {"predict_only", false},
                                     {"fewshot_seed", nullptr}}),
            Json(2));
  try {
    task->call("build", {{"limit", 1},
                         {"samples", nullptr},
                         {"system_instruction", nullptr},
                         {"fewshot_seed", nullptr}});
    FAIL() << "expected the reference's TypeError";
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("TypeError: SQuAD2.doc_to_text() takes 2 positional "
                                         "arguments but 3 were given"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClassTask, OnlyARegisteredModuleSourceGetsTheNativePort) {
  FixtureRows rows(goldens()["rows"].get<std::vector<Doc>>());
  // A class of the registered module that has no port.
  EXPECT_THROW(lmeval::make_class_task(
                   class_config({{"!function", "task.Other"}, {"dir", "squadv2"}}), rows, ""),
               lmeval::UserError);
  // An edited task.py (bind_function_sources found no registered sha256): the reference's class
  // in Python, which cannot start here (no plugin in LMEVAL_PLUGIN_DIR, or no such module).
  const fs::path empty =
      fs::temp_directory_path() / ("class_task_test_" + std::to_string(getpid()));
  fs::create_directories(empty);
  setenv("LMEVAL_PLUGIN_DIR", empty.c_str(), 1);
  EXPECT_THROW(
      lmeval::make_class_task(class_config({{"!function", "task.SQuAD2"},
                                            {"dir", ""},
                                            {"python_module", (empty / "task.py").string()}}),
                              rows, ""),
      lmeval::UserError);
  unsetenv("LMEVAL_PLUGIN_DIR");
  fs::remove_all(empty);
}

// Data that is not on this machine is DataUnavailable (validate notes it); an empty split is a
// plain UserError (validate reports it as a problem of the task).
TEST(ClassTask, Squadv2PortTellsAbsentDataFromEmptyData) {
  const auto cfg = class_config({{"!function", "task.SQuAD2"}, {"dir", "squadv2"}});
  FixtureRows absent(std::nullopt);
  try {
    lmeval::make_class_task(cfg, absent, "");
    FAIL() << "expected DataUnavailable";
  } catch (const lmeval::DataUnavailable& e) {
    EXPECT_NE(e.message().find("lighteval/squad_v2"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("is not in fixture rows"), std::string::npos) << e.what();
  }
  FixtureRows empty(std::vector<Doc>{});
  try {
    lmeval::make_class_task(cfg, empty, "");
    FAIL() << "expected UserError";
  } catch (const lmeval::DataUnavailable& e) {
    FAIL() << "an empty split is not absent data: " << e.what();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(e.message().find("is empty"), std::string::npos) << e.what();
  }
}

}  // namespace
