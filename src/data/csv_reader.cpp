// pandas.read_csv (C parser) as datasets' csv builder calls it: tokenizing, NA cells, per-chunk
// column types, and pa.Table.from_pandas's view of them.
#include "lmeval/data/csv_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "lmeval/core/error.hpp"

namespace lmeval {

namespace {

struct Field {
  std::string text;
  bool quoted = false;
};
struct Record {
  std::vector<Field> fields;
  int line = 0;
};

bool is_space(char c, char sep) { return (c == ' ' || c == '\t') && c != sep; }

// The tokenizer of pandas' C parser (tokenizer.c) for QUOTE_MINIMAL with doublequote: a quote
// opens a quoted field only at the field's start, text after the closing quote joins the field,
// "\n", "\r\n" and "\r" end a record, and a line of nothing but spaces/tabs is skipped.
std::vector<Record> tokenize(std::string_view text, const std::string& origin,
                             const CsvOptions& o) {
  std::vector<Record> out;
  size_t i = 0;
  if (text.substr(0, 3) == "\xef\xbb\xbf") i = 3;
  int line = 1;
  const size_t n = text.size();
  while (i < n) {
    // A blank or whitespace-only line.
    size_t j = i;
    while (j < n && is_space(text[j], o.sep)) ++j;
    if (o.skip_blank_lines && (j == n || text[j] == '\n' || text[j] == '\r')) {
      if (j < n && text[j] == '\r' && j + 1 < n && text[j + 1] == '\n') ++j;
      i = j + 1;
      ++line;
      continue;
    }
    Record rec;
    rec.line = line;
    Field f;
    bool at_start = true, in_quotes = false, done = false;
    int quote_line = line;
    while (!done) {
      if (i >= n) {
        if (in_quotes)
          throw UserError(
              "EOF inside string starting at row " + std::to_string(quote_line),
              {origin, quote_line, 0, ""},
              "a closing " + std::string(1, o.quotechar) + " (pandas raises ParserError)");
        rec.fields.push_back(std::move(f));
        break;
      }
      char c = text[i++];
      if (in_quotes) {
        if (c == o.quotechar) {
          if (i < n && text[i] == o.quotechar) {
            f.text += c;
            ++i;
          } else {
            in_quotes = false;
          }
        } else {
          if (c == '\n' || (c == '\r' && !(i < n && text[i] == '\n'))) ++line;
          f.text += c;
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (c == '\r' && i < n && text[i] == '\n') ++i;
        ++line;
        rec.fields.push_back(std::move(f));
        f = Field();
        done = true;
      } else if (c == o.sep) {
        rec.fields.push_back(std::move(f));
        f = Field();
        at_start = true;
      } else if (at_start && o.skipinitialspace && c == ' ') {
      } else if (at_start && c == o.quotechar) {
        in_quotes = true;
        f.quoted = true;
        quote_line = line;
        at_start = false;
      } else {
        f.text += c;
        at_start = false;
      }
    }
    out.push_back(std::move(rec));
  }
  return out;
}

bool c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view strip(std::string_view s) {
  while (!s.empty() && c_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && c_space(s.back())) s.remove_suffix(1);
  return s;
}

// pandas' str_to_int64 / str_to_uint64: spaces around, a sign, digits.
enum class IntParse { kNo, kInt, kUInt, kOverflow };
IntParse parse_int(std::string_view raw, int64_t& iv, uint64_t& uv) {
  std::string_view s = strip(raw);
  if (s.empty()) return IntParse::kNo;
  bool neg = s[0] == '-';
  if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return IntParse::kNo;
  for (char c : s)
    if (c < '0' || c > '9') return IntParse::kNo;
  unsigned __int128 v = 0;
  for (char c : s) {
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > std::numeric_limits<uint64_t>::max()) return IntParse::kOverflow;
  }
  if (neg) {
    if (v > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + 1)
      return IntParse::kOverflow;
    iv = static_cast<int64_t>(-static_cast<__int128>(v));
    return IntParse::kInt;
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    uv = static_cast<uint64_t>(v);
    return IntParse::kUInt;
  }
  iv = static_cast<int64_t>(v);
  return IntParse::kInt;
}

// pandas' xstrtod over a whole cell (spaces around allowed, '.' decimal, e/E exponent), then
// _try_double's spellings of infinity (inf, infinity with an optional sign, any case).
bool parse_float(std::string_view raw, double& out) {
  std::string_view s = strip(raw);
  size_t k = 0;
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
  size_t digits = 0;
  while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k, ++digits;
  if (k < s.size() && s[k] == '.') {
    ++k;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k, ++digits;
  }
  if (digits > 0 && k < s.size() && (s[k] == 'e' || s[k] == 'E')) {
    size_t e = k + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    size_t ed = 0;
    while (e < s.size() && s[e] >= '0' && s[e] <= '9') ++e, ++ed;
    if (ed > 0) k = e;
  }
  if (digits > 0 && k == s.size()) {
    std::string tmp(s);
    out = std::strtod(tmp.c_str(), nullptr);
    return true;
  }
  std::string low;
  for (char c : raw) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (low == "inf" || low == "+inf" || low == "infinity" || low == "+infinity") {
    out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (low == "-inf" || low == "-infinity") {
    out = -std::numeric_limits<double>::infinity();
    return true;
  }
  return false;
}

int bool_value(const std::string& s) {
  if (s == "True" || s == "TRUE" || s == "true") return 1;
  if (s == "False" || s == "FALSE" || s == "false") return 0;
  return -1;
}

// pandas' header names: an empty name is "Unnamed: <i>", repeats get ".1", ".2", ... (dedup_names).
std::vector<std::string> header_names(const Record& r) {
  std::vector<std::string> names;
  for (size_t i = 0; i < r.fields.size(); ++i)
    names.push_back(r.fields[i].text.empty() ? "Unnamed: " + std::to_string(i) : r.fields[i].text);
  std::map<std::string, int> counts;
  for (auto& col : names) {
    int cur = counts[col];
    while (cur > 0) {
      counts[col] = cur + 1;
      col = col + "." + std::to_string(cur);
      cur = counts[col];
    }
    counts[col] = cur + 1;
  }
  return names;
}

std::string as_string(const Doc& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void set_string_list(const Doc& v, std::vector<std::string>& out, const std::string& key,
                     const std::string& origin) {
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
    return;
  }
  if (v.is_array()) {
    for (const auto& e : v) {
      if (e.is_string())
        out.push_back(e.get<std::string>());
      else if (e.is_number() || e.is_boolean())
        out.push_back(as_string(e));
      else
        throw UserError("dataset_kwargs." + key + " holds a value that is not text",
                        {origin, 0, 0, "dataset_kwargs." + key}, "a string or a list of strings");
    }
    return;
  }
  throw UserError("dataset_kwargs." + key + " is not text", {origin, 0, 0, "dataset_kwargs." + key},
                  "a string or a list of strings");
}

}  // namespace

CsvOptions CsvOptions::from_kwargs(const Doc& kwargs, char default_sep, const std::string& origin) {
  CsvOptions o;
  o.sep = default_sep;
  if (!kwargs.is_object()) return o;
  // Parameters of CsvConfig that change what pandas reads and that lm-eval does not implement.
  static const std::set<std::string> unsupported = {
      "header",     "index_col",    "usecols",        "prefix",      "engine",
      "converters", "true_values",  "false_values",   "skiprows",    "nrows",
      "thousands",  "decimal",      "lineterminator", "quoting",     "escapechar",
      "comment",    "dialect",      "skipfooter",     "doublequote", "float_precision",
      "features",   "on_bad_lines", "date_format",    "dtype",       "encoding_errors"};
  auto single_char = [&](const std::string& key) {
    const Doc& v = kwargs[key];
    if (!v.is_string() || v.get<std::string>().size() != 1)
      throw UserError(
          "dataset_kwargs." + key + " " + v.dump() + " is not one character",
          {origin, 0, 0, "dataset_kwargs." + key},
          "one character (pandas' C parser; lm-eval does not run its regex separators)");
    return v.get<std::string>()[0];
  };
  auto boolean = [&](const std::string& key) {
    const Doc& v = kwargs[key];
    if (!v.is_boolean())
      throw UserError("dataset_kwargs." + key + " " + v.dump() + " is not true or false",
                      {origin, 0, 0, "dataset_kwargs." + key}, "true or false");
    return v.get<bool>();
  };
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
    const std::string& k = it.key();
    if (unsupported.count(k) && !it->is_null())
      throw UserError("dataset_kwargs." + k + " (a pandas read_csv option) is not supported by " +
                          "lm-eval's CSV reader",
                      {origin, 0, 0, "dataset_kwargs." + k},
                      "sep/delimiter, quotechar, skipinitialspace, skip_blank_lines, na_values, "
                      "keep_default_na, na_filter, column_names");
    if (k == "encoding" && !it->is_null()) {
      std::string e = as_string(*it);
      for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (e != "utf-8" && e != "utf8" && e != "utf_8")
        throw UserError("dataset_kwargs.encoding " + it->dump() + " is not supported",
                        {origin, 0, 0, "dataset_kwargs.encoding"}, "utf-8");
    }
  }
  if (kwargs.contains("sep") && !kwargs["sep"].is_null()) o.sep = single_char("sep");
  // CsvConfig.__post_init__: delimiter wins over sep.
  if (kwargs.contains("delimiter") && !kwargs["delimiter"].is_null())
    o.sep = single_char("delimiter");
  if (kwargs.contains("quotechar")) o.quotechar = single_char("quotechar");
  if (kwargs.contains("skipinitialspace")) o.skipinitialspace = boolean("skipinitialspace");
  if (kwargs.contains("skip_blank_lines")) o.skip_blank_lines = boolean("skip_blank_lines");
  if (kwargs.contains("keep_default_na")) o.keep_default_na = boolean("keep_default_na");
  if (kwargs.contains("na_filter")) o.na_filter = boolean("na_filter");
  if (kwargs.contains("na_values") && !kwargs["na_values"].is_null())
    set_string_list(kwargs["na_values"], o.na_values, "na_values", origin);
  for (const char* key : {"names", "column_names"})
    if (kwargs.contains(key) && !kwargs[key].is_null()) {
      std::vector<std::string> names;
      set_string_list(kwargs[key], names, key, origin);
      o.names = names;
    }
  if (kwargs.contains("chunksize")) {
    const Doc& v = kwargs["chunksize"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
      throw UserError("dataset_kwargs.chunksize " + v.dump() + " is not a positive integer",
                      {origin, 0, 0, "dataset_kwargs.chunksize"}, "a positive integer");
    o.chunksize = static_cast<size_t>(v.get<int64_t>());
  }
  return o;
}

std::vector<CsvChunk> read_csv(std::string_view text, const std::string& origin,
                               const CsvOptions& o) {
  std::vector<Record> recs = tokenize(text, origin, o);
  std::vector<std::string> names;
  size_t first = 0;
  if (o.names) {
    names = *o.names;
  } else {
    if (recs.empty())
      throw UserError("No columns to parse from file", {origin, 0, 0, ""},
                      "a header row (pandas raises EmptyDataError)");
    names = header_names(recs[0]);
    first = 1;
  }
  std::set<std::string> na;
  if (o.na_filter) {
    if (o.keep_default_na)
      na = {"",     "#N/A",   "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
            "-nan", "1.#IND", "1.#QNAN",  "<NA>", "N/A",     "NA",       "NULL",
            "NaN",  "None",   "n/a",      "nan",  "null"};
    na.insert(o.na_values.begin(), o.na_values.end());
  }
  const size_t ncol = names.size();
  for (size_t r = first; r < recs.size(); ++r)
    if (recs[r].fields.size() > ncol)
      throw UserError("Expected " + std::to_string(ncol) + " fields in line " +
                          std::to_string(recs[r].line) + ", saw " +
                          std::to_string(recs[r].fields.size()),
                      {origin, recs[r].line, 0, ""},
                      std::to_string(ncol) +
                          " fields as in the header (pandas raises ParserError: Error tokenizing "
                          "data); quote fields that hold the separator");

  std::vector<CsvChunk> chunks;
  for (size_t start = first; start < recs.size() || (start == first && chunks.empty());
       start += o.chunksize) {
    size_t end = std::min(recs.size(), start + o.chunksize);
    CsvChunk ch;
    ch.first_line = start < recs.size() ? recs[start].line : 0;
    ch.schema = arrow::Type::of(arrow::Type::kStruct);
    std::vector<std::vector<Doc>> cols(ncol);
    for (size_t c = 0; c < ncol; ++c) {
      // Cells in this chunk; a missing trailing field is NA, as pandas pads short rows.
      std::vector<const std::string*> cells;
      std::vector<bool> is_na;
      for (size_t r = start; r < end; ++r) {
        const auto& f = recs[r].fields;
        const std::string* s = c < f.size() ? &f[c].text : nullptr;
        cells.push_back(s);
        is_na.push_back(s == nullptr || na.count(*s) > 0);
      }
      bool any_na = false, all_int = true, all_float = true, all_bool = true, any_uint = false,
           any_neg = false, overflow = false;
      size_t non_na = 0;
      for (size_t k = 0; k < cells.size(); ++k) {
        if (is_na[k]) {
          any_na = true;
          continue;
        }
        ++non_na;
        int64_t iv;
        uint64_t uv;
        double dv;
        if (all_int) {
          IntParse p = parse_int(*cells[k], iv, uv);
          if (p == IntParse::kNo) all_int = false;
          if (p == IntParse::kUInt) any_uint = true;
          if (p == IntParse::kInt && iv < 0) any_neg = true;
          if (p == IntParse::kOverflow) overflow = true;
        }
        if (all_float && !parse_float(*cells[k], dv)) all_float = false;
        if (all_bool && bool_value(*cells[k]) < 0) all_bool = false;
      }
      arrow::Type::Kind kind;
      if (non_na == 0)
        kind = cells.empty() ? arrow::Type::kString : arrow::Type::kFloat;  // all NaN: float64
      else if (all_int && (overflow || (any_uint && any_neg)))
        // pandas keeps such a column as Python ints; pa.Table.from_pandas then fails.
        throw UserError("an integer in column '" + names[c] +
                            "' does not fit 64 bits (Python int too large to convert to C long)",
                        {origin, ch.first_line, 0, names[c]},
                        "integers within int64/uint64 (datasets fails with OverflowError)");
      else if (all_int && !any_na)
        kind = any_uint ? arrow::Type::kUInt : arrow::Type::kInt;
      else if (all_int || all_float)
        kind = arrow::Type::kFloat;
      else if (all_bool)
        kind = arrow::Type::kBool;
      else
        kind = arrow::Type::kString;
      ch.schema.fields.emplace_back(names[c], arrow::Type::of(kind));
      auto& col = cols[c];
      for (size_t k = 0; k < cells.size(); ++k) {
        if (is_na[k]) {
          col.emplace_back(nullptr);
          continue;
        }
        const std::string& s = *cells[k];
        int64_t iv = 0;
        uint64_t uv = 0;
        double dv = 0;
        switch (kind) {
          case arrow::Type::kInt:
            parse_int(s, iv, uv);
            col.emplace_back(iv);
            break;
          case arrow::Type::kUInt:
            if (parse_int(s, iv, uv) == IntParse::kUInt)
              col.emplace_back(uv);
            else
              col.emplace_back(iv);
            break;
          case arrow::Type::kFloat:
            parse_float(s, dv);
            col.emplace_back(dv);
            break;
          case arrow::Type::kBool:
            col.emplace_back(bool_value(s) == 1);
            break;
          default:
            col.emplace_back(s);
        }
      }
    }
    for (size_t r = 0; r < end - start; ++r) {
      Doc d = Doc::object();
      for (size_t c = 0; c < ncol; ++c) d[names[c]] = std::move(cols[c][r]);
      ch.rows.push_back(std::move(d));
    }
    chunks.push_back(std::move(ch));
    if (start >= recs.size()) break;
  }
  return chunks;
}

}  // namespace lmeval
