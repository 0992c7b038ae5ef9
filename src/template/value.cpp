// Python semantics of template values: str/repr, truthiness, equality, ordering, iteration.
#include <cmath>

#include "lmeval/core/python_format.hpp"
#include "lmeval/core/unicode.hpp"
#include "template/engine.hpp"

namespace lmeval::tmpl {

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}
std::u32string u32(std::string_view s) { return unicode::decode(s); }
std::string u8(std::u32string_view s) { return unicode::encode(s); }

std::string markup_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<std::string> py_splitlines(const std::string& s, bool keepends) {
  std::vector<std::string> out;
  size_t i = 0, st = 0;
  while (i < s.size()) {
    size_t nl = 0;
    if (s[i] == '\n' || s[i] == '\v' || s[i] == '\f' || (s[i] >= 0x1c && s[i] <= 0x1e))
      nl = 1;
    else if (s[i] == '\r')
      nl = (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
    else if (s.compare(i, 2, "\xc2\x85") == 0)
      nl = 2;
    else if (s.compare(i, 3, "\xe2\x80\xa8") == 0 || s.compare(i, 3, "\xe2\x80\xa9") == 0)
      nl = 3;
    if (nl) {
      out.push_back(s.substr(st, i - st + (keepends ? nl : 0)));
      i += nl;
      st = i;
    } else {
      ++i;
    }
  }
  if (st < s.size()) out.push_back(s.substr(st));
  return out;
}

bool is_str(const Value& v) { return v.is_data() && v.j().is_string(); }
bool is_num(const Value& v) { return v.is_data() && (v.j().is_number() || v.j().is_boolean()); }
bool is_int_like(const Json& j) { return j.is_number_integer() || j.is_boolean(); }

double as_double(const Json& j) {
  if (j.is_boolean()) return j.get<bool>() ? 1.0 : 0.0;
  if (j.is_number_unsigned()) return static_cast<double>(j.get<uint64_t>());
  if (j.is_number_integer()) return static_cast<double>(j.get<int64_t>());
  return j.get<double>();
}

int64_t as_int(const Json& j) {
  if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
  if (j.is_number_unsigned()) return static_cast<int64_t>(j.get<uint64_t>());
  if (j.is_number_integer()) return j.get<int64_t>();
  return static_cast<int64_t>(j.get<double>());
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::kUndefined:
      return "Undefined";
    case Value::kNamespace:
      return "Namespace";
    case Value::kLoop:
      return "LoopContext";
    case Value::kMacro:
      return "Macro";
    case Value::kMethod:
      return "builtin_function_or_method";
    case Value::kFunction:
      return "function";
    case Value::kData:
      break;
  }
  const Json& j = v.j();
  switch (j.type()) {
    case Json::value_t::null:
      return "NoneType";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "int";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::string:
      return "str";
    case Json::value_t::array:
      return v.tuple ? "tuple" : "list";
    case Json::value_t::object:
      return "dict";
    case Json::value_t::binary:
      return "bytes";
    default:
      return "object";
  }
}

static void repr_value(const Value& v, std::string& out);

// repr() of data; a discarded JSON value stands for an Undefined stored in a list or dict.
static void json_repr(const Json& j, std::string& out) {
  switch (j.type()) {
    case Json::value_t::discarded:
      out += "Undefined";
      return;
    case Json::value_t::array: {
      out += '[';
      for (size_t i = 0; i < j.size(); ++i) {
        if (i) out += ", ";
        json_repr(j[i], out);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += py::key_repr(it.key());
        out += ": ";
        json_repr(it.value(), out);
      }
      out += '}';
      return;
    }
    default:
      out += py::repr(j);
  }
}

bool contains_undefined(const Json& j) {
  if (j.is_discarded()) return true;
  if (j.is_array() || j.is_object())
    for (const auto& e : j)
      if (contains_undefined(e)) return true;
  return false;
}

std::string py_repr(const Value& v) {
  std::string out;
  repr_value(v, out);
  return out;
}

static void repr_value(const Value& v, std::string& out) {
  switch (v.kind) {
    case Value::kUndefined:
      out += "Undefined";
      return;
    case Value::kNamespace: {
      auto* ns = static_cast<Namespace*>(v.obj.get());
      out += "<Namespace {";
      bool first = true;
      for (auto& [k, x] : ns->attrs) {
        if (!first) out += ", ";
        first = false;
        out += py::key_repr(k) + ": ";
        repr_value(x, out);
      }
      out += "}>";
      return;
    }
    case Value::kLoop:
      out += "<LoopContext>";
      return;
    case Value::kMacro:
      out += "<Macro>";
      return;
    case Value::kMethod:
      out += "<built-in method " + v.name + ">";
      return;
    case Value::kFunction:
      out += "<function " + v.name + ">";
      return;
    case Value::kData:
      break;
  }
  static const char* const kViews[] = {"", "dict_items(", "dict_keys(", "dict_values("};
  if (v.view) out += kViews[v.view];
  const auto& a = v.j();
  if ((v.tuple || v.inner) && a.is_array()) {
    out += v.tuple ? '(' : '[';
    for (size_t i = 0; i < a.size(); ++i) {
      if (i) out += ", ";
      repr_value(Value::child(v, a[i]), out);
    }
    if (v.tuple && a.size() == 1) out += ',';
    out += v.tuple ? ')' : ']';
  } else if (v.inner && a.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      out += py::key_repr(it.key());
      out += ": ";
      repr_value(Value::child(v, it.value()), out);
    }
    out += '}';
  } else {
    json_repr(a, out);
  }
  if (v.view) out += ')';
}

std::string py_str(const Value& v, bool strict) {
  if (v.is_undefined()) {
    if (strict && !v.lenient) throw TypeErr{v.name, true};
    return {};
  }
  if (v.is_data() && v.j().is_string()) return v.j().get<std::string>();
  return py_repr(v);
}

bool truthy(const Value& v, bool strict) {
  if (v.is_undefined()) {
    if (strict && !v.lenient) throw TypeErr{v.name, true};
    return false;
  }
  if (!v.is_data()) return true;
  const Json& j = v.j();
  switch (j.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return j.get<bool>();
    case Json::value_t::number_integer:
      return j.get<int64_t>() != 0;
    case Json::value_t::number_unsigned:
      return j.get<uint64_t>() != 0;
    case Json::value_t::number_float:
      return j.get<double>() != 0.0;
    case Json::value_t::string:
      return !j.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !j.empty();
    default:
      return true;
  }
}

bool json_eq(const Json& a, const Json& b) {
  bool an = a.is_number() || a.is_boolean(), bn = b.is_number() || b.is_boolean();
  if (an && bn) {
    if (is_int_like(a) && is_int_like(b)) return as_int(a) == as_int(b);
    return as_double(a) == as_double(b);
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_eq(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto f = b.find(it.key());
      if (f == b.end() || !json_eq(it.value(), *f)) return false;
    }
    return true;
  }
  return a == b;
}

bool py_eq(const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
  if (a.is_data() && b.is_data()) {
    const Json &x = a.j(), &y = b.j();
    if (x.is_array() && y.is_array() && a.tuple != b.tuple) return false;
    // A tuple below differs from a list where the other holds one.
    if ((a.inner || b.inner) && x.type() == y.type() && x.size() == y.size()) {
      if (x.is_array()) {
        for (size_t i = 0; i < x.size(); ++i)
          if (!py_eq(Value::child(a, x[i]), Value::child(b, y[i]))) return false;
        return true;
      }
      if (x.is_object()) {
        for (auto it = x.begin(); it != x.end(); ++it) {
          auto f = y.find(it.key());
          if (f == y.end() || !py_eq(Value::child(a, it.value()), Value::child(b, *f)))
            return false;
        }
        return true;
      }
    }
    return json_eq(x, y);
  }
  return a.obj == b.obj && a.kind == b.kind;
}

int json_cmp(const Json& a, const Json& b) {
  bool an = a.is_number() || a.is_boolean(), bn = b.is_number() || b.is_boolean();
  if (an && bn) {
    if (is_int_like(a) && is_int_like(b)) {
      int64_t x = as_int(a), y = as_int(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    double x = as_double(a), y = as_double(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (json_eq(a[i], b[i])) continue;
      return json_cmp(a[i], b[i]);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  throw TypeErr{"'<' not supported between these types"};
}

int py_cmp(const Value& a, const Value& b) {
  if (a.is_undefined()) throw TypeErr{a.name, true};  // Undefined.__lt__ raises
  if (b.is_undefined()) throw TypeErr{b.name, true};
  if (a.is_data() && b.is_data() && a.j().is_array() && b.j().is_array() && a.tuple != b.tuple)
    throw TypeErr{"'<' not supported between instances of '" + type_name(a) + "' and '" +
                  type_name(b) + "'"};
  if (!a.is_data() || !b.is_data())
    throw TypeErr{"'<' not supported between instances of '" + type_name(a) + "' and '" +
                  type_name(b) + "'"};
  try {
    return json_cmp(a.j(), b.j());
  } catch (const TypeErr&) {
    throw TypeErr{"'<' not supported between instances of '" + type_name(a) + "' and '" +
                  type_name(b) + "'"};
  }
}

std::vector<Value> iterate(const Value& v, bool strict) {
  std::vector<Value> out;
  if (v.is_undefined()) {
    if (strict && !v.lenient) throw TypeErr{v.name, true};
    return out;
  }
  if (v.kind == Value::kLoop) {
    return static_cast<Loop*>(v.obj.get())->items;
  }
  if (!v.is_data()) throw TypeErr{"'" + type_name(v) + "' object is not iterable"};
  const Json& j = v.j();
  if (j.is_array()) {
    out.reserve(j.size());
    for (const auto& e : j) out.push_back(Value::child(v, e));
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) out.push_back(Value::data(it.key()));
  } else if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    unicode::for_each_codepoint(
        s, [&](char32_t, std::string_view raw) { out.push_back(Value::data(std::string(raw))); });
  } else {
    throw TypeErr{"'" + type_name(v) + "' object is not iterable"};
  }
  return out;
}

int64_t py_len(const Value& v, bool strict) {
  if (v.is_undefined()) {
    if (strict && !v.lenient) throw TypeErr{v.name, true};
    return 0;
  }
  if (v.kind == Value::kLoop) return static_cast<Loop*>(v.obj.get())->items.size();
  if (!v.is_data()) throw TypeErr{"object of type '" + type_name(v) + "' has no len()"};
  const Json& j = v.j();
  if (j.is_string()) return static_cast<int64_t>(unicode::length(j.get_ref<const std::string&>()));
  if (j.is_array() || j.is_object()) return static_cast<int64_t>(j.size());
  throw TypeErr{"object of type '" + type_name(v) + "' has no len()"};
}

Json to_json(const Value& v) {
  if (v.is_data()) return v.j();
  if (v.kind == Value::kNamespace) {
    Json o = Json::object();
    for (auto& [k, x] : static_cast<Namespace*>(v.obj.get())->attrs) o[k] = to_json(x);
    return o;
  }
  if (v.is_undefined()) throw TypeErr{v.name.empty() ? "undefined value" : v.name, true};
  throw TypeErr{"a value of type '" + type_name(v) + "' cannot be stored here"};
}

Json to_json_or_undefined(const Value& v) {
  if (v.is_undefined()) return Json(Json::value_t::discarded);
  return to_json(v);
}

void Value::take_shape(const Value& parent, const Json& j) {
  const Json& p = parent.j();
  size_t index = 0;
  if (p.is_array()) {
    if (p.empty() || &j < &p[0] || &j > &p[p.size() - 1]) return;
    index = static_cast<size_t>(&j - &p[0]);
  } else if (p.is_object()) {
    auto it = p.begin();
    while (it != p.end() && &it.value() != &j) ++it, ++index;
    if (it == p.end()) return;
  } else {
    return;
  }
  if (index >= parent.inner->elems.size()) return;
  const Shape::Elem& e = parent.inner->elems[index];
  tuple = e.tuple && j.is_array();
  group = e.group && tuple;
  inner = e.inner;
}

ShapePtr shape_of(const std::vector<Value>& items) {
  std::shared_ptr<Shape> s;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& x = items[i];
    if (!x.is_data() || !(x.tuple || x.inner)) continue;
    if (!s) s = std::make_shared<Shape>();
    s->elems.resize(i + 1);
    s->elems[i] = {x.tuple, x.group, x.inner};
  }
  return s;
}

std::vector<Value> elements(const Value& v) {
  std::vector<Value> out;
  out.reserve(v.j().size());
  for (const auto& e : v.j()) out.push_back(Value::child(v, e));
  return out;
}

Value make_list(const std::vector<Value>& items) {
  Json a = Json::array();
  for (auto& x : items) a.push_back(to_json_or_undefined(x));
  Value v = Value::data(std::move(a));
  v.inner = shape_of(items);
  return v;
}

// By value: with a const reference, a call with a temporary vector would pick std::make_tuple
// (argument-dependent lookup) over this function.
Value make_tuple(std::vector<Value> items) {  // NOLINT(performance-unnecessary-value-param)
  Value v = make_list(items);
  v.tuple = true;
  return v;
}

}  // namespace lmeval::tmpl
