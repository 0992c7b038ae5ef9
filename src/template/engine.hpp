// Private parts of the Jinja engine: tokens, syntax tree, runtime values, shared helpers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lmeval/template/template.hpp"

namespace lmeval::tmpl {

// ---------------------------------------------------------------- syntax tree

enum class EK {
  kConst,
  kName,
  kAttr,
  kItem,
  kSlice,
  kCall,
  kFilter,
  kTest,
  kNot,
  kNeg,
  kPos,
  kBin,
  kCompare,
  kAnd,
  kOr,
  kCond,
  kList,
  kTuple,
  kDict,
  kConcat
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  EK k;
  size_t pos = 0;             // byte offset in the (newline-normalised) source, for error messages
  Json cval;                  // kConst
  std::string name;           // kName, kAttr, filter/test name, kBin operator
  ExprPtr a, b, c;            // object / operands / (kCond: a=body, b=test, c=else)
  std::vector<ExprPtr> args;  // call/filter/test args, list/tuple items, dict k,v,k,v, compare
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;  // kCompare operators
  ExprPtr dyn_args, dyn_kwargs;  // *args / **kwargs in calls
};

enum class SK {
  kText,
  kOutput,
  kIf,
  kFor,
  kSet,
  kSetBlock,
  kMacro,
  kBreak,
  kContinue,
  kBody,
  kFilterBlock,
  kWith
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Target {
  std::vector<std::string> names;
  bool tuple = false;
  std::string ns_attr;  // set ns.attr = ...: names[0] is the namespace variable
};

struct Node {
  SK k;
  size_t pos = 0;
  std::string text;                                // kText
  ExprPtr expr;                                    // output / set value / for iterable
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif
  Body body, else_body;
  Target target;
  ExprPtr cond;                  // for ... if cond
  std::vector<ExprPtr> filters;  // set-block / filter-block filters (kFilter with a == null)
  std::string name;              // macro name
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;                    // aligned to the last params
  std::vector<std::pair<Target, ExprPtr>> assigns;  // with
};

struct CompiledTemplate {
  Options opts;
  std::string origin;
  std::string source;  // newline-normalised
  Body body;
};

// Builds a UserError naming the origin and the line/column of `pos` in `source`.
[[noreturn]] void fail_at(const CompiledTemplate& t, size_t pos, const std::string& message,
                          const std::string& expected = {},
                          TemplateError::Kind kind = TemplateError::Kind::kSyntax);

void parse_template(CompiledTemplate& t);

// ---------------------------------------------------------------- runtime values

struct Object {
  virtual ~Object() = default;
};

struct Shape;
using ShapePtr = std::shared_ptr<const Shape>;
// What JSON cannot hold of a value's elements: which arrays stored in a list or dict are Python
// tuples (or jinja2's groupby namedtuples), by array index or dict position, and so on below.
struct Shape {
  struct Elem {
    bool tuple = false;
    bool group = false;
    ShapePtr inner;
  };
  std::vector<Elem> elems;
};

struct Value {
  enum Kind : unsigned char { kUndefined, kData, kNamespace, kLoop, kMacro, kMethod, kFunction };
  Kind kind = kUndefined;
  bool tuple = false;                // a Python tuple (repr with parentheses)
  bool group = false;                // jinja2's _GroupTuple (grouper, list): a tuple with names
  bool lenient = false;              // undefined: jinja2's plain Undefined even when strict
  unsigned char view = 0;            // 1 dict_items, 2 dict_keys, 3 dict_values (repr wrapper)
  const Json* ref = nullptr;         // kData
  std::shared_ptr<const Json> hold;  // keeps *ref alive when it is not the caller's variables
  ShapePtr inner;                    // tuples among the elements (null: none)
  std::shared_ptr<Object> obj;       // namespace / loop / macro / bound method
  std::string name;                  // undefined: error message; method/function: its name

  static Value data(Json j) {
    Value v;
    v.kind = kData;
    v.hold = std::make_shared<const Json>(std::move(j));
    v.ref = v.hold.get();
    return v;
  }
  // A value inside another one (`j` is one of parent.j()'s elements): shares its owner and
  // takes its shape from the parent's.
  static Value child(const Value& parent, const Json& j) {
    if (j.is_discarded()) return undefined("an undefined value stored in a list or dict");
    Value v;
    v.kind = kData;
    v.hold = parent.hold;
    v.ref = &j;
    if (parent.inner) v.take_shape(parent, j);
    return v;
  }
  static Value borrow(const Json& j) {
    Value v;
    v.kind = kData;
    v.ref = &j;
    return v;
  }
  static Value undefined(std::string message) {
    Value v;
    v.name = std::move(message);
    return v;
  }
  bool is_data() const { return kind == kData; }
  bool is_undefined() const { return kind == kUndefined; }
  const Json& j() const { return *ref; }

 private:
  void take_shape(const Value& parent, const Json& j);  // value.cpp
};

struct Namespace : Object {
  std::vector<std::pair<std::string, Value>> attrs;
  Value* find(const std::string& k) {
    for (auto& [n, v] : attrs)
      if (n == k) return &v;
    return nullptr;
  }
};

struct Loop : Object {
  std::vector<Value> items;
  size_t index0 = 0;
  int depth0 = 0;
};

struct BoundMethod : Object {
  Value self;
};

struct MacroObj : Object {
  const Node* node = nullptr;
};

// Python semantics helpers (value.cpp). Errors are thrown as TypeErr (message only); the
// renderer adds the location.
struct TypeErr {
  std::string message;
  bool undefined = false;  // jinja2 UndefinedError (a TemplateError) rather than a Python error
  bool jinja = false;      // another jinja2 TemplateError (TemplateRuntimeError)
};

bool is_str(const Value& v);
bool is_num(const Value& v);      // int, float or bool
bool is_int_like(const Json& j);  // int or bool
double as_double(const Json& j);
int64_t as_int(const Json& j);
std::string type_name(const Value& v);  // Python type name: 'str', 'dict', 'list', 'int', ...
std::string py_str(const Value& v, bool strict);  // str(v); undefined: '' or error
std::string py_repr(const Value& v);
bool truthy(const Value& v, bool strict);
bool py_eq(const Value& a, const Value& b);
bool json_eq(const Json& a, const Json& b);
int py_cmp(const Value& a, const Value& b);  // -1/0/1, TypeErr on unorderable types
int json_cmp(const Json& a, const Json& b);
std::vector<Value> iterate(const Value& v, bool strict);
int64_t py_len(const Value& v, bool strict);
Json to_json(const Value& v);  // data (namespace/undefined -> TypeErr)
// As to_json, but Undefined becomes a discarded JSON value (Python lists may hold Undefined).
Json to_json_or_undefined(const Value& v);
bool contains_undefined(const Json& j);
Value make_tuple(std::vector<Value> items);
Value make_list(const std::vector<Value>& items);
// The shape of a list or dict whose elements are `items` (by index / position); null when no
// element is or holds a tuple.
ShapePtr shape_of(const std::vector<Value>& items);
// The elements of a list or tuple value, each with its shape.
std::vector<Value> elements(const Value& v);

// markupsafe.escape of a str: & < > " ' as &amp; &lt; &gt; &#34; &#39;.
std::string markup_escape(const std::string& s);
// Python str.splitlines(keepends).
std::vector<std::string> py_splitlines(const std::string& s, bool keepends);

// UTF-8 helpers
bool is_ascii(std::string_view s);
std::u32string u32(std::string_view s);
std::string u8(std::u32string_view s);

// Python re.sub(pattern, repl, string, count) (pyre.cpp).
std::string re_sub(const std::string& pattern, const std::string& repl, const std::string& s,
                   int64_t count);

// ---------------------------------------------------------------- builtins (builtins.cpp)

struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // Positional argument i or keyword `name`; null when absent.
  const Value* get(size_t i, const char* name) const {
    if (i < pos.size()) return &pos[i];
    for (const auto& [k, v] : kw)
      if (k == name) return &v;
    return nullptr;
  }
};

struct Env {
  bool strict = true;
  bool chat = false;
  // random._randbelow of the rendering's generator (Options::randbelow, or a fresh
  // random.Random(0) of this rendering).
  std::function<uint64_t(uint64_t)> randbelow;
};

Value apply_filter(const Env& env, const std::string& name, const Value& in, const Args& args);
// wordwrap, urlize, xmlattr, urlencode, groupby, random (text_filters.cpp); nullopt for another
// name.
std::optional<Value> apply_text_filter(const Env& env, const std::string& name, const Value& in,
                                       const Args& args);
// The key under which `dict` holds the Python key `key` (a bool, number or None): an existing key
// Python holds equal (1 == 1.0 == True), else py::typed_key(key).
std::string dict_key_for(const Json& dict, const Json& key);
// The names of the filters and tests of the environment (jinja2's FILTERS and TESTS, plus
// regex_replace outside the chat environment).
bool is_builtin_filter(const std::string& name, bool chat);
bool is_builtin_test(const std::string& name);
bool apply_test(const Env& env, const std::string& name, const Value& in, const Args& args);
bool has_method(const Value& self, const std::string& name);
Value call_method(const Env& env, const Value& self, const std::string& name, const Args& args);
// getattr/getitem with Jinja's fallbacks (attribute first for `.`, item first for `[]`).
Value get_attr(const Env& env, const Value& obj, const std::string& name);
Value get_item(const Env& env, const Value& obj, const Value& key);
Value slice(const Value& obj, const Value* start, const Value* stop, const Value* step);
std::string py_format_percent(const std::string& fmt, const Value& args, bool strict);
std::string py_format_spec(const Value& v, const std::string& spec, bool strict);
Value binary_op(const std::string& op, const Value& a, const Value& b, bool strict);
bool contains(const Value& container, const Value& item, bool strict);

}  // namespace lmeval::tmpl
