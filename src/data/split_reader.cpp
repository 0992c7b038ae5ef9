// A split's rows from its data files as datasets' packaged builders give them, and data_files
// patterns resolved as datasets' resolve_pattern resolves them.
#include "lmeval/data/split_reader.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/data/arrow_schema.hpp"
#include "lmeval/data/csv_reader.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "lmeval/data/parquet_reader.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

// The whole file, checked to be UTF-8 (datasets decodes it as UTF-8 and stops on the first bad
// byte; here the error names line and byte offset).
std::string read_text(const fs::path& file) {
  std::error_code ec;
  if (fs::is_directory(file, ec))
    throw UserError(
        "is a folder, not a data file", {file.string(), 0, 0, ""},
        "a .jsonl, .json, .parquet, .csv, .tsv or .txt file; name the file inside the folder");
  std::string text = read_input_file(file, "data file", "a readable data file");
  require_utf8(text, file.string());
  return text;
}

Doc parse_whole(const std::string& text, const fs::path& file, const std::string& expected) {
  require_json_nesting(text, file.string());
  try {
    return Doc::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    throw_json_number_overflow(e, text, file.string());
  } catch (const nlohmann::json::parse_error& e) {
    size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw UserError(
        "malformed JSON at byte offset " + std::to_string(at) + ": " + json_error_text(e.what()),
        {file.string(), line_of_offset(text, at), 0, ""}, expected);
  }
}

// A list's elements as rows; elements that are not mappings become {"text": x}, as datasets
// names the one column of a list of strings (json.py: df.columns == [0] -> "text").
std::vector<Doc> list_rows(Doc& list, const fs::path& file, const std::string& where) {
  std::vector<Doc> rows;
  bool objects = !list.empty() && list[0].is_object();
  size_t i = 0;
  for (auto& r : list) {
    if (objects != r.is_object())
      throw UserError("element " + std::to_string(i) + " of " + where +
                          (objects ? " is not a JSON object" : " is a JSON object among values"),
                      {file.string(), 0, 0, "[" + std::to_string(i) + "]"},
                      "a list of objects or a list of values");
    rows.push_back(objects ? std::move(r) : Doc{{"text", std::move(r)}});
    ++i;
  }
  return rows;
}

// One JSON / JSON lines file as json.py reads it: with `field`, that key of the top-level object;
// a file starting with '[' is a list of rows; otherwise JSON lines.
std::vector<Doc> json_file_rows(const fs::path& file, const Doc& field) {
  std::string text = read_text(file);
  if (text.rfind("\xef\xbb\xbf", 0) == 0) text.erase(0, 3);
  if (field.is_string()) {
    const std::string key = field.get<std::string>();
    Doc d = parse_whole(text, file, "a JSON object with a list under \"" + key + "\"");
    if (!d.is_object() || !d.contains(key))
      throw UserError("no key \"" + key + "\" at the top of the file", {file.string(), 0, 0, key},
                      "a JSON object with a list under \"" + key +
                          "\" (dataset_kwargs.field; datasets raises KeyError)");
    Doc& list = d[key];
    if (!list.is_array())
      throw UserError("\"" + key + "\" is not a list", {file.string(), 0, 0, key},
                      "a list of rows under dataset_kwargs.field");
    return list_rows(list, file, "\"" + key + "\"");
  }
  if (!text.empty() && text[0] == '[') {
    Doc d = parse_whole(text, file, "a JSON list of objects");
    return list_rows(d, file, "the list");
  }
  try {
    return parse_jsonl(text, file.string());
  } catch (const UserError& jsonl_error) {
    // A JSON document over several lines: lm-eval reads an object with a "data" list as its rows
    // (datasets would hand it to pandas.read_json; docs/data.md). Anything else: the JSON lines
    // error, which names the line.
    size_t b = text.find_first_not_of(" \t\r\n");
    if (b == std::string::npos || text[b] != '{') throw;
    Doc d;
    try {
      require_json_nesting(text, file.string());
      d = Doc::parse(text);
    } catch (const nlohmann::json::out_of_range& e) {
      throw_json_number_overflow(e, text, file.string());
    } catch (const nlohmann::json::parse_error&) {
      throw jsonl_error;
    }
    if (d.is_object() && d.contains("data") && d["data"].is_array())
      return list_rows(d["data"], file, "\"data\"");
    throw jsonl_error;
  }
}

std::vector<Doc> text_file_rows(const fs::path& file) {
  std::string text = read_text(file);
  // open() in text mode: universal newlines; StringIO.readlines; rstrip("\n") (text.py).
  std::vector<Doc> rows;
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.push_back(Doc{{"text", line}});
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) rows.push_back(Doc{{"text", line}});
  return rows;
}

std::string schema_text(const arrow::Type& t) {
  std::string s;
  for (const auto& [k, v] : t.fields) s += (s.empty() ? "" : ", ") + k + ": " + arrow::type_name(v);
  return s;
}

}  // namespace

std::vector<Doc> parse_jsonl(std::string_view text, const std::string& origin) {
  const fs::path file = origin;
  std::vector<Doc> rows;
  size_t start = 0;
  int line = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view l(text.data() + start, (nl == std::string::npos ? text.size() : nl) - start);
    ++line;
    start = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = l.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) continue;
    require_json_nesting(l, file.string(), static_cast<size_t>(l.data() - text.data()), line);
    try {
      Doc d = Doc::parse(l);
      if (!d.is_object())
        throw UserError("row is not a JSON object", {file.string(), line, 0, ""},
                        "one JSON object per line");
      rows.push_back(std::move(d));
    } catch (const nlohmann::json::out_of_range& e) {
      throw_json_number_overflow(e, l, file.string(), line);
    } catch (const nlohmann::json::parse_error& e) {
      throw UserError("malformed JSON: " + json_error_text(e.what()),
                      {file.string(), line, static_cast<int>(e.byte), ""},
                      "one JSON object per line");
    }
  }
  return rows;
}

std::string builder_for_extension(const fs::path& file) {
  std::string e = file.extension().string();
  std::transform(e.begin(), e.end(), e.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (e == ".csv" || e == ".tsv") return "csv";
  if (e == ".json" || e == ".jsonl" || e == ".ndjson") return "json";
  if (e == ".parquet") return "parquet";
  if (e == ".txt") return "text";
  return "";
}

std::vector<Doc> read_split(const std::vector<fs::path>& files, const SplitReadOptions& opts) {
  std::vector<Doc> rows;
  if (files.empty()) return rows;
  for (const auto& f : files) {
    if (!fs::exists(f))
      throw UserError("data file not found", {f.string(), 0, 0, ""}, "an existing file");
    if (fs::is_directory(f))
      throw UserError(
          "is a folder, not a data file", {f.string(), 0, 0, ""},
          "a .jsonl, .json, .parquet, .csv, .tsv or .txt file; name the file inside the folder");
  }
  std::string builder = opts.builder;
  char sep = ',';
  if (builder.empty()) {
    builder = builder_for_extension(files[0]);
    std::string e = files[0].extension().string();
    std::transform(e.begin(), e.end(), e.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (e == ".tsv") sep = '\t';  // _EXTENSION_TO_MODULE[".tsv"] = ("csv", {"sep": "\t"})
    if (builder.empty())
      throw UserError("unsupported data file type '" + files[0].extension().string() + "'",
                      {files[0].string(), 0, 0, ""}, ".jsonl, .json, .parquet, .csv, .tsv or .txt");
  }
  if (builder == "csv") {
    CsvOptions o = CsvOptions::from_kwargs(opts.kwargs, sep, opts.origin);
    std::optional<arrow::Type> first;
    std::string first_file;
    std::vector<CsvChunk> all;
    for (const auto& f : files) {
      auto chunks = read_csv(read_text(f), f.string(), o);
      std::optional<arrow::Type> file_schema;
      for (auto& ch : chunks) {
        if (ch.rows.empty()) continue;
        // Later chunks of a file are cast to its first chunk's types (ArrowWriter's table_cast).
        if (!file_schema)
          file_schema = ch.schema;
        else
          arrow::conform_rows(
              ch.rows, *file_schema,
              f.string() + " (rows from line " + std::to_string(ch.first_line) + ")");
        all.push_back(std::move(ch));
      }
      if (!file_schema) continue;
      if (!first) {
        first = file_schema;
        first_file = f.string();
      } else if (!(*file_schema == *first)) {
        // Each file is its own table; datasets concatenates them and needs one schema.
        throw UserError("the columns of this file (" + schema_text(*file_schema) +
                            ") differ from those of " + first_file + " (" + schema_text(*first) +
                            ")",
                        {f.string(), 0, 0, ""},
                        "one set of column names, in one order, with one type each in every file "
                        "of a split (datasets fails: Schema at index 1 was different); quote or "
                        "fill the cells that change a column's type");
      }
    }
    for (auto& c : all)
      rows.insert(rows.end(), std::make_move_iterator(c.rows.begin()),
                  std::make_move_iterator(c.rows.end()));
    return rows;
  }
  if (builder == "json") {
    Doc field =
        opts.kwargs.is_object() && opts.kwargs.contains("field") ? opts.kwargs["field"] : Doc();
    arrow::Type schema;
    for (size_t i = 0; i < files.size(); ++i) {
      auto part = json_file_rows(files[i], field);
      // The first file fixes the split's features (json.py _split_generators), later files are
      // cast to them.
      if (i == 0) schema = arrow::infer_json_rows(part);
      arrow::conform_rows(part, schema, files[i].string());
      rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                  std::make_move_iterator(part.end()));
    }
    return rows;
  }
  for (const auto& f : files) {
    std::vector<Doc> part;
    if (builder == "parquet")
      part = parquet::read_parquet(f);
    else if (builder == "text")
      part = text_file_rows(f);
    else
      throw UserError("dataset builder '" + builder + "' is not supported", {opts.origin, 0, 0, ""},
                      "json, csv, parquet or text");
    rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                std::make_move_iterator(part.end()));
  }
  return rows;
}

std::vector<fs::path> resolve_data_pattern(const std::string& pattern, const fs::path& base) {
  fs::path full = fs::path(pattern).is_absolute() ? fs::path(pattern) : base / pattern;
  full = full.lexically_normal();
  std::string s = full.generic_string();
  size_t g = s.find_first_of("*?[");
  std::vector<fs::path> out;
  std::error_code ec;
  if (g == std::string::npos) {
    if (fs::is_regular_file(full, ec)) {
      out.push_back(full);
    } else if (fs::exists(full, ec) && !fs::is_directory(full, ec)) {
      // datasets would report it missing; saying what it is instead is the useful message.
      require_regular_input(full, "data file", "a regular data file");
    }
    return out;
  }
  size_t slash = s.rfind('/', g);
  fs::path root = slash == std::string::npos ? fs::path(".") : fs::path(s.substr(0, slash + 1));
  std::string rest = slash == std::string::npos ? s : s.substr(slash + 1);
  if (!fs::is_directory(root, ec)) return out;
  // Hidden files and folders (".x") and special ones ("__x") only where the pattern names them.
  bool wants_hidden = rest.find("/.") != std::string::npos || rest.rfind('.', 0) == 0;
  bool wants_special = rest.find("/__") != std::string::npos || rest.rfind("__", 0) == 0;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    bool hidden = name.rfind('.', 0) == 0, special = name.rfind("__", 0) == 0;
    if ((hidden && !wants_hidden) || (special && !wants_special)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    std::string rel = it->path().lexically_relative(root).generic_string();
    if (hub::glob_match(rest, rel)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lmeval
