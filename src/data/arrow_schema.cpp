// Arrow-like schema inference over JSON rows and the casts of datasets' table_cast.
#include "lmeval/data/arrow_schema.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval::arrow {

bool Type::operator==(const Type& o) const {
  if (kind != o.kind) return false;
  if (kind == kList) return *item == *o.item;
  if (kind == kStruct) return fields == o.fields;
  return true;
}

std::string type_name(const Type& t) {
  switch (t.kind) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int64";
    case Type::kUInt:
      return "uint64";
    case Type::kFloat:
      return "double";
    case Type::kString:
      return "large_string";
    case Type::kBinary:
      return "binary";
    case Type::kJson:
      return "json";
    case Type::kList:
      return "list<item: " + type_name(*t.item) + ">";
    case Type::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.fields.size(); ++i)
        s += (i ? ", " : "") + t.fields[i].first + ": " + type_name(t.fields[i].second);
      return s + ">";
    }
  }
  return "?";
}

namespace {

bool is_int(const Doc& v) {
  return v.is_number_integer() &&
         (!v.is_number_unsigned() ||
          v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

Type merge(const Type& a, const Type& b, bool root);

Type infer_value(const Doc& v) {
  if (v.is_null()) return Type::of(Type::kNull);
  if (v.is_boolean()) return Type::of(Type::kBool);
  if (is_int(v)) return Type::of(Type::kInt);
  if (v.is_number_unsigned()) return Type::of(Type::kUInt);
  if (v.is_number_float()) return Type::of(Type::kFloat);
  if (v.is_string()) return Type::of(Type::kString);
  if (v.is_binary()) return Type::of(Type::kBinary);
  if (v.is_array()) {
    Type t = Type::of(Type::kList);
    Type item = Type::of(Type::kNull);
    for (const auto& e : v) item = merge(item, infer_value(e), false);
    t.item = std::make_shared<Type>(std::move(item));
    return t;
  }
  // A nested mapping with no keys is `Json` (find_mixed_struct_types_field_paths: `not
  // content[0]`).
  if (v.empty()) return Type::of(Type::kJson);
  Type t = Type::of(Type::kStruct);
  for (auto it = v.begin(); it != v.end(); ++it) t.fields.emplace_back(it.key(), infer_value(*it));
  return t;
}

bool numeric(Type::Kind k) { return k == Type::kInt || k == Type::kUInt || k == Type::kFloat; }

Type merge(const Type& a, const Type& b, bool root) {
  if (a.kind == Type::kNull) return b;
  if (b.kind == Type::kNull) return a;
  if (a.kind == Type::kJson || b.kind == Type::kJson) return Type::of(Type::kJson);
  if (numeric(a.kind) && numeric(b.kind)) {
    if (a.kind == b.kind) return a;
    return Type::of(Type::kFloat);  // pyarrow's JSON reader promotes int64 to double
  }
  if (a.kind != b.kind) return Type::of(Type::kJson);  // "Column(/x) changed from ... to ..."
  if (a.kind == Type::kList) {
    Type t = a;
    t.item = std::make_shared<Type>(merge(*a.item, *b.item, false));
    return t;
  }
  if (a.kind != Type::kStruct) return a;
  if (!root) {
    // Nested mappings must have one key set (find_mixed_struct_types_field_paths).
    if (a.fields.size() != b.fields.size()) return Type::of(Type::kJson);
    for (const auto& [k, _] : b.fields) {
      bool found = false;
      for (const auto& f : a.fields) found = found || f.first == k;
      if (!found) return Type::of(Type::kJson);
    }
  }
  Type t = a;
  for (const auto& [k, bt] : b.fields) {
    bool found = false;
    for (auto& f : t.fields)
      if (f.first == k) {
        f.second = merge(f.second, bt, false);
        found = true;
        break;
      }
    if (!found) t.fields.emplace_back(k, bt);
  }
  return t;
}

// Arrow's cast of a double to text: the shortest digits, without Python's trailing ".0".
std::string arrow_float_text(double d) {
  std::string s = py::float_repr(d);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

[[noreturn]] void cast_error(const std::string& what, const std::string& origin,
                             const std::string& column) {
  throw UserError("datasets cannot cast this file to the split's schema: " + what,
                  {origin, 0, 0, column},
                  "every file of a split with the columns and types of its first file (datasets "
                  "casts later files to the first one's features)");
}

Doc conform(const Doc& v, const Type& t, const std::string& origin, const std::string& path) {
  if (t.kind == Type::kJson) return v;
  if (v.is_null()) return v;
  switch (t.kind) {
    case Type::kNull:
      cast_error("Couldn't cast array of type " + type_name(infer_value(v)) + " to null", origin,
                 path);
    case Type::kBool:
      if (v.is_boolean()) return v;
      break;
    case Type::kInt:
    case Type::kUInt:
      if (is_int(v) || v.is_number_unsigned()) return v;
      if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
      if (v.is_number_float()) {
        double d = v.get<double>();
        if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18)
          return static_cast<int64_t>(d);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%f", d);
        cast_error(std::string("Float value ") + buf + " was truncated converting to int64", origin,
                   path);
      }
      break;
    case Type::kFloat:
      if (v.is_number()) return v.get<double>();
      if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
      break;
    case Type::kString:
      if (v.is_string()) return v;
      if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
      if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
      if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
      if (v.is_number_float()) return arrow_float_text(v.get<double>());
      break;
    case Type::kBinary:
      if (v.is_binary()) return v;
      if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        return Doc::binary(std::vector<uint8_t>(s.begin(), s.end()));
      }
      break;
    case Type::kList:
      if (v.is_array()) {
        Doc out = Doc::array();
        for (const auto& e : v) out.push_back(conform(e, *t.item, origin, path + "[]"));
        return out;
      }
      break;
    case Type::kStruct:
      if (v.is_object()) {
        Doc out = Doc::object();
        for (const auto& [k, ft] : t.fields) {
          auto it = v.find(k);
          out[k] =
              it == v.end() ? Doc() : conform(*it, ft, origin, path.empty() ? k : path + "." + k);
        }
        for (auto it = v.begin(); it != v.end(); ++it) {
          bool known = false;
          for (const auto& f : t.fields) known = known || f.first == it.key();
          if (!known)
            cast_error("column '" + (path.empty() ? it.key() : path + "." + it.key()) +
                           "' is not in the first file (column names don't match)",
                       origin, path.empty() ? it.key() : path + "." + it.key());
        }
        return out;
      }
      break;
    case Type::kJson:
      break;
  }
  cast_error("Couldn't cast " + type_name(infer_value(v)) + " to " + type_name(t), origin, path);
}

}  // namespace

Type infer_json_rows(const std::vector<Doc>& rows) {
  Type t = Type::of(Type::kStruct);
  for (const auto& r : rows) {
    Type rt = Type::of(Type::kStruct);
    for (auto it = r.begin(); it != r.end(); ++it)
      rt.fields.emplace_back(it.key(), infer_value(*it));
    t = merge(t, rt, true);
  }
  return t;
}

void conform_rows(std::vector<Doc>& rows, const Type& schema, const std::string& origin) {
  for (auto& r : rows) r = conform(r, schema, origin, "");
}

}  // namespace lmeval::arrow
