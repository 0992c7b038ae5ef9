// FilterRegistry, FilterEnsemble (lm_eval/api/filter.py, lm_eval/filters/__init__.py) and helpers.
#include <algorithm>
#include <cmath>
#include <mutex>

#include "filters/filter_util.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval {

namespace filters {

static std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Kwargs::Kwargs(std::string filter, const Json& kwargs, const SourceLocation& where,
               std::initializer_list<const char*> known, bool extra_allowed)
    : filter_(std::move(filter)),
      kwargs_(kwargs.is_null() ? Json::object() : kwargs),
      where_(where) {
  if (!kwargs_.is_object())
    throw UserError("the arguments of filter '" + filter_ + "' must be a mapping", where_);
  if (extra_allowed) return;
  std::vector<std::string> names(known.begin(), known.end());
  for (auto it = kwargs_.begin(); it != kwargs_.end(); ++it) {
    if (std::find(names.begin(), names.end(), it.key()) != names.end()) continue;
    std::string hint = did_you_mean(it.key(), names);
    fail(it.key(),
         "unknown argument '" + it.key() + "' for filter '" + filter_ + "'" +
             (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
         names.empty() ? "no arguments" : "one of: " + join(names));
  }
}

void Kwargs::fail(const std::string& key, const std::string& message,
                  const std::string& expected) const {
  SourceLocation at = where_;
  at.field = (at.field.empty() ? std::string() : at.field + ".") + key;
  throw UserError(message, at, expected);
}

void Kwargs::require(const std::string& key) const {
  if (!has(key)) fail(key, "filter '" + filter_ + "' requires the argument '" + key + "'");
}

Json Kwargs::value(const std::string& key, const Json& fallback) const {
  return has(key) ? kwargs_.at(key) : fallback;
}

std::string Kwargs::string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const Json& v = kwargs_.at(key);
  if (!v.is_string())
    fail(key,
         "argument '" + key + "' of filter '" + filter_ + "' must be a string, got " + v.dump());
  return v.get<std::string>();
}

long long Kwargs::integer(const std::string& key, long long fallback) const {
  if (!has(key)) return fallback;
  const Json& v = kwargs_.at(key);
  if (!v.is_number_integer())
    fail(key,
         "argument '" + key + "' of filter '" + filter_ + "' must be an integer, got " + v.dump());
  return v.get<long long>();
}

bool Kwargs::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const Json& v = kwargs_.at(key);
  // Python truthiness is what the reference uses (`if self.ignore_case:`).
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_null()) return false;
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  return false;
}

std::string py_type(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      return "str";
    case Json::value_t::array:
      return "list";
    case Json::value_t::object:
      return "dict";
    case Json::value_t::null:
      return "NoneType";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_float:
      return "float";
    default:
      return "int";
  }
}

PyItems::PyItems(const Json& v, const char* filter) : items_(&owned_) {
  if (v.is_array()) {
    items_ = &v.get_ref<const Json::array_t&>();
  } else if (v.is_string()) {
    unicode::for_each_codepoint(v.get_ref<const std::string&>(),
                                [&](char32_t, std::string_view raw) { owned_.emplace_back(raw); });
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) owned_.emplace_back(it.key());
  } else {
    throw RuntimeError(std::string("filter '") + filter + "': '" + py_type(v) +
                       "' object is not iterable (the reference raises TypeError)");
  }
}

long long py_len(const Json& v, const char* filter) {
  if (v.is_string())
    return static_cast<long long>(unicode::length(v.get_ref<const std::string&>()));
  if (v.is_array() || v.is_object()) return static_cast<long long>(v.size());
  throw RuntimeError(std::string("filter '") + filter + "': object of type '" + py_type(v) +
                     "' has no len() (the reference raises TypeError)");
}

Json py_slice_to(const Json& v, long long k, const char* filter) {
  long long n = py_len(v, filter);
  if (v.is_object())
    throw RuntimeError(std::string("filter '") + filter +
                       "': 'dict' object is not subscriptable (the reference raises TypeError)");
  long long end = k < 0 ? std::max(0LL, n + k) : std::min(n, k);
  if (v.is_array()) return Json(v.begin(), v.begin() + end);
  std::u32string cps = unicode::decode(v.get_ref<const std::string&>());
  return unicode::encode(std::u32string_view(cps).substr(0, static_cast<size_t>(end)));
}

bool py_equal(const Json& a, const Json& b) {
  bool an = a.is_number() || a.is_boolean(), bn = b.is_number() || b.is_boolean();
  if (an && bn) {
    if (a.is_number_float() || b.is_number_float()) {
      double x = a.is_boolean() ? a.get<bool>() : a.get<double>();
      double y = b.is_boolean() ? b.get<bool>() : b.get<double>();
      return x == y;
    }
    auto as_int = [](const Json& v) -> long double {
      if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
      if (v.is_number_unsigned()) return static_cast<long double>(v.get<unsigned long long>());
      return static_cast<long double>(v.get<long long>());
    };
    return as_int(a) == as_int(b);
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!py_equal(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

const std::string& py_str(const Json& v, const char* method, const char* filter) {
  if (!v.is_string())
    throw RuntimeError(std::string("filter '") + filter + "': '" + py_type(v) +
                       "' object has no attribute '" + method +
                       "' (the reference raises AttributeError)");
  return v.get_ref<const std::string&>();
}

}  // namespace filters

FilterRegistry& FilterRegistry::instance() {
  static FilterRegistry registry;
  return registry;
}

void FilterRegistry::add(std::string name, FilterFactory factory) {
  std::unique_lock lock(mu_);
  factories_[std::move(name)] = std::move(factory);
}

void FilterRegistry::add_function(std::string name, FilterFunction fn) {
  std::unique_lock lock(mu_);
  functions_[std::move(name)] = std::move(fn);
}

bool FilterRegistry::contains(const std::string& name) const {
  std::shared_lock lock(mu_);
  return factories_.count(name) > 0;
}

std::vector<std::string> FilterRegistry::names() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [k, v] : factories_) out.push_back(k);
  return out;
}

std::unique_ptr<Filter> FilterRegistry::create(const std::string& name, const Json& kwargs,
                                               const SourceLocation& where) const {
  FilterFactory factory;
  {
    std::shared_lock lock(mu_);
    auto it = factories_.find(name);
    if (it != factories_.end()) factory = it->second;
  }
  if (!factory) {
    SourceLocation at = where;
    at.field = (at.field.empty() ? std::string() : at.field + ".") + "function";
    // Only plain names in the list: "<family>/utils.X" entries are reached through !function.
    std::vector<std::string> known;
    for (const auto& n : names())
      if (n.find('/') == std::string::npos && n.find('.') == std::string::npos) known.push_back(n);
    std::string hint = filters::did_you_mean(name, known);
    throw UserError(
        "unknown filter '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
        at, "one of: " + filters::join(known));
  }
  return factory(kwargs, where);
}

namespace {
PythonFilterFactory& python_factory_slot() {
  static PythonFilterFactory f;
  return f;
}
}  // namespace

void set_python_filter_factory(PythonFilterFactory factory) {
  python_factory_slot() = std::move(factory);
}
const PythonFilterFactory& python_filter_factory() { return python_factory_slot(); }

std::unique_ptr<Filter> FilterRegistry::create_from_ref(const Json& ref, const Json& kwargs,
                                                        const SourceLocation& where) const {
  std::string name = ref.value("!function", "");
  std::string family = ref.value("dir", "");
  if (ref.contains("python_module") && python_filter_factory())
    return python_filter_factory()(ref, kwargs, where, /*is_class=*/true);
  if (ref.contains("python_module")) {
    // bind_function_sources found no C++ port of this exact module source (issue 15).
    SourceLocation at = where;
    at.field = (at.field.empty() ? std::string() : at.field + ".") + "function";
    if (ref.contains("file")) at.file = ref["file"].get<std::string>();
    if (ref.contains("line") && ref["line"].is_number_integer()) at.line = ref["line"].get<int>();
    throw UserError("filter class `!function " + name +
                        "` needs Python: lm-eval has no C++ port of " +
                        ref["python_module"].get<std::string>() +
                        ", and running Python task code is not supported yet",
                    at);
  }
  if (!family.empty() && contains(family + "/" + name))
    return create(family + "/" + name, kwargs, where);
  if (contains(name)) return create(name, kwargs, where);
  SourceLocation at = where;
  at.field = (at.field.empty() ? std::string() : at.field + ".") + "function";
  if (ref.contains("file")) at.file = ref["file"].get<std::string>();
  if (ref.contains("line") && ref["line"].is_number_integer()) at.line = ref["line"].get<int>();
  throw UserError("filter class '!function " + name + "'" +
                      (family.empty() ? "" : " of task folder '" + family + "'") +
                      " has no C++ implementation",
                  at);
}

const FilterFunction* FilterRegistry::find_function(const std::string& name,
                                                    const std::string& family) const {
  std::shared_lock lock(mu_);
  if (!family.empty()) {
    auto it = functions_.find(family + "/" + name);
    if (it != functions_.end()) return &it->second;
  }
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

void register_builtin_filters() {
  static std::once_flag once;
  std::call_once(once, [] {
    FilterRegistry& r = FilterRegistry::instance();
    filters::register_selection_filters(r);
    filters::register_extraction_filters(r);
    filters::register_transformation_filters(r);
    filters::register_custom_filters(r);
    filters::register_bbh_filters(r);
  });
}

static std::unique_ptr<Filter> make_step(const Json& function, const Json& kwargs,
                                         const SourceLocation& where) {
  const FilterRegistry& r = FilterRegistry::instance();
  if (function.is_object() && function.contains("!function"))
    return r.create_from_ref(function, kwargs, where);
  return r.create(function.get<std::string>(), kwargs, where);
}

FilterEnsemble FilterEnsemble::from_config(const Json& entry, const SourceLocation& where) {
  register_builtin_filters();
  auto field = [&](const std::string& f) {
    SourceLocation at = where;
    at.field = (at.field.empty() ? std::string() : at.field + ".") + f;
    return at;
  };
  if (!entry.is_object())
    throw UserError("a filter_list entry must be a mapping with 'name' and 'filter'", where,
                    "{name: ..., filter: [{function: ...}, ...]}");
  if (!entry.contains("name")) throw UserError("missing 'name'", field("name"));
  if (!entry["name"].is_string())
    throw UserError("the pipeline name must be a string, got " + entry["name"].dump(),
                    field("name"));
  if (!entry.contains("filter")) throw UserError("missing 'filter'", field("filter"));
  const Json& list = entry["filter"];
  if (!list.is_array())
    throw UserError("'filter' must be a list of {function: ..., ...}", field("filter"));
  FilterEnsemble out;
  out.name_ = entry["name"].get<std::string>();
  for (size_t i = 0; i < list.size(); ++i) {
    SourceLocation at = field("filter[" + std::to_string(i) + "]");
    const Json& step = list[i];
    if (!step.is_object()) throw UserError("a filter step must be a mapping with 'function'", at);
    if (!step.contains("function")) {
      SourceLocation f = at;
      f.field += ".function";
      throw UserError("missing 'function'", f);
    }
    const Json& function = step["function"];
    if (!function.is_string() && !(function.is_object() && function.contains("!function"))) {
      SourceLocation f = at;
      f.field += ".function";
      throw UserError("'function' must be a filter name, got " + function.dump(), f);
    }
    Json kwargs = Json::object();
    for (auto it = step.begin(); it != step.end(); ++it)
      if (it.key() != "function") kwargs[it.key()] = it.value();
    make_step(function, kwargs, at);  // validates now; instances are made again per apply
    out.steps_.emplace_back(function, std::move(kwargs));
    out.where_.push_back(at);
  }
  return out;
}

FilterEnsemble FilterEnsemble::default_none() {
  register_builtin_filters();
  FilterEnsemble out;
  out.name_ = "none";
  out.steps_.emplace_back(Json("take_first"), Json::object());
  out.where_.emplace_back();
  return out;
}

std::vector<Json> FilterEnsemble::apply(const std::vector<Json>& resps,
                                        const std::vector<const Json*>& docs) const {
  std::vector<Json> cur = resps;
  for (size_t i = 0; i < steps_.size(); ++i)
    cur = make_step(steps_[i].first, steps_[i].second, where_[i])->apply(std::move(cur), docs);
  return cur;
}

}  // namespace lmeval
