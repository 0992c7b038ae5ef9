// Parquet file reading: footer, column chunks -> levels + values, record assembly into JSON rows.
#include "lmeval/data/parquet_reader.hpp"

#include "data/parquet_internal.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/data/thrift_compact.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace lmeval::parquet {

using detail::CorruptError;

namespace {

constexpr size_t kMaxPageBytes = size_t{1} << 30;
constexpr size_t kMaxEntriesPerChunk = size_t{1} << 28;

[[noreturn]] void corrupt(const std::string& msg) { throw CorruptError(msg); }

// Value conversion chosen once per leaf from its physical and logical type.
enum class Kind {
  kBool,
  kInt,
  kUInt32,
  kUInt64,
  kReal,
  kString,
  kBinary,
  kDate,
  kDecimalInt,
  kDecimalBytes,
  kFloat16,
  kUuid,
  kInt96
};

Kind kind_of(const SchemaNode& n) {
  const bool is_decimal = n.logical == 5 || n.converted_type == 5;
  switch (static_cast<Type>(n.type)) {
    case Type::kBoolean:
      return Kind::kBool;
    case Type::kInt32:
      if (is_decimal) return Kind::kDecimalInt;
      if (n.logical == 6 || n.converted_type == 6) return Kind::kDate;
      if ((n.logical == 10 && !n.int_signed) || (n.converted_type >= 11 && n.converted_type <= 13))
        return Kind::kUInt32;
      return Kind::kInt;
    case Type::kInt64:
      if (is_decimal) return Kind::kDecimalInt;
      if ((n.logical == 10 && !n.int_signed) || n.converted_type == 14) return Kind::kUInt64;
      return Kind::kInt;
    case Type::kInt96:
      return Kind::kInt96;
    case Type::kFloat:
    case Type::kDouble:
      return Kind::kReal;
    case Type::kByteArray:
      if (is_decimal) return Kind::kDecimalBytes;
      if (n.logical == 1 || n.logical == 4 || n.logical == 12 || n.converted_type == 0 ||
          n.converted_type == 4 || n.converted_type == 19)
        return Kind::kString;
      return Kind::kBinary;
    case Type::kFixedLenByteArray:
      if (is_decimal) return Kind::kDecimalBytes;
      if (n.logical == 15 && n.type_length == 2) return Kind::kFloat16;
      if (n.logical == 14 && n.type_length == 16) return Kind::kUuid;
      return Kind::kBinary;
  }
  return Kind::kBinary;
}

std::string civil_date(int64_t days) {
  // Howard Hinnant's days-from-civil inverse.
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lld", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d));
  return buf;
}

double half_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(mant + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

struct Leaf {
  const SchemaNode* node = nullptr;
  Kind kind = Kind::kBinary;
  size_t entries = 0;
  std::vector<uint16_t> def, rep;     // per entry; empty when the max level is 0
  std::vector<uint32_t> value_index;  // per entry when max_def > 0
  std::vector<uint32_t> row_start;    // rows + 1 entries when max_rep > 0
  detail::Values values;
  std::vector<std::unique_ptr<std::string>> arena;

  int def_at(uint32_t e) const { return def.empty() ? node->max_def : def[e]; }
  int rep_at(uint32_t e) const { return rep.empty() ? 0 : rep[e]; }

  Doc value(uint32_t entry) const {
    uint32_t i = value_index.empty() ? entry : value_index[entry];
    switch (kind) {
      case Kind::kBool:
        return Doc(values.ints[i] != 0);
      case Kind::kInt:
        return Doc(values.ints[i]);
      case Kind::kUInt32:
        return Doc(static_cast<uint64_t>(static_cast<uint32_t>(values.ints[i])));
      case Kind::kUInt64:
        return Doc(static_cast<uint64_t>(values.ints[i]));
      case Kind::kReal:
        return Doc(values.reals[i]);
      case Kind::kString: {
        // pyarrow's to_pylist (datasets) raises UnicodeDecodeError on such a value; here it is
        // refused naming the row group, column and row (every printer needs valid UTF-8).
        std::string_view b = values.bytes[i];
        if (auto bad = first_invalid_utf8(b)) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(b[*bad]));
          corrupt(std::string("string value is not UTF-8: byte ") + hex + " at byte offset " +
                  std::to_string(*bad) + " of the value (expected UTF-8 text)");
        }
        return Doc(std::string(b));
      }
      case Kind::kDate:
        return Doc(civil_date(values.ints[i]));
      case Kind::kDecimalInt:
        return Doc(static_cast<double>(values.ints[i]) / std::pow(10.0, node->scale));
      case Kind::kDecimalBytes: {
        std::string_view b = values.bytes[i];
        double v = 0;
        for (unsigned char c : b) v = v * 256 + c;
        if (!b.empty() && (static_cast<unsigned char>(b[0]) & 0x80))
          v -= std::ldexp(1.0, 8 * static_cast<int>(b.size()));
        return Doc(v / std::pow(10.0, node->scale));
      }
      case Kind::kFloat16: {
        std::string_view b = values.bytes[i];
        return Doc(half_to_double(static_cast<uint16_t>(static_cast<unsigned char>(b[0]) |
                                                        (static_cast<unsigned char>(b[1]) << 8))));
      }
      case Kind::kUuid: {
        static const char* hex = "0123456789abcdef";
        std::string s;
        std::string_view b = values.bytes[i];
        for (size_t k = 0; k < b.size(); ++k) {
          if (k == 4 || k == 6 || k == 8 || k == 10) s += '-';
          s += hex[static_cast<unsigned char>(b[k]) >> 4];
          s += hex[static_cast<unsigned char>(b[k]) & 15];
        }
        return Doc(s);
      }
      case Kind::kInt96: {
        std::string_view b = values.bytes[i];
        int64_t nanos;
        int32_t day;
        std::memcpy(&nanos, b.data(), 8);
        std::memcpy(&day, b.data() + 8, 4);
        return Doc((static_cast<int64_t>(day) - 2440588) * 86400000000000LL + nanos);
      }
      case Kind::kBinary: {
        std::string_view b = values.bytes[i];
        return Doc::binary(std::vector<uint8_t>(b.begin(), b.end()));
      }
    }
    return Doc();
  }
};

struct Range {
  uint32_t b, e;
};

}  // namespace

struct ParquetFile::Impl {
  std::string name;
  std::string data;
  detail::FileMeta meta;
  std::vector<int> leaf_nodes;  // leaf index -> node index

  [[noreturn]] void fail(const std::string& msg, const std::string& field = {}) const {
    throw UserError(msg, SourceLocation{name, 0, 0, field});
  }

  void read_leaf(size_t rg, size_t leaf_index, Leaf& leaf) const;
  std::vector<Doc> read_row_group(size_t rg, const ReadOptions& options) const;
  std::vector<int> select(const ReadOptions& options) const;
};

namespace {

// Appends levels decoded into `tmp` after checking their range.
void append_levels(std::vector<uint16_t>& dst, const std::vector<uint32_t>& tmp, int max,
                   const char* what) {
  for (uint32_t v : tmp) {
    if (v > static_cast<uint32_t>(max))
      corrupt(std::string(what) + " level " + std::to_string(v) + " above the maximum " +
              std::to_string(max));
    dst.push_back(static_cast<uint16_t>(v));
  }
}

size_t decode_levels(int32_t encoding, const uint8_t* p, size_t n, int max, size_t count,
                     std::vector<uint32_t>& tmp, bool length_prefixed) {
  tmp.assign(count, 0);
  int w = detail::bit_width(static_cast<uint32_t>(max));
  if (encoding == detail::kBitPacked)
    return detail::decode_bit_packed_msb(p, n, w, count, tmp.data());
  if (encoding != detail::kRle) corrupt("unsupported level encoding " + std::to_string(encoding));
  if (!length_prefixed) {
    detail::decode_hybrid(p, n, w, count, tmp.data());
    return n;
  }
  if (n < 4) corrupt("level data truncated");
  uint32_t len;
  std::memcpy(&len, p, 4);
  if (len > n - 4) corrupt("level length beyond the page data");
  detail::decode_hybrid(p + 4, len, w, count, tmp.data());
  return 4 + static_cast<size_t>(len);
}

}  // namespace

void ParquetFile::Impl::read_leaf(size_t rg, size_t leaf_index, Leaf& leaf) const {
  const SchemaNode& node = meta.schema[leaf_nodes[leaf_index]];
  const detail::ColumnMeta& cm = meta.row_groups[rg].columns[leaf_index];
  leaf.node = &node;
  leaf.kind = kind_of(node);
  leaf.values.type = node.type;
  leaf.values.type_length = node.type_length;
  if (!cm.file_path.empty()) corrupt("column data in an external file is not supported");
  if (!cm.has_meta) corrupt("column chunk has no metadata");
  if (cm.type != node.type) corrupt("column chunk type differs from the schema");
  if (node.type == static_cast<int32_t>(Type::kFixedLenByteArray) && node.type_length <= 0)
    corrupt("FIXED_LEN_BYTE_ARRAY with invalid length");
  if (cm.num_values < 0 || static_cast<uint64_t>(cm.num_values) > kMaxEntriesPerChunk)
    corrupt("column chunk value count out of range");

  if (cm.num_values == 0) {  // writers leave the offsets of empty chunks unset
    if (node.max_rep > 0) leaf.row_start.push_back(0);
    return;
  }
  const size_t file_end = data.size();
  int64_t start = cm.data_page_offset;
  if (cm.dictionary_page_offset > 0 && cm.dictionary_page_offset < start)
    start = cm.dictionary_page_offset;
  if (start < 4 || static_cast<uint64_t>(start) >= file_end)
    corrupt("column chunk offset outside the file");
  if (cm.total_compressed_size < 0 ||
      static_cast<uint64_t>(cm.total_compressed_size) > file_end - static_cast<uint64_t>(start))
    corrupt("column chunk extends beyond the end of the file");
  const uint8_t* base = reinterpret_cast<const uint8_t*>(data.data());
  size_t pos = static_cast<size_t>(start);
  const size_t end = pos + static_cast<size_t>(cm.total_compressed_size);
  const uint64_t want = static_cast<uint64_t>(cm.num_values);

  detail::Values dict;
  dict.type = node.type;
  dict.type_length = node.type_length;
  bool have_dict = false;
  std::vector<uint32_t> tmp;
  size_t page_no = 0;

  while (leaf.entries < want) {
    if (pos >= end)
      corrupt("column chunk ended after " + std::to_string(leaf.entries) + " of " +
              std::to_string(want) + " values");
    size_t used = 0;
    detail::PageHeader h;
    try {
      h = detail::parse_page_header(base + pos, end - pos, used);
    } catch (const thrift::ThriftError& e) {
      corrupt("page " + std::to_string(page_no) + " header: " + e.what());
    }
    pos += used;
    const std::string page_name = "page " + std::to_string(page_no++);
    if (h.compressed_size < 0 || static_cast<size_t>(h.compressed_size) > end - pos)
      corrupt(page_name + ": compressed size beyond the column chunk");
    if (h.uncompressed_size < 0 || static_cast<size_t>(h.uncompressed_size) > kMaxPageBytes)
      corrupt(page_name + ": uncompressed size out of range");
    const uint8_t* page = base + pos;
    const size_t csize = static_cast<size_t>(h.compressed_size);
    const size_t usize = static_cast<size_t>(h.uncompressed_size);
    pos += csize;

    // Whole-page decompression (dictionary pages and v1 data pages).
    auto whole = [&]() -> const uint8_t* {
      if (cm.codec == detail::kUncompressed) {
        if (csize != usize) corrupt(page_name + ": sizes differ in an uncompressed page");
        return page;
      }
      auto buf = std::make_unique<std::string>(usize, '\0');
      detail::decompress(cm.codec, page, csize, reinterpret_cast<uint8_t*>(buf->data()), usize);
      const uint8_t* p = reinterpret_cast<const uint8_t*>(buf->data());
      leaf.arena.push_back(std::move(buf));
      return p;
    };

    if (h.type == detail::kDictionaryPage) {
      if (!h.has_dict_header) corrupt(page_name + ": dictionary page without its header");
      if (have_dict) corrupt(page_name + ": second dictionary page");
      if (h.num_values < 0) corrupt(page_name + ": negative dictionary size");
      if (h.encoding != detail::kPlain && h.encoding != detail::kPlainDictionary)
        corrupt(page_name + ": dictionary encoding " + std::to_string(h.encoding) + " unsupported");
      const uint8_t* p = whole();
      detail::decode_values(detail::kPlain, p, usize, static_cast<size_t>(h.num_values), dict,
                            leaf.arena);
      have_dict = true;
      continue;
    }
    if (h.type == detail::kIndexPage) continue;
    if (h.type != detail::kDataPage && h.type != detail::kDataPageV2)
      corrupt(page_name + ": unknown page type " + std::to_string(h.type));

    const bool v2 = h.type == detail::kDataPageV2;
    if (v2 ? !h.has_v2_header : !h.has_data_header)
      corrupt(page_name + ": data page without its header");
    if (h.num_values < 0 || leaf.entries + static_cast<uint64_t>(h.num_values) > want)
      corrupt(page_name + ": more values than the column chunk declares");
    const size_t count = static_cast<size_t>(h.num_values);

    const uint8_t* vals;
    size_t vals_size;
    if (!v2) {
      const uint8_t* p = whole();
      size_t off = 0;
      if (node.max_rep > 0) {
        off += decode_levels(h.rep_encoding, p, usize, node.max_rep, count, tmp, true);
        append_levels(leaf.rep, tmp, node.max_rep, "repetition");
      }
      if (node.max_def > 0) {
        off += decode_levels(h.def_encoding, p + off, usize - off, node.max_def, count, tmp, true);
        append_levels(leaf.def, tmp, node.max_def, "definition");
      }
      vals = p + off;
      vals_size = usize - off;
    } else {
      if (h.rep_length < 0 || h.def_length < 0 ||
          static_cast<size_t>(h.rep_length) + static_cast<size_t>(h.def_length) > csize ||
          static_cast<size_t>(h.rep_length) + static_cast<size_t>(h.def_length) > usize)
        corrupt(page_name + ": level lengths beyond the page");
      const size_t rl = static_cast<size_t>(h.rep_length), dl = static_cast<size_t>(h.def_length);
      if (node.max_rep > 0) {
        decode_levels(detail::kRle, page, rl, node.max_rep, count, tmp, false);
        append_levels(leaf.rep, tmp, node.max_rep, "repetition");
      }
      if (node.max_def > 0) {
        decode_levels(detail::kRle, page + rl, dl, node.max_def, count, tmp, false);
        append_levels(leaf.def, tmp, node.max_def, "definition");
      }
      const uint8_t* vp = page + rl + dl;
      const size_t vc = csize - rl - dl, vu = usize - rl - dl;
      if (!h.is_compressed || cm.codec == detail::kUncompressed) {
        if (vc != vu) corrupt(page_name + ": sizes differ in an uncompressed page");
        vals = vp;
        vals_size = vc;
      } else {
        auto buf = std::make_unique<std::string>(vu, '\0');
        detail::decompress(cm.codec, vp, vc, reinterpret_cast<uint8_t*>(buf->data()), vu);
        vals = reinterpret_cast<const uint8_t*>(buf->data());
        vals_size = vu;
        leaf.arena.push_back(std::move(buf));
      }
    }

    size_t present = count;
    if (node.max_def > 0) {
      present = 0;
      for (size_t i = leaf.def.size() - count; i < leaf.def.size(); ++i)
        present += leaf.def[i] == node.max_def;
    }
    if (h.encoding == detail::kRleDictionary || h.encoding == detail::kPlainDictionary) {
      if (!have_dict) corrupt(page_name + ": dictionary-encoded page without a dictionary");
      if (present > 0) {
        if (vals_size < 1) corrupt(page_name + ": dictionary indices missing");
        int w = vals[0];
        tmp.assign(present, 0);
        detail::decode_hybrid(vals + 1, vals_size - 1, w, present, tmp.data());
        for (uint32_t idx : tmp) leaf.values.append_from(dict, idx);
      }
    } else {
      detail::decode_values(h.encoding, vals, vals_size, present, leaf.values, leaf.arena);
    }
    leaf.entries += count;
  }

  // Indexes used by record assembly.
  if (node.max_def > 0) {
    leaf.value_index.resize(leaf.entries);
    uint32_t k = 0;
    for (size_t i = 0; i < leaf.entries; ++i) {
      leaf.value_index[i] = k;
      k += leaf.def[i] == node.max_def;
    }
    if (k != leaf.values.size()) corrupt("value count differs from the definition levels");
  } else if (leaf.values.size() != leaf.entries) {
    corrupt("value count differs from the number of entries");
  }
  if (node.max_rep > 0) {
    for (size_t i = 0; i < leaf.entries; ++i)
      if (leaf.rep[i] == 0) leaf.row_start.push_back(static_cast<uint32_t>(i));
    if (leaf.entries > 0 && leaf.rep[0] != 0) corrupt("first repetition level is not 0");
    leaf.row_start.push_back(static_cast<uint32_t>(leaf.entries));
  }
}

namespace {

class Assembler {
 public:
  Assembler(const std::vector<SchemaNode>& nodes, const std::vector<Leaf>& leaves)
      : nodes_(nodes), leaves_(leaves) {}

  // Value of `n` inside one present instance of its parent; `r` covers n's leaves.
  Doc node_value(int n, const Range* r) const {
    const SchemaNode& node = nodes_[n];
    if (node.first_leaf == node.last_leaf) return Doc::object();
    if (node.repetition == 2) return list_of(n, r, false);
    if (node.repetition == 1) {
      const Leaf& l = leaves_[node.first_leaf];
      if (r[0].b >= r[0].e) corrupt("record assembly ran out of entries");
      if (l.def_at(r[0].b) < node.max_def) return Doc();
    }
    return instance(n, r);
  }

 private:
  Doc instance(int n, const Range* r) const {
    const SchemaNode& node = nodes_[n];
    if (node.children.empty()) {
      const Leaf& l = leaves_[node.first_leaf];
      if (r[0].e != r[0].b + 1) corrupt("record assembly: wrong number of entries for a value");
      if (l.def_at(r[0].b) < node.max_def) return Doc();
      return l.value(r[0].b);
    }
    const bool is_list = node.logical == 3 || node.converted_type == 3;
    const bool is_map = node.logical == 2 || node.converted_type == 1 || node.converted_type == 2;
    if ((is_list || is_map) && node.children.size() == 1 &&
        nodes_[node.children[0]].repetition == 2) {
      int rn = node.children[0];
      const SchemaNode& rep = nodes_[rn];
      bool unwrap = is_list && rep.children.size() == 1 && rep.name != "array" &&
                    rep.name != node.name + "_tuple";
      return list_of(rn, r, unwrap);
    }
    Doc obj = Doc::object();
    for (int c : node.children) {
      obj[nodes_[c].name] = node_value(c, r + (nodes_[c].first_leaf - node.first_leaf));
    }
    return obj;
  }

  // The elements of repeated node `rn` within one instance of its parent.
  Doc list_of(int rn, const Range* r, bool unwrap) const {
    const SchemaNode& rep = nodes_[rn];
    Doc arr = Doc::array();
    const int nl = rep.last_leaf - rep.first_leaf;
    const Leaf& l0 = leaves_[rep.first_leaf];
    if (r[0].b >= r[0].e) corrupt("record assembly ran out of entries");
    if (l0.def_at(r[0].b) < rep.max_def) {
      for (int k = 0; k < nl; ++k)
        if (r[k].e != r[k].b + 1) corrupt("record assembly: entries after an empty list");
      return arr;
    }
    std::vector<Range> cur(r, r + nl);
    std::vector<Range> sub(nl);
    const int child = unwrap ? rep.children[0] : rn;
    const int off = unwrap ? nodes_[child].first_leaf - rep.first_leaf : 0;
    while (cur[0].b < cur[0].e) {
      for (int k = 0; k < nl; ++k) {
        const Leaf& l = leaves_[rep.first_leaf + k];
        if (cur[k].b >= cur[k].e) corrupt("record assembly: list lengths differ between columns");
        uint32_t e = cur[k].b + 1;
        while (e < cur[k].e && l.rep_at(e) > rep.max_rep) ++e;
        sub[k] = Range{cur[k].b, e};
        cur[k].b = e;
      }
      arr.push_back(unwrap ? node_value(child, sub.data() + off) : instance(rn, sub.data()));
    }
    for (int k = 1; k < nl; ++k)
      if (cur[k].b != cur[k].e) corrupt("record assembly: list lengths differ between columns");
    return arr;
  }

  const std::vector<SchemaNode>& nodes_;
  const std::vector<Leaf>& leaves_;
};

}  // namespace

std::vector<int> ParquetFile::Impl::select(const ReadOptions& options) const {
  const SchemaNode& root = meta.schema[0];
  if (options.columns.empty()) return root.children;
  std::vector<int> out;
  for (int c : root.children)
    if (std::find(options.columns.begin(), options.columns.end(), meta.schema[c].name) !=
        options.columns.end())
      out.push_back(c);
  for (const auto& want : options.columns) {
    bool found = false;
    for (int c : root.children) found |= meta.schema[c].name == want;
    if (!found) {
      std::string have;
      for (int c : root.children) have += (have.empty() ? "" : ", ") + meta.schema[c].name;
      fail("no column '" + want + "'", "columns: " + have);
    }
  }
  return out;
}

std::vector<Doc> ParquetFile::Impl::read_row_group(size_t rg, const ReadOptions& options) const {
  if (rg >= meta.row_groups.size()) fail("row group " + std::to_string(rg) + " does not exist");
  const detail::RowGroupMeta& g = meta.row_groups[rg];
  if (g.columns.size() != leaf_nodes.size())
    fail("row group has " + std::to_string(g.columns.size()) + " column chunks, the schema " +
             std::to_string(leaf_nodes.size()) + " columns",
         "row group " + std::to_string(rg));
  if (g.num_rows < 0 || static_cast<uint64_t>(g.num_rows) > kMaxEntriesPerChunk)
    fail("row count out of range", "row group " + std::to_string(rg));
  const size_t rows = static_cast<size_t>(g.num_rows);
  const std::vector<int> top = select(options);

  std::vector<Leaf> leaves(leaf_nodes.size());
  for (int t : top) {
    const SchemaNode& tn = meta.schema[t];
    for (int k = tn.first_leaf; k < tn.last_leaf; ++k) {
      const std::string& col = meta.schema[leaf_nodes[k]].path;
      const std::string where = "row group " + std::to_string(rg) + ", column '" + col + "'";
      try {
        read_leaf(rg, k, leaves[k]);
        const Leaf& l = leaves[k];
        size_t leaf_rows = l.node->max_rep > 0 ? l.row_start.size() - 1 : l.entries;
        if (leaf_rows != rows)
          corrupt("has " + std::to_string(leaf_rows) + " rows, the row group " +
                  std::to_string(rows));
      } catch (const CorruptError& e) {
        fail(e.what(), where);
      } catch (const thrift::ThriftError& e) {
        fail(std::string("thrift decode error: ") + e.what(), where);
      } catch (const std::bad_alloc&) {
        fail("out of memory while decoding (corrupt sizes?)", where);
      }
    }
  }

  Assembler as(meta.schema, leaves);
  std::vector<Doc> out;
  out.reserve(rows);
  std::vector<Range> ranges(leaf_nodes.size());
  for (size_t i = 0; i < rows; ++i) {
    Doc row = Doc::object();
    for (int t : top) {
      const SchemaNode& tn = meta.schema[t];
      for (int k = tn.first_leaf; k < tn.last_leaf; ++k) {
        const Leaf& l = leaves[k];
        if (l.node->max_rep > 0)
          ranges[k] = Range{l.row_start[i], l.row_start[i + 1]};
        else
          ranges[k] = Range{static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1)};
      }
      try {
        row[tn.name] = as.node_value(t, ranges.data() + tn.first_leaf);
      } catch (const CorruptError& e) {
        fail(e.what(), "row group " + std::to_string(rg) + ", column '" + tn.name + "', row " +
                           std::to_string(i));
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

ParquetFile::ParquetFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetFile::ParquetFile(ParquetFile&&) noexcept = default;
ParquetFile& ParquetFile::operator=(ParquetFile&&) noexcept = default;
ParquetFile::~ParquetFile() = default;

ParquetFile ParquetFile::open(const std::filesystem::path& path) {
  // Parquet files are read whole; a Hub split of several GiB is sharded into files far below
  // this limit.
  std::string data = read_input_file(path, "parquet file", "a parquet file", uint64_t{16} << 30);
  return from_buffer(std::move(data), path.string());
}

ParquetFile ParquetFile::from_buffer(std::string data, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->data = std::move(data);
  const std::string& d = impl->data;
  if (d.size() < 12 || d.compare(0, 4, "PAR1") != 0 || d.compare(d.size() - 4, 4, "PAR1") != 0) {
    if (d.size() >= 4 && d.compare(d.size() - 4, 4, "PARE") == 0)
      impl->fail("encrypted parquet files are not supported");
    impl->fail("not a parquet file (bad magic or truncated)");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, d.data() + d.size() - 8, 4);
  if (footer_len > d.size() - 12)
    impl->fail("footer length " + std::to_string(footer_len) + " is beyond the file size " +
               std::to_string(d.size()));
  const uint8_t* footer = reinterpret_cast<const uint8_t*>(d.data()) + d.size() - 8 - footer_len;
  try {
    impl->meta = detail::parse_file_meta(footer, footer_len);
  } catch (const thrift::ThriftError& e) {
    impl->fail(std::string("thrift decode error in the file metadata: ") + e.what());
  } catch (const CorruptError& e) {
    impl->fail(std::string("invalid file metadata: ") + e.what());
  }
  auto& nodes = impl->meta.schema;
  for (size_t i = 1; i < nodes.size(); ++i)
    if (nodes[i].children.empty()) impl->leaf_nodes.push_back(static_cast<int>(i));
  if (nodes[0].children.empty() && nodes.size() > 1) impl->fail("invalid schema root");
  return ParquetFile(std::move(impl));
}

int64_t ParquetFile::num_rows() const { return impl_->meta.num_rows; }
size_t ParquetFile::num_row_groups() const { return impl_->meta.row_groups.size(); }
const std::string& ParquetFile::name() const { return impl_->name; }
const std::string& ParquetFile::created_by() const { return impl_->meta.created_by; }
const std::vector<SchemaNode>& ParquetFile::schema() const { return impl_->meta.schema; }

std::vector<std::string> ParquetFile::column_names() const {
  std::vector<std::string> out;
  for (int c : impl_->meta.schema[0].children) out.push_back(impl_->meta.schema[c].name);
  return out;
}

std::vector<Doc> ParquetFile::read_row_group(size_t index, const ReadOptions& options) const {
  return impl_->read_row_group(index, options);
}

std::vector<Doc> ParquetFile::read_all(const ReadOptions& options) const {
  std::vector<Doc> out;
  for (size_t i = 0; i < impl_->meta.row_groups.size(); ++i) {
    std::vector<Doc> part = impl_->read_row_group(i, options);
    if (out.empty())
      out = std::move(part);
    else
      std::move(part.begin(), part.end(), std::back_inserter(out));
  }
  return out;
}

std::vector<Doc> read_parquet(const std::filesystem::path& path, const ReadOptions& options) {
  return ParquetFile::open(path).read_all(options);
}

}  // namespace lmeval::parquet
