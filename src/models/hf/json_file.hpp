// Reading the small JSON files of model and adapter folders (indexes, adapter_config.json).
#pragma once

#include <filesystem>
#include <string>

#include "lmeval/core/json.hpp"

namespace lmeval::hf {

// Throws UserError naming the file (and `what` it is) for a folder, an unreadable file, nesting
// past the project's limit or invalid JSON.
Json load_json_file(const std::filesystem::path& path, const std::string& what);

}  // namespace lmeval::hf
