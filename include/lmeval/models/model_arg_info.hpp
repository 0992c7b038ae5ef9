// The description of one model_args key, as a backend's table (model_arg_table.hpp) declares it
// and the model registry, `ls models`, `validate` and docs/models.md show it.
#pragma once

#include <string>

namespace lmeval {

// What a model_args value is read as (model_args.hpp's coercions).
enum class ModelArgType { Text, Int, Number, Bool, Object };

// The description of one key: what docs/models.md, `ls models` and `validate` show.
struct ModelArgInfo {
  std::string key;
  ModelArgType type = ModelArgType::Text;
  std::string default_value;  // as the docs show it; empty: none
  std::string accepted;       // the values accepted (the range check's words); empty: any
  std::string doc;
};

}  // namespace lmeval
