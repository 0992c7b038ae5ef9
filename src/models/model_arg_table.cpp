// The docs rows of a backend's model_args table (models/model_arg_table.hpp).
#include "lmeval/models/model_arg_table.hpp"

namespace lmeval::model_args {

namespace {

const char* type_name(ModelArgType t) {
  switch (t) {
    case ModelArgType::Text:
      return "text";
    case ModelArgType::Int:
      return "int";
    case ModelArgType::Number:
      return "number";
    case ModelArgType::Bool:
      return "bool";
    case ModelArgType::Object:
      return "JSON object";
  }
  return "text";
}

// A Markdown table cell: `|` escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::vector<std::string> doc_rows(const std::vector<ModelArgInfo>& infos) {
  std::vector<std::string> rows = {"| key | takes | default | accepted | what it does |",
                                   "|---|---|---|---|---|"};
  for (const auto& i : infos)
    rows.push_back("| `" + i.key + "` | " + type_name(i.type) + " | " + cell(i.default_value) +
                   " | " + cell(i.accepted) + " | " + cell(i.doc) + " |");
  return rows;
}

}  // namespace lmeval::model_args
