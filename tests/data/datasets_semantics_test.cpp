// Local data files read as `datasets` 5.2 reads them: goldens from datasets itself
// (scripts/gen_datasets_semantics_goldens.py), data_files resolution and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "lmeval/data/csv_reader.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/data/split_reader.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Doc;

namespace {

fs::path fixtures() { return lmeval::testing::source_dir() / "tests/data/fixtures_datasets"; }

// Runs `body` with the working folder set to `dir` (datasets resolves data_files from there).
template <class F>
void in_folder(const fs::path& dir, F body) {
  fs::path old = fs::current_path();
  fs::current_path(dir);
  try {
    body();
  } catch (...) {
    fs::current_path(old);
    throw;
  }
  fs::current_path(old);
}

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() /
          ("lmeval_ds_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel, std::ios::binary) << text;
  }
};

std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const lmeval::UserError& e) {
    return std::string(e.what());
  }
  return "<no UserError>";
}

}  // namespace

TEST(DatasetsSemantics, SameRowsAsDatasetsLibrary) {
  ASSERT_TRUE(fs::is_directory(fixtures()));
  int cases = 0, errors = 0;
  for (const auto& entry : fs::directory_iterator(fixtures())) {
    if (!entry.is_directory()) continue;
    const fs::path& dir = entry.path();
    SCOPED_TRACE(dir.filename().string());
    Doc expected = Doc::parse(lmeval::testing::read_file(dir / "expected.json"));
    lmeval::DatasetRef ref;
    ref.path = expected["builder"].get<std::string>();
    ref.kwargs = expected["kwargs"];
    lmeval::LocalDataSource source;
    ++cases;
    in_folder(dir, [&] {
      if (expected.contains("error")) {
        ++errors;
        EXPECT_THROW(source.load_split(ref, "train"), lmeval::UserError)
            << "datasets raised " << expected["error"];
        return;
      }
      for (auto it = expected["splits"].begin(); it != expected["splits"].end(); ++it) {
        auto rows = source.load_split(ref, it.key());
        ASSERT_TRUE(rows.has_value()) << it.key();
        std::vector<std::string> got;
        for (const auto& r : *rows) got.push_back(lmeval::py::repr(r));
        EXPECT_EQ(got, it.value()["rows"].get<std::vector<std::string>>()) << it.key();
      }
    });
  }
  EXPECT_GE(cases, 55);
  EXPECT_GE(errors, 8);
}

TEST(DatasetsSemantics, ErrorsNameFileLineAndCause) {
  const fs::path d = fixtures();
  lmeval::SplitReadOptions csv{"csv", Doc::object(), "task.yaml"};
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "csv_too_many_fields/a.csv"}, csv);
            }).find("a.csv:3: Expected 2 fields in line 3, saw 3"),
            std::string::npos);
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "csv_unterminated_quote/a.csv"}, csv);
            }).find("EOF inside string starting at row 2"),
            std::string::npos);
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "csv_int_overflow/a.csv"}, csv);
            }).find("does not fit 64 bits"),
            std::string::npos);
  std::string two = user_error([&] {
    lmeval::read_split({d / "csv_two_files_int_float/a.csv", d / "csv_two_files_int_float/b.csv"},
                       csv);
  });
  EXPECT_NE(two.find("(a: double) differ from those of"), std::string::npos) << two;
  EXPECT_NE(two.find("(a: int64)"), std::string::npos) << two;
  Doc chunk = {{"chunksize", 2}};
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "csv_chunks_differ/a.csv"}, {"csv", chunk, "task.yaml"});
            }).find("Float value 3.500000 was truncated converting to int64"),
            std::string::npos);
  lmeval::SplitReadOptions json{"json", Doc::object(), "task.yaml"};
  std::string extra = user_error([&] {
    lmeval::read_split(
        {d / "json_two_files_extra_column/a.jsonl", d / "json_two_files_extra_column/b.jsonl"},
        json);
  });
  EXPECT_NE(extra.find("column 'c' is not in the first file"), std::string::npos) << extra;
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "json_two_files_null_column/a.jsonl",
                                  d / "json_two_files_null_column/b.jsonl"},
                                 json);
            }).find("Couldn't cast array of type int64 to null"),
            std::string::npos);
  EXPECT_NE(user_error([&] {
              lmeval::read_split({d / "json_field/a.json"},
                                 {"json", Doc{{"field", "rows"}}, "task.yaml"});
            }).find("no key \"rows\""),
            std::string::npos);
}

TEST(DatasetsSemantics, UnsupportedCsvOptionsAreRefusedByName) {
  std::string e = user_error([] {
    lmeval::CsvOptions::from_kwargs(Doc{{"thousands", ","}}, ',', "t.yaml");
  });
  EXPECT_NE(e.find("dataset_kwargs.thousands (a pandas read_csv option) is not supported"),
            std::string::npos)
      << e;
  e = user_error([] { lmeval::CsvOptions::from_kwargs(Doc{{"sep", "::"}}, ',', "t.yaml"); });
  EXPECT_NE(e.find("dataset_kwargs.sep \"::\" is not one character"), std::string::npos) << e;
  e = user_error([] {
    lmeval::CsvOptions::from_kwargs(Doc{{"encoding", "latin-1"}}, ',', "t.yaml");
  });
  EXPECT_NE(e.find("dataset_kwargs.encoding \"latin-1\" is not supported"), std::string::npos) << e;
  EXPECT_EQ(lmeval::CsvOptions::from_kwargs(Doc{{"delimiter", ";"}, {"sep", "\t"}}, ',', "t").sep,
            ';');
}

// datasets resolves a relative data_files entry from the working folder; where it finds nothing
// lm-eval reads the file beside the task's YAML (with a warning) and otherwise names both folders.
TEST(DatasetsSemantics, RelativeDataFilesFromWorkingFolderThenYamlFolder) {
  Scratch s;
  s.write("run/data.jsonl", "{\"a\": \"from working folder\"}\n");
  s.write("task/data.jsonl", "{\"a\": \"from yaml folder\"}\n");
  s.write("task/only_here.jsonl", "{\"a\": \"yaml only\"}\n");
  lmeval::LocalDataSource source;
  lmeval::DatasetRef ref;
  ref.path = "json";
  ref.base_dir = s.dir / "task";
  in_folder(s.dir / "run", [&] {
    ref.kwargs = {{"data_files", "data.jsonl"}};
    auto rows = source.load_split(ref, "train");
    ASSERT_TRUE(rows);
    EXPECT_EQ((*rows)[0]["a"], "from working folder");
    ref.kwargs = {{"data_files", {{"test", "only_here.jsonl"}}}};
    rows = source.load_split(ref, "test");
    ASSERT_TRUE(rows);
    EXPECT_EQ((*rows)[0]["a"], "yaml only");
    ref.kwargs = {{"data_files", {{"test", "missing/*.jsonl"}}}};
    std::string e = user_error([&] { source.load_split(ref, "test"); });
    EXPECT_NE(e.find("Unable to find 'missing/*.jsonl'"), std::string::npos) << e;
    EXPECT_NE(e.find("or to the task's folder"), std::string::npos) << e;
  });
}

TEST(DatasetsSemantics, GlobsSkipHiddenAndSortByPath) {
  Scratch s;
  s.write("d/b.jsonl", "");
  s.write("d/a.jsonl", "");
  s.write("d/.h.jsonl", "");
  s.write("d/.git/x.jsonl", "");
  s.write("d/sub/c.jsonl", "");
  auto names = [&](const std::string& pat) {
    std::vector<std::string> out;
    for (const auto& p : lmeval::resolve_data_pattern(pat, s.dir))
      out.push_back(p.lexically_relative(s.dir).generic_string());
    return out;
  };
  EXPECT_EQ(names("d/*.jsonl"), (std::vector<std::string>{"d/a.jsonl", "d/b.jsonl"}));
  EXPECT_EQ(names("d/**/*.jsonl"),
            (std::vector<std::string>{"d/a.jsonl", "d/b.jsonl", "d/sub/c.jsonl"}));
  EXPECT_EQ(names("d/.*.jsonl"), (std::vector<std::string>{"d/.h.jsonl"}));
  EXPECT_EQ(names("d/a.jsonl"), (std::vector<std::string>{"d/a.jsonl"}));
  EXPECT_TRUE(names("d/zz.jsonl").empty());
  EXPECT_TRUE(names("d").empty());  // a folder is no data file
}

TEST(DatasetsSemantics, BytesRenderAsPythonRendersThem) {
  Doc b = Doc::binary(std::vector<std::uint8_t>{'a', 0, '\'', 0xff, '\n'});
  EXPECT_EQ(lmeval::py::repr(b), "b\"a\\x00'\\xff\\n\"");
  EXPECT_EQ(lmeval::py::str(b), "b\"a\\x00'\\xff\\n\"");
  EXPECT_EQ(lmeval::py::json_dumps(Doc{{"x", b}}), "{\"x\": \"b\\\"a\\\\x00'\\\\xff\\\\n\\\"\"}");
}
