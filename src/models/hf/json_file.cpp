// JSON files of model folders, with messages naming the file.
#include "models/hf/json_file.hpp"

#include <fstream>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"

namespace lmeval::hf {

Json load_json_file(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(what + " is a folder", {path.string(), 0, 0, ""}, "a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open " + what, {path.string(), 0, 0, ""}, "a readable file");
  std::stringstream ss;
  ss << in.rdbuf();
  require_json_nesting(ss.str(), path.string());
  try {
    return Json::parse(ss.str());
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, ss.str(), path.string());
  } catch (const Json::parse_error& e) {
    throw UserError(std::string("invalid JSON in ") + what + ": " + e.what(),
                    {path.string(), 0, 0, ""}, "a JSON object");
  }
}

}  // namespace lmeval::hf
