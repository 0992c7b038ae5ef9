// Reading model_args values the way the reference's backends receive them: strings from
// `k=v` (already coerced by simple_parse_args_string), or JSON values from a JSON object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmeval/models/lm.hpp"

namespace lmeval::model_args {

// Python's str() of the value ("True", "None", "8").
std::string as_string(const Json& v);
// None / "None" / "none".
bool is_none(const Json& v);
// An integer (8, 8.0, "8"); UserError naming --model_args <key> otherwise.
int64_t as_int(const Json& v, const std::string& key);
// as_int, then refused unless lo <= value <= hi: UserError naming --model_args <key> and the
// accepted range.
int64_t as_int_in_range(const Json& v, const std::string& key, int64_t lo, int64_t hi);
// A number (0.5, 3, "3"); UserError otherwise.
double as_double(const Json& v, const std::string& key);
// True/False, 1/0, "true"/"false"/"yes"/"no" in any case; UserError otherwise.
bool as_bool(const Json& v, const std::string& key);
// UserError for a key not in `known`, naming the model and listing the known keys.
void check_known(const Json& model_args, const std::string& model,
                 const std::vector<std::string>& known);

}  // namespace lmeval::model_args
