// model_args declared once per backend, as the run flags are (config/run_options.hpp): each entry
// names a key, what it takes, its default, the values it accepts and what it does, and how it
// sets the backend's args struct. Parsing, the unknown-key error, `lm-eval ls models`, `validate`
// and docs/models.md's model_args lists all read the backend's table (tests/models/*model_arg*
// check the docs against the tables).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/model_arg_info.hpp"
#include "lmeval/models/model_args.hpp"

namespace lmeval {

// One key of a backend's table: its description and how a value given for it sets `Args`.
template <class Args>
struct ModelArg {
  ModelArgInfo info;
  // None / "None" / "none" leaves the default in place (apply is not called).
  bool none_keeps_default = true;
  // Coerces and range-checks `value` (UserError naming --model_args <key>) and sets the field.
  std::function<void(Args&, const Json& value)> apply;
};

template <class Args>
using ModelArgTable = std::vector<ModelArg<Args>>;

// In which order a table applies the given model_args: as given (a later key sees what an earlier
// one set), or in the table's order.
enum class ModelArgOrder { AsGiven, Table };

namespace model_args {

// The keys of a table, in its order (the unknown-key error lists them so).
template <class Args>
std::vector<std::string> keys(const ModelArgTable<Args>& table) {
  std::vector<std::string> out;
  for (const auto& a : table) out.push_back(a.info.key);
  return out;
}

template <class Args>
std::vector<ModelArgInfo> infos(const ModelArgTable<Args>& table) {
  std::vector<ModelArgInfo> out;
  for (const auto& a : table) out.push_back(a.info);
  return out;
}

// Applies every key of `model_args` (an object; keys already checked with check_known) to `out`.
template <class Args>
void apply(const ModelArgTable<Args>& table, const Json& model_args, Args& out,
           ModelArgOrder order) {
  if (!model_args.is_object()) return;
  auto apply_one = [&](const ModelArg<Args>& a, const Json& v) {
    if (a.none_keeps_default && is_none(v)) return;
    if (a.apply) a.apply(out, v);
  };
  if (order == ModelArgOrder::AsGiven) {
    for (auto it = model_args.begin(); it != model_args.end(); ++it)
      for (const auto& a : table)
        if (a.info.key == it.key()) apply_one(a, it.value());
  } else {
    for (const auto& a : table)
      if (auto it = model_args.find(a.info.key); it != model_args.end()) apply_one(a, *it);
  }
}

// ---- entries (the common shapes; anything else is written out with ModelArg{...}) ----

// A text value (Python's str() of it) into a std::string or std::optional<std::string> member.
template <class Args, class M>
ModelArg<Args> text(M Args::*m, ModelArgInfo info) {
  info.type = ModelArgType::Text;
  return {std::move(info), true, [m](Args& a, const Json& v) { a.*m = as_string(v); }};
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// An integer from lo to hi (as_int_in_range) into an integer member (optional or not).
template <class Args, class M>
ModelArg<Args> integer(M Args::*m, int64_t lo, int64_t hi, ModelArgInfo info) {
  info.type = ModelArgType::Int;
  const std::string key = info.key;
  return {std::move(info), true, [m, key, lo, hi](Args& a, const Json& v) {
            const int64_t n = as_int_in_range(v, key, lo, hi);
            if constexpr (IsOptional<M>::value)
              a.*m = static_cast<typename M::value_type>(n);
            else
              a.*m = static_cast<M>(n);
          }};
}

// A boolean (as_bool) into a bool or std::optional<bool> member.
template <class Args, class M>
ModelArg<Args> boolean(M Args::*m, ModelArgInfo info) {
  info.type = ModelArgType::Bool;
  const std::string key = info.key;
  return {std::move(info), true, [m, key](Args& a, const Json& v) { a.*m = as_bool(v, key); }};
}

// A key accepted for the reference's sake whose value is only checked (`check`, may be empty).
template <class Args>
ModelArg<Args> accepted(ModelArgInfo info, const std::function<void(const Json&)>& check = {}) {
  return {std::move(info), true, [check](Args&, const Json& v) {
            if (check) check(v);
          }};
}

// `a` with None read as a value (passed to apply, which may refuse it) rather than as "keep the
// default".
template <class Args>
ModelArg<Args> none_is_a_value(ModelArg<Args> a) {
  a.none_keeps_default = false;
  return a;
}

// docs/models.md's rows for a backend (`| key | takes | default | accepted | what it does |`).
std::vector<std::string> doc_rows(const std::vector<ModelArgInfo>& infos);

}  // namespace model_args

}  // namespace lmeval
