// The JSON value type of the whole project, declared once.
#pragma once

#include <nlohmann/json.hpp>

namespace lmeval {

// Results, samples, task configs and documents are written back in the order they were read or
// built, as the reference's dicts are: nlohmann's ordered_json keeps insertion order.
using Json = nlohmann::ordered_json;

}  // namespace lmeval
