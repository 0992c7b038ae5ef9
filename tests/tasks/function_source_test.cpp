// `!function` references reach a C++ port only for the exact module source the port reproduces
// (issue 15): a user folder named like a built-in one, with its own utils.py, needs Python.
#include "lmeval/tasks/function_source.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/tasks/function_registry.hpp"
#include "lmeval/tasks/python_functions.hpp"
#include "lmeval/tasks/task_yaml.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

namespace {

struct Folder {
  fs::path path;
  explicit Folder(const std::string& name) {
    path = fs::temp_directory_path() /
           ("lmeval_fnsrc_" + std::to_string(getpid()) + "_" + std::to_string(counter++)) / name;
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path.parent_path()); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
  static inline int counter = 0;
};

const char* kYaml =
    "task: my_hellaswag\nprocess_docs: !function utils.process_docs\ndoc_to_text: '{{query}}'\n";
const char* kUtils = "def process_docs(dataset):\n    return dataset.filter(lambda d: d['x'])\n";

}  // namespace

TEST(Tasks_FunctionSource, UserFolderNamedLikeBuiltinWithOwnUtilsNeedsPython) {
  Folder f("hellaswag");  // the name of a built-in family whose process_docs has a port
  f.write("h.yaml", kYaml);
  f.write("utils.py", kUtils);
  auto y = lmeval::load_task_yaml(f.path / "h.yaml");
  const Json& ref = y.value["process_docs"];
  EXPECT_EQ(ref["dir"], "");
  EXPECT_EQ(ref["python_module"], (f.path / "utils.py").string());
  try {
    lmeval::resolve_function_ref(ref);
    FAIL() << "a port was used for a different utils.py";
  } catch (const lmeval::UserError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("`!function utils.process_docs` needs Python"), std::string::npos) << what;
    EXPECT_NE(what.find((f.path / "utils.py").string()), std::string::npos) << what;
    EXPECT_EQ(e.where().file, (f.path / "h.yaml").string());
    EXPECT_EQ(e.where().line, 2);
  }
}

TEST(Tasks_FunctionSource, MissingModuleOutsideBuiltinsNeedsPython) {
  Folder f("hellaswag");
  f.write("h.yaml", kYaml);  // no utils.py: the reference would import `utils` from sys.path
  auto y = lmeval::load_task_yaml(f.path / "h.yaml");
  EXPECT_EQ(y.value["process_docs"]["python_module"], (f.path / "utils.py").string());
  EXPECT_THROW(lmeval::resolve_function_ref(y.value["process_docs"]), lmeval::UserError);
}

TEST(Tasks_FunctionSource, ExactSourceSelectsThePort) {
  Folder f("any_name");  // the folder's name plays no part
  f.write("h.yaml", kYaml);
  f.write("utils.py", kUtils);
  std::vector<lmeval::FunctionSource> sources = {
      {lmeval::sha256_hex(kUtils), "hellaswag", "hellaswag/utils.py"}};
  Json config = lmeval::load_yaml(f.path / "h.yaml").value;
  lmeval::bind_function_sources(config, f.path / "h.yaml", "", sources);
  EXPECT_EQ(config["process_docs"]["dir"], "hellaswag");
  EXPECT_FALSE(config["process_docs"].contains("python_module"));
  EXPECT_NO_THROW(lmeval::resolve_function_ref(config["process_docs"]));
  // A dotted module path is a sub-folder, as in the reference: pkg.mod.fn -> pkg/mod.py.
  f.write("pkg/mod.py", kUtils);
  Json nested =
      lmeval::parse_yaml("process_docs: !function pkg.mod.process_docs\n", f.path / "n.yaml").value;
  lmeval::bind_function_sources(nested, f.path / "n.yaml", "", sources);
  EXPECT_EQ(nested["process_docs"]["dir"], "hellaswag");
}

// A module whose source a family ports, with a function the family has no port of: that function
// is the reference's Python (here, where the test binary has no Python plugin beside it, the
// "needs Python" error naming the module), never "unknown function", while its ported functions
// stay C++.
TEST(Tasks_FunctionSource, UnportedFunctionOfAPortedModuleRunsInPython) {
  Folder f("any_name");
  const std::string utils = std::string(kUtils) + "\ndef not_ported(doc):\n    return 'py'\n";
  f.write("utils.py", utils);
  std::vector<lmeval::FunctionSource> sources = {
      {lmeval::sha256_hex(utils), "hellaswag", "hellaswag/utils.py"}};
  Json config = lmeval::parse_yaml(
                    "process_docs: !function utils.process_docs\n"
                    "doc_to_text: !function utils.not_ported\n",
                    f.path / "h.yaml")
                    .value;
  lmeval::bind_function_sources(config, f.path / "h.yaml", "", sources);
  EXPECT_EQ(config["doc_to_text"]["dir"], "hellaswag");
  EXPECT_EQ(config["doc_to_text"]["port_module"], (f.path / "utils.py").string());
  EXPECT_NO_THROW(lmeval::resolve_function_ref(config["process_docs"]));
  if (lmeval::python_plugin_present()) GTEST_SKIP() << "a Python plugin is reachable here";
  try {
    lmeval::resolve_function_ref(config["doc_to_text"]);
    FAIL() << "an unported function of a ported module resolved without Python";
  } catch (const lmeval::UserError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("`!function utils.not_ported` needs Python"), std::string::npos) << what;
    EXPECT_NE(what.find((f.path / "utils.py").string()), std::string::npos) << what;
    EXPECT_EQ(what.find("unknown function"), std::string::npos) << what;
    EXPECT_EQ(e.where().line, 2);
  }
}

TEST(Tasks_FunctionSource, BuiltinFolderWithoutModuleUsesItsRegisteredPorts) {
  Folder f("hellaswag");
  f.write("h.yaml", kYaml);
  Json config = lmeval::load_yaml(f.path / "h.yaml").value;
  lmeval::bind_function_sources(config, f.path / "h.yaml", f.path.parent_path());
  EXPECT_EQ(config["process_docs"]["dir"], "hellaswag");
  EXPECT_NO_THROW(lmeval::resolve_function_ref(config["process_docs"]));
  // The repository's own built-in tasks ship no .py files and keep working. The test binary
  // lives under build/tests, where the binary-relative lookup finds no tasks/ folder, so the
  // built-in folder is named the way an installed binary's user would name it.
  ::setenv("LMEVAL_TASKS_DIR", (lmeval::testing::source_dir() / "tasks").c_str(), 1);
  auto builtin =
      lmeval::load_task_yaml(lmeval::testing::source_dir() / "tasks/hellaswag/hellaswag.yaml");
  EXPECT_EQ(builtin.value["process_docs"]["dir"], "hellaswag");
}

TEST(Tasks_FunctionSource, TableHoldsTheReferenceModulesWhenTheVenvIsPresent) {
  const auto& sources = lmeval::reference_function_sources();
  ASSERT_GE(sources.size(), 13u);
  const char* env = std::getenv("LMEVAL_REF_VENV");
  fs::path venv = env && *env ? fs::path(env) : lmeval::testing::source_dir() / ".venv-ref";
  fs::path tasks;
  for (const char* py : {"lib/python3.11", "lib/python3.12", "lib/python3.13", "lib/python3.10"})
    if (fs::exists(venv / py / "site-packages/lm_eval/tasks"))
      tasks = venv / py / "site-packages/lm_eval/tasks";
  if (tasks.empty()) GTEST_SKIP() << "no reference venv at " << venv << " (set LMEVAL_REF_VENV)";
  for (const auto& s : sources)
    EXPECT_EQ(lmeval::sha256_hex(lmeval::testing::read_file(tasks / s.reference_path)), s.sha256)
        << s.reference_path
        << " changed: rerun scripts/gen_function_sources.py and recheck the port";
}

// A port of a module's `def` shows that def's source in the results' configs, as the reference's
// inspect.getsource does; a partial or a name bound again shows no source (the reference's str()
// of it holds an address). Expected values from CPython's inspect
// (tests/tasks/def_source_golden.json, scripts/gen_def_source_goldens.py).
TEST(Tasks_FunctionSource, PortsOfDefsCarryTheSourceInspectGives) {
  std::ifstream in(lmeval::testing::source_dir() / "tests" / "tasks" / "def_source_golden.json");
  const Json golden = Json::parse(in);
  size_t with_source = 0, without = 0;
  for (const auto& m : golden) {
    Folder f("mod");
    const std::string text = m["module"];
    f.write("utils.py", text);
    const std::vector<lmeval::FunctionSource> sources = {
        {lmeval::sha256_hex(text), "fam", m["path"]}};
    for (const auto& [name, want] : m["cases"].items()) {
      Json config = {{"process_docs", {{"!function", "utils." + name}}}};
      lmeval::bind_function_sources(config, f.path / "t.yaml", "", sources);
      const Json& ref = config["process_docs"];
      EXPECT_EQ(ref["dir"], "fam");
      if (want.is_null()) {
        EXPECT_FALSE(ref.contains("source")) << m["path"] << ": " << name;
        ++without;
      } else {
        EXPECT_EQ(ref.value("source", ""), want.get<std::string>()) << m["path"] << ": " << name;
        ++with_source;
      }
    }
  }
  EXPECT_GE(with_source, 40u);
  EXPECT_GE(without, 40u);
}
