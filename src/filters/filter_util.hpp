// Private helpers of the filters module: kwarg checking and Python-like operations on JSON values.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lmeval/core/did_you_mean.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/filters/filter.hpp"

namespace lmeval::filters {

using lmeval::did_you_mean;

// Checks a filter's kwargs against the parameters its reference __init__ takes. Filters whose
// reference class forwards **kwargs to Filter.__init__ (which ignores them) accept extra keys.
class Kwargs {
 public:
  Kwargs(std::string filter, const Json& kwargs, const SourceLocation& where,
         std::initializer_list<const char*> known, bool extra_allowed = false);

  bool has(const std::string& key) const { return kwargs_.contains(key); }
  const Json& get(const std::string& key) const { return kwargs_.at(key); }
  Json value(const std::string& key, const Json& fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  long long integer(const std::string& key, long long fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  // UserError naming "<field>.<key>".
  [[noreturn]] void fail(const std::string& key, const std::string& message,
                         const std::string& expected = {}) const;
  void require(const std::string& key) const;

 private:
  std::string filter_;
  Json kwargs_;
  SourceLocation where_;
};

// Python type name of the value a JSON value stands for ("str", "list", "dict", ...).
std::string py_type(const Json& v);
// iter(v): list items (not copied), characters of a str, keys of a dict; RuntimeError otherwise.
class PyItems {
 public:
  PyItems(const Json& v, const char* filter);
  PyItems(const PyItems&) = delete;  // items_ may point into owned_
  PyItems& operator=(const PyItems&) = delete;
  std::vector<Json>::const_iterator begin() const { return items_->begin(); }
  std::vector<Json>::const_iterator end() const { return items_->end(); }
  size_t size() const { return items_->size(); }
  const Json& operator[](size_t i) const { return (*items_)[i]; }

 private:
  std::vector<Json> owned_;
  const std::vector<Json>* items_;
};
inline PyItems py_iter(const Json& v, const char* filter) { return PyItems(v, filter); }
// len(v) for list/str/dict.
long long py_len(const Json& v, const char* filter);
// v[:k] for list/str (Python slice rules, negative k allowed).
Json py_slice_to(const Json& v, long long k, const char* filter);
// Python's == as dict keys compare (1 == 1.0 == True); arrays compare element-wise.
bool py_equal(const Json& a, const Json& b);
// The string inside v, or RuntimeError "'<type>' object has no attribute '<method>'".
const std::string& py_str(const Json& v, const char* method, const char* filter);

// Registration of each source file's filters.
void register_selection_filters(FilterRegistry& r);
void register_extraction_filters(FilterRegistry& r);
void register_transformation_filters(FilterRegistry& r);
void register_custom_filters(FilterRegistry& r);
void register_bbh_filters(FilterRegistry& r);

}  // namespace lmeval::filters
