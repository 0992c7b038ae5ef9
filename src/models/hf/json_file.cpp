// JSON files of model folders, with messages naming the file.
#include "models/hf/json_file.hpp"

#include <fstream>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "lmeval/core/input_file.hpp"

namespace lmeval::hf {

Json load_json_file(const std::filesystem::path& path, const std::string& what) {
  const std::string text = read_input_file(path, what, "a JSON file");
  require_json_nesting(text, path.string());
  try {
    return Json::parse(text);
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, text, path.string());
  } catch (const Json::parse_error& e) {
    throw UserError(std::string("invalid JSON in ") + what + ": " + e.what(),
                    {path.string(), 0, 0, ""}, "a JSON object");
  }
}

}  // namespace lmeval::hf
