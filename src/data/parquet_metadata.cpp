// Parquet footer (FileMetaData) and page header decoding from the thrift compact protocol.
#include "data/parquet_internal.hpp"
#include "lmeval/data/thrift_compact.hpp"

#include <functional>

namespace lmeval::parquet::detail {

using thrift::CompactReader;
using thrift::CType;
using thrift::ThriftError;

namespace {

// Calls `on_field(id, type)` for each field; it returns false for fields it does not know.
template <class F>
void read_struct(CompactReader& r, F&& on_field) {
  r.begin_struct();
  int16_t id;
  CType t;
  while (r.next_field(id, t)) {
    if (!on_field(id, t)) r.skip(t);
  }
  r.end_struct();
}

template <class F>
void read_list(CompactReader& r, CType t, F&& on_elem) {
  CType et;
  uint32_t n = r.read_list_header(t, et);
  for (uint32_t i = 0; i < n; ++i) on_elem(et);
}

void expect_struct(CType t) {
  if (t != CType::kStruct) throw ThriftError("thrift type mismatch: expected struct");
}

void parse_logical_type(CompactReader& r, SchemaNode& node) {
  read_struct(r, [&](int16_t id, CType t) {
    expect_struct(t);
    node.logical = id;
    if (id == 10) {  // INTEGER
      read_struct(r, [&](int16_t f, CType ft) {
        if (f == 1)
          node.int_bit_width = r.read_i32(ft);
        else if (f == 2)
          node.int_signed = r.read_bool(ft);
        else
          return false;
        return true;
      });
    } else if (id == 5) {  // DECIMAL
      read_struct(r, [&](int16_t f, CType ft) {
        if (f == 1)
          node.scale = r.read_i32(ft);
        else if (f == 2)
          node.precision = r.read_i32(ft);
        else
          return false;
        return true;
      });
    } else if (id == 7 || id == 8) {  // TIME, TIMESTAMP
      read_struct(r, [&](int16_t f, CType ft) {
        if (f == 1)
          node.ts_adjusted_utc = r.read_bool(ft);
        else if (f == 2) {
          expect_struct(ft);
          read_struct(r, [&](int16_t u, CType ut) {
            expect_struct(ut);
            node.time_unit = u;
            r.skip(ut);
            return true;
          });
        } else
          return false;
        return true;
      });
    } else {
      r.skip(t);
    }
    return true;
  });
}

SchemaNode parse_schema_element(CompactReader& r, int32_t& num_children) {
  SchemaNode node;
  num_children = 0;
  read_struct(r, [&](int16_t id, CType t) {
    switch (id) {
      case 1:
        node.type = r.read_i32(t);
        break;
      case 2:
        node.type_length = r.read_i32(t);
        break;
      case 3:
        node.repetition = r.read_i32(t);
        break;
      case 4:
        node.name = r.read_string(t);
        break;
      case 5:
        num_children = r.read_i32(t);
        break;
      case 6:
        node.converted_type = r.read_i32(t);
        break;
      case 7:
        node.scale = r.read_i32(t);
        break;
      case 8:
        node.precision = r.read_i32(t);
        break;
      case 10:
        expect_struct(t);
        parse_logical_type(r, node);
        break;
      default:
        return false;
    }
    return true;
  });
  return node;
}

ColumnMeta parse_column_meta(CompactReader& r) {
  ColumnMeta m;
  m.has_meta = true;
  read_struct(r, [&](int16_t id, CType t) {
    switch (id) {
      case 1:
        m.type = r.read_i32(t);
        break;
      case 3:
        read_list(r, t, [&](CType et) { m.path.push_back(r.read_string(et)); });
        break;
      case 4:
        m.codec = r.read_i32(t);
        break;
      case 5:
        m.num_values = r.read_i64(t);
        break;
      case 7:
        m.total_compressed_size = r.read_i64(t);
        break;
      case 9:
        m.data_page_offset = r.read_i64(t);
        break;
      case 11:
        m.dictionary_page_offset = r.read_i64(t);
        break;
      default:
        return false;
    }
    return true;
  });
  return m;
}

RowGroupMeta parse_row_group(CompactReader& r) {
  RowGroupMeta g;
  read_struct(r, [&](int16_t id, CType t) {
    if (id == 1) {
      read_list(r, t, [&](CType et) {
        expect_struct(et);
        ColumnMeta m;
        std::string file_path;
        read_struct(r, [&](int16_t f, CType ft) {
          if (f == 1)
            file_path = r.read_string(ft);
          else if (f == 3) {
            expect_struct(ft);
            m = parse_column_meta(r);
          } else
            return false;
          return true;
        });
        m.file_path = file_path;
        g.columns.push_back(std::move(m));
      });
    } else if (id == 3) {
      g.num_rows = r.read_i64(t);
    } else {
      return false;
    }
    return true;
  });
  return g;
}

// Builds parent/children links and levels from the depth-first flattened schema.
void link_schema(std::vector<SchemaNode>& nodes, const std::vector<int32_t>& num_children) {
  if (nodes.empty()) throw CorruptError("empty schema");
  size_t next = 1;
  int leaves = 0;
  std::function<void(int, int)> visit = [&](int idx, int depth) {
    if (depth > 100) throw CorruptError("schema nested too deeply");
    SchemaNode& n = nodes[idx];
    n.first_leaf = leaves;
    int32_t kids = num_children[idx];
    if (kids < 0 || static_cast<size_t>(kids) > nodes.size() - next)
      throw CorruptError("schema element '" + n.name + "' has an invalid num_children");
    if (kids == 0 && idx != 0) {
      if (n.type < 0 || n.type > 7)
        throw CorruptError("schema leaf '" + n.name + "' has no valid physical type");
      ++leaves;
    }
    for (int32_t k = 0; k < kids; ++k) {
      // Checked per child: earlier siblings' subtrees consume elements too.
      if (next >= nodes.size())
        throw CorruptError("schema has fewer elements than num_children say");
      int c = static_cast<int>(next++);
      nodes[c].parent = idx;
      SchemaNode& child = nodes[c];
      if (child.repetition < 0 || child.repetition > 2)
        throw CorruptError("schema element '" + child.name + "' has an invalid repetition");
      child.max_def = nodes[idx].max_def + (child.repetition != 0 ? 1 : 0);
      child.max_rep = nodes[idx].max_rep + (child.repetition == 2 ? 1 : 0);
      child.path = idx == 0 ? child.name : nodes[idx].path + "." + child.name;
      nodes[idx].children.push_back(c);
      visit(c, depth + 1);
    }
    nodes[idx].last_leaf = leaves;
  };
  nodes[0].max_def = 0;
  nodes[0].max_rep = 0;
  visit(0, 0);
  if (next != nodes.size()) throw CorruptError("schema has elements outside the tree");
}

}  // namespace

FileMeta parse_file_meta(const uint8_t* data, size_t size) {
  CompactReader r(data, size);
  FileMeta meta;
  std::vector<int32_t> num_children;
  bool have_schema = false;
  read_struct(r, [&](int16_t id, CType t) {
    switch (id) {
      case 2:
        have_schema = true;
        read_list(r, t, [&](CType et) {
          expect_struct(et);
          int32_t kids;
          meta.schema.push_back(parse_schema_element(r, kids));
          num_children.push_back(kids);
        });
        break;
      case 3:
        meta.num_rows = r.read_i64(t);
        break;
      case 4:
        read_list(r, t, [&](CType et) {
          expect_struct(et);
          meta.row_groups.push_back(parse_row_group(r));
        });
        break;
      case 6:
        meta.created_by = r.read_string(t);
        break;
      default:
        return false;
    }
    return true;
  });
  if (!have_schema) throw CorruptError("file metadata has no schema");
  link_schema(meta.schema, num_children);
  return meta;
}

PageHeader parse_page_header(const uint8_t* data, size_t size, size_t& consumed) {
  CompactReader r(data, size);
  PageHeader h;
  read_struct(r, [&](int16_t id, CType t) {
    switch (id) {
      case 1:
        h.type = r.read_i32(t);
        break;
      case 2:
        h.uncompressed_size = r.read_i32(t);
        break;
      case 3:
        h.compressed_size = r.read_i32(t);
        break;
      case 5:
        expect_struct(t);
        h.has_data_header = true;
        read_struct(r, [&](int16_t f, CType ft) {
          switch (f) {
            case 1:
              h.num_values = r.read_i32(ft);
              break;
            case 2:
              h.encoding = r.read_i32(ft);
              break;
            case 3:
              h.def_encoding = r.read_i32(ft);
              break;
            case 4:
              h.rep_encoding = r.read_i32(ft);
              break;
            default:
              return false;
          }
          return true;
        });
        break;
      case 7:
        expect_struct(t);
        h.has_dict_header = true;
        read_struct(r, [&](int16_t f, CType ft) {
          switch (f) {
            case 1:
              h.num_values = r.read_i32(ft);
              break;
            case 2:
              h.encoding = r.read_i32(ft);
              break;
            default:
              return false;
          }
          return true;
        });
        break;
      case 8:
        expect_struct(t);
        h.has_v2_header = true;
        read_struct(r, [&](int16_t f, CType ft) {
          switch (f) {
            case 1:
              h.num_values = r.read_i32(ft);
              break;
            case 2:
              h.num_nulls = r.read_i32(ft);
              break;
            case 3:
              h.num_rows = r.read_i32(ft);
              break;
            case 4:
              h.encoding = r.read_i32(ft);
              break;
            case 5:
              h.def_length = r.read_i32(ft);
              break;
            case 6:
              h.rep_length = r.read_i32(ft);
              break;
            case 7:
              h.is_compressed = r.read_bool(ft);
              break;
            default:
              return false;
          }
          return true;
        });
        break;
      default:
        return false;
    }
    return true;
  });
  consumed = r.position();
  return h;
}

}  // namespace lmeval::parquet::detail
