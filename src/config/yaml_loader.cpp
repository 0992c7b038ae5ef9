// YAML files as the reference reads them: PyYAML's CSafeLoader (libyaml + SafeConstructor) with
// the `!function` constructor of lm_eval/tasks/_yaml_loader.py, into JSON values with positions.
#include "lmeval/config/yaml_loader.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"
#include "lmeval/core/python_format.hpp"
#include "yaml_composer.hpp"

namespace lmeval {

SourceLocation YamlFile::where(const std::string& pointer, const std::string& field) const {
  std::string p = pointer;
  while (true) {
    auto it = marks.find(p);
    if (it != marks.end())
      return {path.string(), it->second.first, it->second.second, field.empty() ? pointer : field};
    auto slash = p.rfind('/');
    if (slash == std::string::npos || p.empty()) break;
    p = p.substr(0, slash);
  }
  return {path.string(), 0, 0, field.empty() ? pointer : field};
}

Json make_function_ref(const std::string& name, const std::filesystem::path& file, int line) {
  Json ref = Json::object();
  ref["!function"] = name;
  ref["dir"] = file.parent_path().filename().string();
  ref["file"] = file.string();
  ref["line"] = line;
  return ref;
}

bool is_function_ref(const Json& v) { return v.is_object() && v.contains("!function"); }

std::string function_ref_name(const Json& v) { return v.at("!function").get<std::string>(); }

namespace {

using yaml::Node;

// SafeConstructor's scalar constructors (constructor.py). Explicitly tagged scalars (`!!int x`)
// reach them with any text; what Python's int()/float() would read but we do not is an error.
class Constructor {
 public:
  explicit Constructor(YamlFile& file) : file_(file) {}

  Json construct(const std::shared_ptr<Node>& node, const std::string& pointer) {
    file_.marks[pointer] = {node->start.line + 1, node->start.column + 1};
    if (active_.count(node.get()))
      fail(*node, "a recursive alias (a collection that contains itself) has no JSON value");
    // Aliases are copied into the JSON value, so a chain of them nests deeper than the
    // composer's syntactic limit, and a few lines can expand to billions of values. Both are
    // refused before they exhaust the stack or the memory.
    Budget depth_guard(*this, *node);
    path_bytes_ += pointer.size();
    if (path_bytes_ > kMaxPathBytes)
      fail(*node,
           "the key paths of the file's values (kept for error locations) pass " +
               std::to_string(kMaxPathBytes >> 20) + " MiB: aliases or long keys expand too far",
           "a task file of ordinary size once aliases are expanded");
    const std::string& tag = node->tag;
    const std::string core = tag.rfind(yaml::kTagPrefix, 0) == 0
                                 ? tag.substr(std::string(yaml::kTagPrefix).size())
                                 : std::string();
    if (tag == "!function") {
      const std::string& name = scalar(*node);
      if (name.find('.') == std::string::npos)
        fail(*node, "`!function " + name + "` has no module part",
             "!function module.function_name");
      return make_function_ref(name, file_.path, node->start.line + 1);
    }
    if (core == "str") return scalar(*node);
    if (core == "null") return scalar(*node), Json(nullptr);
    if (core == "bool") return construct_bool(*node);
    if (core == "int") return construct_int(*node);
    if (core == "float") return construct_float(*node);
    if (core == "seq" && node->kind == Node::Kind::Sequence) {
      active_.insert(node.get());
      Json out = Json::array();
      for (size_t i = 0; i < node->items.size(); ++i)
        out.push_back(construct(node->items[i], pointer + "/" + std::to_string(i)));
      active_.erase(node.get());
      return out;
    }
    if (core == "map" && node->kind == Node::Kind::Mapping) return construct_map(node, pointer);
    if (core == "timestamp")
      fail(*node, "`" + node->value + "` is a YAML timestamp, which PyYAML reads as a date object",
           "a quoted string");
    if (core == "merge" || core == "value")
      fail(*node, "`" + node->value + "` as a value has no constructor in PyYAML",
           "a quoted string");
    fail(*node, "could not determine a constructor for the tag '" + tag + "'",
         "plain YAML values (strings, numbers, booleans, null, lists, mappings) or !function");
  }

 private:
  // Values a file may expand to through aliases (a real task YAML has a few thousand).
  static constexpr size_t kMaxValues = 1000000;
  static constexpr size_t kMaxPathBytes = size_t{256} << 20;
  struct Budget {
    Constructor& c;
    Budget(Constructor& ctor, const Node& n) : c(ctor) {
      if (++c.depth_ > kMaxNestingDepth)
        c.fail(n,
               "lists and mappings nested more than " + std::to_string(kMaxNestingDepth) +
                   " levels deep once aliases are expanded",
               "at most " + std::to_string(kMaxNestingDepth) + " levels of nesting");
      if (++c.values_ > kMaxValues)
        c.fail(n, "aliases expand the file to more than " + std::to_string(kMaxValues) + " values",
               "aliases that expand to at most " + std::to_string(kMaxValues) + " values");
    }
    ~Budget() { --c.depth_; }
    Budget(const Budget&) = delete;
    Budget& operator=(const Budget&) = delete;
  };

  [[noreturn]] void fail(const Node& n, const std::string& what, const std::string& expected = {}) {
    throw UserError(what, {file_.path.string(), n.start.line + 1, n.start.column + 1, ""},
                    expected);
  }

  const std::string& scalar(const Node& n) {
    if (n.kind != Node::Kind::Scalar)
      fail(n, "the tag '" + n.tag + "' needs a scalar node, but found a " +
                  (n.kind == Node::Kind::Sequence ? "sequence" : "mapping"));
    return n.value;
  }

  Json construct_bool(const Node& n) {
    std::string v = scalar(n);
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "yes" || v == "true" || v == "on") return true;
    if (v == "no" || v == "false" || v == "off") return false;
    fail(n, "`" + n.value + "` is not a YAML boolean", "yes/no/true/false/on/off");
  }

  // construct_yaml_int: underscores dropped, then 0b / 0x / leading-0 octal / base 60 / decimal.
  Json construct_int(const Node& n) {
    std::string v;
    for (char c : scalar(n))
      if (c != '_') v.push_back(c);
    int sign = 1;
    if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
      if (v[0] == '-') sign = -1;
      v.erase(0, 1);
    }
    auto parse = [&](std::string_view digits, int base) -> __int128 {
      if (digits.empty()) fail(n, "`" + n.value + "` is not a YAML integer", "an integer");
      __int128 out = 0;
      for (char c : digits) {
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : 99;
        if (d >= base) fail(n, "`" + n.value + "` is not a YAML integer", "an integer");
        out = out * base + d;
        if (out > (static_cast<__int128>(1) << 64))
          fail(n, "the integer `" + n.value + "` is larger than 64 bits", "a 64-bit integer");
      }
      return out;
    };
    __int128 out = 0;
    if (v == "0")
      out = 0;
    else if (v.rfind("0b", 0) == 0)
      out = parse(std::string_view(v).substr(2), 2);
    else if (v.rfind("0x", 0) == 0)
      out = parse(std::string_view(v).substr(2), 16);
    else if (!v.empty() && v[0] == '0')
      out = parse(v, 8);
    else if (v.find(':') != std::string::npos) {
      std::vector<std::string> parts;
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ':');) parts.push_back(part);
      __int128 base = 1;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        out += parse(*it, 10) * base;
        base *= 60;
        if (out > (static_cast<__int128>(1) << 64) || base > (static_cast<__int128>(1) << 64))
          fail(n, "the integer `" + n.value + "` is larger than 64 bits", "a 64-bit integer");
      }
    } else
      out = parse(v, 10);
    out *= sign;
    if (out > INT64_MAX || out < INT64_MIN)
      fail(n, "the integer `" + n.value + "` is larger than 64 bits", "a 64-bit integer");
    return static_cast<int64_t>(out);
  }

  double python_float(const Node& n, std::string_view s) {
    double out = 0;
    bool ok = !s.empty() && s.find_first_not_of("0123456789.e+-") == std::string_view::npos &&
              s[0] != '+' && s[0] != '-';
    if (ok) {
      auto r = std::from_chars(s.data(), s.data() + s.size(), out);
      ok = r.ec == std::errc() && r.ptr == s.data() + s.size();
    }
    if (!ok) fail(n, "`" + n.value + "` is not a YAML float", "a decimal number");
    return out;
  }

  // construct_yaml_float: underscores dropped, lower-cased, .inf/.nan, base 60, else float().
  Json construct_float(const Node& n) {
    std::string v;
    for (char c : scalar(n))
      if (c != '_') v.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    double sign = 1;
    if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
      if (v[0] == '-') sign = -1;
      v.erase(0, 1);
    }
    if (v == ".inf") return sign * INFINITY;
    if (v == ".nan") return NAN;
    if (v.find(':') != std::string::npos) {
      std::vector<std::string> parts;
      std::stringstream ss(v);
      for (std::string part; std::getline(ss, part, ':');) parts.push_back(part);
      double base = 1, out = 0;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        out += python_float(n, *it) * base;
        base *= 60;
      }
      return sign * out;
    }
    return sign * python_float(n, v);
  }

  // SafeConstructor.flatten_mapping of PyYAML 6.0.4: the pairs of `<<` mappings (a mapping, or a
  // list of mappings in order) go before the node's own pairs, so own keys override them; `=` keys
  // become strings. Like PyYAML it rewrites the (possibly shared) node in place. A merged pair is
  // skipped when one with the same key *object* was merged before (`id(key_node.value)`): the same
  // key node reached twice, or, because CPython shares one str object per character below U+0100
  // and for "", any key of at most one such character. Other equal keys are all kept, and the
  // dict then takes the last one.
  static std::string merge_key_id(const std::shared_ptr<Node>& key) {
    if (key->kind == Node::Kind::Scalar) {
      const std::string& v = key->value;
      unsigned char c0 = v.empty() ? 0 : static_cast<unsigned char>(v[0]);
      if (v.empty() || (v.size() == 1 && c0 < 0x80) ||
          (v.size() == 2 && (c0 == 0xC2 || c0 == 0xC3)))
        return "text:" + v;
    }
    return "node:" + std::to_string(reinterpret_cast<uintptr_t>(key.get()));
  }

  void flatten(Node& node) {
    // Merge keys follow aliases too: `<<: *a` where a merges b, and so on.
    Budget depth_guard(*this, node);
    std::vector<std::pair<std::shared_ptr<Node>, std::shared_ptr<Node>>> merge;
    std::set<std::string> merged_ids;
    auto take = [&](const Node& from) {
      for (const auto& pair : from.pairs)
        if (merged_ids.insert(merge_key_id(pair.first)).second) merge.push_back(pair);
    };
    size_t i = 0;
    while (i < node.pairs.size()) {
      auto [key, value] = node.pairs[i];
      if (key->tag == std::string(yaml::kTagPrefix) + "merge") {
        node.pairs.erase(node.pairs.begin() + static_cast<long>(i));
        if (value->kind == Node::Kind::Mapping) {
          flatten(*value);
          take(*value);
        } else if (value->kind == Node::Kind::Sequence) {
          for (const auto& sub : value->items) {
            if (sub->kind != Node::Kind::Mapping)
              fail(*sub, "expected a mapping for merging", "`<<: *anchor` or a list of them");
            flatten(*sub);
            take(*sub);
          }
        } else {
          fail(*value, "expected a mapping or list of mappings for merging",
               "`<<: *anchor` or a list of them");
        }
      } else {
        if (key->tag == std::string(yaml::kTagPrefix) + "value")
          key->tag = std::string(yaml::kTagPrefix) + "str";
        ++i;
      }
    }
    if (!merge.empty()) node.pairs.insert(node.pairs.begin(), merge.begin(), merge.end());
  }

  Json construct_map(const std::shared_ptr<Node>& node, const std::string& pointer) {
    flatten(*node);
    active_.insert(node.get());
    Json out = Json::object();
    for (const auto& [key_node, value_node] : node->pairs) {
      Json key = construct(key_node, pointer + "/~key");
      if (key.is_array() || key.is_object())
        fail(*key_node, "a mapping key that is a collection (Python cannot hash it: PyYAML fails)",
             "a string key (quote it)");
      // PyYAML's bool, int, float and None keys are kept with their type (py::typed_key), as
      // the reference holds them: doc_to_choice: {no: No, yes: Yes} is {False: 'No', True: 'Yes'}.
      std::string k = py::typed_key(key);
      std::string child = pointer + "/" + k;
      Json v = construct(value_node, child);
      file_.marks[child] = {key_node->start.line + 1, key_node->start.column + 1};
      out[k] = std::move(v);  // a repeated key keeps its first position and takes the last value
    }
    file_.marks.erase(pointer + "/~key");
    active_.erase(node.get());
    return out;
  }

  YamlFile& file_;
  std::set<const Node*> active_;
  int depth_ = 0;
  size_t values_ = 0;
  size_t path_bytes_ = 0;
};

}  // namespace

YamlFile parse_yaml(std::string_view text, const std::filesystem::path& origin) {
  YamlFile file;
  file.path = origin;
  auto root = yaml::compose(text, origin.string());
  if (!root) {
    file.value = nullptr;
    return file;
  }
  file.value = Constructor(file).construct(root, "");
  return file;
}

YamlFile load_yaml(const std::filesystem::path& path) {
  return parse_yaml(read_input_file(path, "YAML file", "an existing YAML file"), path);
}

}  // namespace lmeval
