// Parquet reader: pyarrow-written fixtures, the Hub's MMLU-Pro files, column projection, bad input.
#include "lmeval/data/parquet_reader.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/data/thrift_compact.hpp"
#include "support/test_support.hpp"

#include <cmath>
#include <fstream>
#include <map>

namespace fs = std::filesystem;
using lmeval::Doc;
using lmeval::parquet::ParquetFile;
using lmeval::parquet::ReadOptions;

namespace {

fs::path fixtures() { return lmeval::testing::source_dir() / "tests/data/fixtures_parquet"; }

std::vector<Doc> read_jsonl(const fs::path& p) {
  std::vector<Doc> rows;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(Doc::parse(line));
  return rows;
}

// The JSON conventions of scripts/gen_parquet_fixtures.py for values JSON cannot hold.
Doc normalise(const Doc& v) {
  if (v.is_binary()) {
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (uint8_t b : v.get_binary()) {
      s += hex[b >> 4];
      s += hex[b & 15];
    }
    return Doc{{"$bytes", s}};
  }
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    double d = v.get<double>();
    return std::isnan(d) ? Doc("NaN") : Doc(d > 0 ? "Infinity" : "-Infinity");
  }
  if (v.is_object()) {
    Doc o = Doc::object();
    for (auto it = v.begin(); it != v.end(); ++it) o[it.key()] = normalise(it.value());
    return o;
  }
  if (v.is_array()) {
    Doc a = Doc::array();
    for (const auto& x : v) a.push_back(normalise(x));
    return a;
  }
  return v;
}

// Compares keys in order (ordered_json equality ignores nothing) and reports the first difference.
void expect_rows(const std::vector<Doc>& got, const std::vector<Doc>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    Doc g = normalise(got[i]);
    if (g != want[i] || g.dump() != want[i].dump()) {
      if (bad++ < 3)
        ADD_FAILURE() << what << " row " << i << "\n got: " << g.dump()
                      << "\nwant: " << want[i].dump();
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << "/" << got.size() << " rows differ";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(ParquetFixtures, EveryFileMatchesPyarrow) {
  ASSERT_TRUE(fs::exists(fixtures())) << "run scripts/gen_parquet_fixtures.py";
  std::map<std::string, std::vector<Doc>> expected;
  size_t files = 0, rows = 0;
  for (const auto& e : fs::directory_iterator(fixtures())) {
    if (e.path().extension() != ".parquet") continue;
    std::string stem = e.path().stem().string();
    std::string group = stem.substr(0, stem.find('_'));
    if (!expected.count(group))
      expected[group] = read_jsonl(fixtures() / (group + ".expected.jsonl"));
    auto got = lmeval::parquet::read_parquet(e.path());
    expect_rows(got, expected[group], stem);
    ++files;
    rows += got.size();
  }
  EXPECT_GE(files, 30u);
  std::cout << "[parquet] " << files << " fixture files, " << rows << " rows compared\n";
}

TEST(ParquetFixtures, MultipleRowGroupsAndMetadata) {
  auto f = ParquetFile::open(fixtures() / "flat_dict_snappy_v2.parquet");
  EXPECT_EQ(f.num_rows(), 200);
  EXPECT_EQ(f.num_row_groups(), 2u);  // row_group_size=128
  EXPECT_EQ(f.read_row_group(0).size(), 128u);
  EXPECT_EQ(f.read_row_group(1).size(), 72u);
  auto names = f.column_names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "b");
  EXPECT_EQ(names[1], "i8");
  EXPECT_NE(f.created_by().find("parquet-cpp"), std::string::npos);
}

TEST(ParquetFixtures, ReadsOnlyRequestedColumnsInSchemaOrder) {
  auto want = read_jsonl(fixtures() / "nested.expected.jsonl");
  ReadOptions opt;
  opt.columns = {"choices", "id"};
  auto got = lmeval::parquet::read_parquet(fixtures() / "nested_zstd_v2.parquet", opt);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), 2u);
    EXPECT_EQ(got[i].begin().key(), "id");
    EXPECT_EQ(got[i]["id"], want[i]["id"]);
    EXPECT_EQ(got[i]["choices"], want[i]["choices"]);
  }
  opt.columns = {"nope"};
  EXPECT_THROW(lmeval::parquet::read_parquet(fixtures() / "nested_zstd_v2.parquet", opt),
               lmeval::UserError);
}

TEST(ParquetFixtures, EmptyTable) {
  auto f = ParquetFile::open(fixtures() / "empty_table.parquet");
  EXPECT_EQ(f.num_rows(), 0);
  EXPECT_TRUE(f.read_all().empty());
}

TEST(ParquetHub, MmluProValidationMatchesJsonlTwin) {
  LMEVAL_REQUIRE_SHARED("data/mmlu_pro/parquet/validation-00000-of-00001.parquet");
  auto dir = lmeval::testing::shared_dir() / "data/mmlu_pro/parquet";
  auto got = lmeval::parquet::read_parquet(dir / "validation-00000-of-00001.parquet");
  expect_rows(got, read_jsonl(dir / "validation.jsonl"), "mmlu_pro validation");
  EXPECT_EQ(got.size(), 70u);
}

TEST(ParquetHub, MmluProTestMatchesJsonlTwin) {
  LMEVAL_REQUIRE_SHARED("data/mmlu_pro/parquet/test-00000-of-00001.parquet");
  LMEVAL_REQUIRE_SHARED("hf_data/TIGER-Lab/MMLU-Pro/default/test.jsonl");
  auto sd = lmeval::testing::shared_dir();
  auto got =
      lmeval::parquet::read_parquet(sd / "data/mmlu_pro/parquet/test-00000-of-00001.parquet");
  expect_rows(got, read_jsonl(sd / "hf_data/TIGER-Lab/MMLU-Pro/default/test.jsonl"),
              "mmlu_pro test");
  EXPECT_EQ(got.size(), 12032u);
}

// ---- bad input: always a UserError naming the file (and column / row group where known) ----

namespace {
std::string error_of(const std::string& data, const std::string& name = "bad.parquet") {
  try {
    ParquetFile::from_buffer(data, name).read_all();
  } catch (const lmeval::UserError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(ParquetBadInput, BadMagicAndTruncation) {
  std::string good = slurp(fixtures() / "flat_dict_zstd_v1.parquet");
  EXPECT_NE(error_of("").find("bad.parquet"), std::string::npos);
  EXPECT_NE(error_of("hello world, not parquet").find("not a parquet file"), std::string::npos);
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_NE(error_of(bad).find("bad magic"), std::string::npos);
  // Truncation anywhere: the trailing magic is gone.
  for (size_t cut : {size_t{5}, good.size() / 2, good.size() - 1})
    EXPECT_NE(error_of(good.substr(0, cut)).find("not a parquet file"), std::string::npos) << cut;
}

TEST(ParquetBadInput, FooterLengthBeyondFile) {
  std::string bad = slurp(fixtures() / "flat_dict_zstd_v1.parquet");
  uint32_t len = 0x7fffffff;
  std::memcpy(bad.data() + bad.size() - 8, &len, 4);
  EXPECT_NE(error_of(bad).find("footer length"), std::string::npos);
}

TEST(ParquetBadInput, ThriftDecodeErrorInFooter) {
  std::string bad = slurp(fixtures() / "flat_dict_zstd_v1.parquet");
  uint32_t len;
  std::memcpy(&len, bad.data() + bad.size() - 8, 4);
  // Garble the footer's first bytes: an invalid field type.
  size_t start = bad.size() - 8 - len;
  for (size_t i = 0; i < 4; ++i) bad[start + i] = static_cast<char>(0x0f);
  std::string msg = error_of(bad);
  EXPECT_NE(msg.find("thrift"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad.parquet"), std::string::npos) << msg;
}

TEST(ParquetBadInput, PageHeaderLiesAndDecompressionFailures) {
  // Flip bytes all over the data region of a compressed file: every outcome is either the right
  // rows or a UserError naming row group and column, never a crash.
  std::string good = slurp(fixtures() / "nested_snappy_v1.parquet");
  uint32_t len;
  std::memcpy(&len, good.data() + good.size() - 8, 4);
  size_t data_end = good.size() - 8 - len;
  int errors = 0, named = 0;
  for (size_t pos = 4; pos < data_end; pos += 37) {
    std::string bad = good;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x5a);
    std::string msg = error_of(bad);
    if (!msg.empty()) {
      ++errors;
      named +=
          msg.find("row group") != std::string::npos && msg.find("column '") != std::string::npos;
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_EQ(named, errors);
}

TEST(ParquetBadInput, DecompressionFailureNamesColumn) {
  std::string good = slurp(fixtures() / "flat_dict_zstd_v1.parquet");
  auto f = ParquetFile::from_buffer(good, "x.parquet");
  // The ZSTD frame magic (28 b5 2f fd) starts each compressed page: break the first one.
  size_t at = good.find(std::string("\x28\xb5\x2f\xfd", 4));
  ASSERT_NE(at, std::string::npos);
  std::string bad = good;
  bad[at + 1] = 0;
  std::string msg = error_of(bad, "x.parquet");
  EXPECT_NE(msg.find("zstd"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row group 0, column 'b'"), std::string::npos) << msg;
}

// A string column holding bytes that are not UTF-8 (scripts/gen_non_utf8_parquet.py; pyarrow's
// to_pylist raises UnicodeDecodeError on it) is refused naming the column, row and byte.
TEST(ParquetBadInput, StringNotUtf8NamesColumnAndRow) {
  fs::path bad =
      lmeval::testing::source_dir() / "tests/data/fixtures_parquet_bad/string_not_utf8.parquet";
  std::string msg = error_of(slurp(bad), "string_not_utf8.parquet");
  EXPECT_NE(msg.find("column 'q', row 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("byte 0xFF at byte offset 0"), std::string::npos) << msg;
}

TEST(ThriftCompact, ReadsFieldsAndRejectsGarbage) {
  using lmeval::thrift::CompactReader;
  using lmeval::thrift::CType;
  // struct { 1: i32 = -3, 2: string "ab", 4: bool true, 20: i64 = 150 } STOP
  const uint8_t data[] = {0x15, 0x05, 0x18, 0x02, 'a', 'b', 0x21, 0x06, 0x28, 0xac, 0x02, 0x00};
  CompactReader r(data, sizeof data);
  r.begin_struct();
  int16_t id;
  CType t;
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(r.read_i32(t), -3);
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(r.read_string(t), "ab");
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 4);
  EXPECT_TRUE(r.read_bool(t));
  ASSERT_TRUE(r.next_field(id, t));
  EXPECT_EQ(id, 20);
  EXPECT_EQ(r.read_i64(t), 150);
  EXPECT_FALSE(r.next_field(id, t));

  const uint8_t truncated[] = {0x18, 0x10, 'a'};
  CompactReader r2(truncated, sizeof truncated);
  r2.begin_struct();
  ASSERT_TRUE(r2.next_field(id, t));
  EXPECT_THROW(r2.read_string(t), lmeval::thrift::ThriftError);

  // A list claiming 2^32 elements.
  const uint8_t huge[] = {0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f};
  CompactReader r3(huge, sizeof huge);
  CType et;
  EXPECT_THROW(r3.read_list_header(CType::kList, et), lmeval::thrift::ThriftError);

  // Deep nesting is bounded.
  std::vector<uint8_t> deep(200, 0x1c);  // field 1: struct, repeatedly
  CompactReader r4(deep.data(), deep.size());
  EXPECT_THROW(r4.skip(CType::kStruct), lmeval::thrift::ThriftError);
}

// Inputs the fuzzer (fuzz/parquet_fuzz.cpp) once crashed on: now rows or a UserError.
TEST(ParquetBadInput, FuzzRegressions) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(fixtures() / "fuzz_regressions")) {
    std::string data = slurp(e.path());
    try {
      ParquetFile::from_buffer(data, "fuzz").read_all();
    } catch (const lmeval::UserError&) {
    }
    ++n;
  }
  EXPECT_GT(n, 0);
}
