// The reference's two `k=v,k=v` coercions and its JSON dict flags (spec §2.3.1, §2.3.2).
#pragma once

#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval {

// handle_cli_value_string: true/false, isnumeric -> int, float(), ast.literal_eval, else string.
Json cli_value(const std::string& v);
// split_top_level (lm_eval/_cli/utils.py): the non-empty pieces between commas that sit outside
// brackets, parentheses, braces and quotes.
std::vector<std::string> split_top_level(const std::string& args);
// key_val_to_dict: split_top_level, each item at its first '='; throws UserError naming `flag`
// for an item without '=' (the reference's "expected `key=value`, got ...").
Json cli_key_val_to_dict(const std::string& s, const std::string& flag);
// MergeDictAction over all occurrences of a dict flag (each occurrence a list of values).
Json merge_dict_flag(const std::vector<std::vector<std::string>>& occurrences,
                     const std::string& flag);

// handle_arg_string: quotes stripped, true/false/none, signed ints, floats, else string.
Json arg_string_value(const std::string& v);
// simple_parse_args_string: the YAML/API form.
Json simple_parse_args_string(const std::string& s);

// Python float(s) semantics (whitespace, underscores between digits, inf/nan); false if invalid.
bool python_float(const std::string& s, double& out);
// Python int(s) syntax (whitespace, sign, underscores between digits): the decimal digits with
// their sign ("-12"), or "" if `s` is no integer. Not bounded: the caller checks the range.
std::string python_int(const std::string& s);

}  // namespace lmeval
