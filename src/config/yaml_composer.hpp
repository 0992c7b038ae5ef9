// YAML text to a node graph (tags resolved, anchors shared) as the reference's CSafeLoader
// composes it: libyaml's parser (parser.c) plus PyYAML's _yaml.pyx composer and YAML 1.1 resolver.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "yaml_scanner.hpp"

namespace lmeval::yaml {

inline constexpr const char* kTagPrefix = "tag:yaml.org,2002:";

struct Node {
  enum class Kind { Scalar, Sequence, Mapping } kind = Kind::Scalar;
  std::string tag;    // resolved: "tag:yaml.org,2002:str", "!function", ...
  std::string value;  // scalars
  ScalarStyle style = ScalarStyle::Plain;
  std::vector<std::shared_ptr<Node>> items;                                    // sequences
  std::vector<std::pair<std::shared_ptr<Node>, std::shared_ptr<Node>>> pairs;  // mappings
  Mark start;
};

// The single document of `text` (nullptr for an empty stream). Throws UserError naming `origin`
// for syntax errors, undefined or duplicate anchors and a second document.
std::shared_ptr<Node> compose(std::string_view bytes, const std::string& origin);

// PyYAML's implicit tag of a plain scalar (resolver.py, YAML 1.1): bool, int, float, null,
// timestamp, merge (`<<`), value (`=`) or str.
std::string resolve_plain(const std::string& value);

}  // namespace lmeval::yaml
