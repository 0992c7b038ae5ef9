// libyaml's parser (parser.c) and PyYAML's composer and resolver as the reference's CSafeLoader
// runs them (_yaml.pyx CParser._compose_*, resolver.py), reimplemented over our Scanner.
#include "yaml_composer.hpp"

#include <map>

#include "lmeval/core/error.hpp"

namespace lmeval::yaml {

namespace {

bool all_of(std::string_view s, std::string_view allowed) {
  return s.find_first_not_of(allowed) == std::string_view::npos;
}

constexpr std::string_view kDigits = "0123456789";
constexpr std::string_view kDigitsUnderscore = "0123456789_";

bool is_sexagesimal_tail(std::string_view s) {  // (?::[0-5]?[0-9])+
  if (s.empty()) return false;
  while (!s.empty()) {
    if (s[0] != ':') return false;
    s.remove_prefix(1);
    size_t n = 0;
    while (n < s.size() && n < 2 && s[n] >= '0' && s[n] <= '9') ++n;
    if (n == 0) return false;
    if (n == 2 && s[0] > '5') {
      n = 1;  // [0-5]?[0-9] can also be read as one digit, leaving the next for the group after
    }
    s.remove_prefix(n);
  }
  return true;
}

// `[1-9][0-9_]*` followed by a sexagesimal tail (the leading group is split at the first ':').
bool is_base60(std::string_view r, bool first_nonzero) {
  size_t colon = r.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view head = r.substr(0, colon);
  if (first_nonzero ? (head[0] < '1' || head[0] > '9') : (head[0] < '0' || head[0] > '9'))
    return false;
  return all_of(head.substr(1), kDigitsUnderscore) && is_sexagesimal_tail(r.substr(colon));
}

std::string_view drop_sign(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s;
}

bool is_yaml_int(std::string_view s) {
  std::string_view r = drop_sign(s);
  if (r.empty()) return false;
  if (r.size() > 2 && r.substr(0, 2) == "0b") return all_of(r.substr(2), "01_");
  if (r.size() > 2 && r.substr(0, 2) == "0x") return all_of(r.substr(2), "0123456789abcdefABCDEF_");
  if (r.size() > 1 && r[0] == '0' && all_of(r.substr(1), "01234567_")) return true;
  if (r == "0") return true;
  if (r[0] >= '1' && r[0] <= '9' && all_of(r.substr(1), kDigitsUnderscore)) return true;
  return is_base60(r, true);
}

bool is_exponent(std::string_view e) {  // ([eE][-+][0-9]+)?
  if (e.empty()) return true;
  return e.size() >= 3 && (e[0] == 'e' || e[0] == 'E') && (e[1] == '-' || e[1] == '+') &&
         all_of(e.substr(2), kDigits);
}

bool is_yaml_float(std::string_view s) {
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return true;
  std::string_view r = drop_sign(s);
  if (r == ".inf" || r == ".Inf" || r == ".INF") return true;
  if (r.empty()) return false;
  if (r[0] == '.') {  // \.[0-9][0-9_]*(exponent)? takes no sign
    if (r.size() != s.size()) return false;
    size_t e = r.find_first_of("eE");
    std::string_view m = r.substr(1, e == std::string_view::npos ? std::string_view::npos : e - 1);
    return !m.empty() && m[0] >= '0' && m[0] <= '9' && all_of(m, kDigitsUnderscore) &&
           is_exponent(e == std::string_view::npos ? std::string_view() : r.substr(e));
  }
  if (r[0] < '0' || r[0] > '9') return false;
  size_t dot = r.find('.');
  if (dot == std::string_view::npos) return false;
  std::string_view whole = r.substr(0, dot), frac = r.substr(dot + 1);
  if (whole.find(':') != std::string_view::npos)  // base 60: ...(:[0-5]?[0-9])+\.[0-9_]*
    return is_base60(whole, false) && all_of(frac, kDigitsUnderscore);
  if (!all_of(whole, kDigitsUnderscore)) return false;
  size_t e = frac.find_first_of("eE");
  std::string_view digits = frac.substr(0, e);
  return all_of(digits, kDigitsUnderscore) &&
         is_exponent(e == std::string_view::npos ? std::string_view() : frac.substr(e));
}

bool is_yaml_timestamp(std::string_view s) {
  size_t i = 0;
  auto digits = [&](size_t lo, size_t hi) {
    size_t n = 0;
    while (i < s.size() && n < hi && s[i] >= '0' && s[i] <= '9') ++i, ++n;
    return n >= lo;
  };
  auto lit = [&](char c) {
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  };
  if (s.size() == 10 && digits(4, 4) && lit('-') && digits(2, 2) && lit('-') && digits(2, 2))
    return true;
  i = 0;
  if (!(digits(4, 4) && lit('-') && digits(1, 2) && lit('-') && digits(1, 2))) return false;
  if (!(lit('T') || lit('t'))) {
    size_t n = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i, ++n;
    if (!n) return false;
  }
  if (!(digits(1, 2) && lit(':') && digits(2, 2) && lit(':') && digits(2, 2))) return false;
  if (lit('.')) digits(0, std::string_view::npos);
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i == s.size()) return true;
  if (lit('Z')) return i == s.size();
  if (!(lit('-') || lit('+')) || !digits(1, 2)) return false;
  if (lit(':') && !digits(2, 2)) return false;
  return i == s.size();
}

class Composer {
 public:
  Composer(Scanner& scanner) : s_(scanner) {}

  std::shared_ptr<Node> single_document() {
    s_.next();  // stream start
    std::shared_ptr<Node> root;
    const Token& first = s_.peek();
    if (first.type != TokenType::StreamEnd) {
      if (first.type != TokenType::VersionDirective && first.type != TokenType::TagDirective &&
          first.type != TokenType::DocumentStart) {
        default_tag_directives();
        root = parse_node(true, false);
      } else {
        process_directives();
        const Token& t = s_.peek();
        if (t.type != TokenType::DocumentStart)
          s_.fail("", {}, "did not find expected <document start>", t.start);
        s_.next();
        TokenType n = s_.peek().type;
        if (n == TokenType::VersionDirective || n == TokenType::TagDirective ||
            n == TokenType::DocumentStart || n == TokenType::DocumentEnd ||
            n == TokenType::StreamEnd) {
          root = empty_scalar(s_.peek().start, "");
        } else {
          root = parse_node(true, false);
        }
      }
      if (s_.peek().type == TokenType::DocumentEnd) s_.next();
      // CParser.get_single_node: anything but the end of the stream is a second document.
      while (s_.peek().type == TokenType::DocumentEnd) s_.next();
      const Token& t = s_.peek();
      if (t.type != TokenType::StreamEnd)
        s_.fail("", {}, "expected a single document in the stream, but found another document",
                t.start);
    }
    return root;
  }

 private:
  void default_tag_directives() {
    if (!tag_directives_.count("!")) tag_directives_["!"] = "!";
    if (!tag_directives_.count("!!")) tag_directives_["!!"] = kTagPrefix;
  }

  void process_directives() {
    bool version = false;
    while (true) {
      const Token& t = s_.peek();
      if (t.type == TokenType::VersionDirective) {
        if (version) s_.fail("", {}, "found duplicate %YAML directive", t.start);
        if (t.major != 1 || (t.minor != 1 && t.minor != 2))
          s_.fail("", {}, "found incompatible YAML document", t.start);
        version = true;
      } else if (t.type == TokenType::TagDirective) {
        if (tag_directives_.count(t.value))
          s_.fail("", {}, "found duplicate %TAG directive", t.start);
        tag_directives_[t.value] = t.suffix;
      } else {
        break;
      }
      s_.next();
    }
    default_tag_directives();
  }

  std::shared_ptr<Node> empty_scalar(Mark mark, const std::string& tag) {
    auto n = std::make_shared<Node>();
    n->start = mark;
    n->tag = tag.empty() ? resolve_plain("") : tag == "!" ? std::string(kTagPrefix) + "str" : tag;
    return n;
  }

  void register_anchor(const std::string& anchor, const std::shared_ptr<Node>& node, Mark mark) {
    if (anchor.empty()) return;
    // _yaml.pyx _compose_node refuses a second anchor of the same name.
    if (anchors_.count(anchor)) s_.fail("", {}, "found duplicate anchor '" + anchor + "'", mark);
    anchors_[anchor] = node;
  }

  std::shared_ptr<Node> parse_node(bool block, bool indentless_sequence) {
    const Token& first = s_.peek();
    if (first.type == TokenType::Alias) {
      Token t = s_.next();
      auto it = anchors_.find(t.value);
      if (it == anchors_.end()) s_.fail("", {}, "found undefined alias '" + t.value + "'", t.start);
      return it->second;
    }
    Mark start = first.start;
    std::string anchor, handle, suffix;
    bool has_tag = false;
    Mark tag_mark;
    auto take_tag = [&]() {
      Token t = s_.next();
      has_tag = true;
      handle = t.value;
      suffix = t.suffix;
      tag_mark = t.start;
    };
    if (s_.peek().type == TokenType::Anchor) {
      anchor = s_.next().value;
      if (s_.peek().type == TokenType::Tag) take_tag();
    } else if (s_.peek().type == TokenType::Tag) {
      take_tag();
      if (s_.peek().type == TokenType::Anchor) anchor = s_.next().value;
    }
    std::string tag;
    if (has_tag) {
      if (handle.empty()) {
        tag = suffix;
      } else {
        auto it = tag_directives_.find(handle);
        if (it == tag_directives_.end())
          s_.fail("while parsing a node", start, "found undefined tag handle", tag_mark);
        tag = it->second + suffix;
      }
    }
    const Token& t = s_.peek();
    auto collection = [&](Node::Kind kind) {
      auto n = std::make_shared<Node>();
      n->kind = kind;
      n->start = start;
      n->tag = !tag.empty() && tag != "!"
                   ? tag
                   : std::string(kTagPrefix) + (kind == Node::Kind::Sequence ? "seq" : "map");
      register_anchor(anchor, n, start);
      if (++depth_ > kMaxDepth)
        s_.fail("", {}, "nesting deeper than " + std::to_string(kMaxDepth) + " levels", t.start);
      return n;
    };
    if (indentless_sequence && t.type == TokenType::BlockEntry) {
      auto n = collection(Node::Kind::Sequence);
      while (s_.peek().type == TokenType::BlockEntry) {
        Mark m = s_.next().end;
        TokenType k = s_.peek().type;
        if (k != TokenType::BlockEntry && k != TokenType::Key && k != TokenType::Value &&
            k != TokenType::BlockEnd)
          n->items.push_back(parse_node(true, false));
        else
          n->items.push_back(empty_scalar(m, ""));
      }
      --depth_;
      return n;
    }
    if (t.type == TokenType::Scalar) {
      Token st = s_.next();
      auto n = std::make_shared<Node>();
      n->start = start;
      n->value = std::move(st.value);
      n->style = st.style;
      bool plain_implicit = (st.style == ScalarStyle::Plain && !has_tag) || tag == "!";
      if (!has_tag || tag == "!") {
        if (plain_implicit && st.style != ScalarStyle::Plain && !n->value.empty() &&
            n->value.back() == '\n')  // Python's `$` would also match before that newline
          s_.fail("", {}, "the tag `!` on a scalar ending in a line break is not supported", start);
        n->tag = plain_implicit ? resolve_plain(n->value) : std::string(kTagPrefix) + "str";
      } else {
        n->tag = tag;
      }
      register_anchor(anchor, n, start);
      return n;
    }
    if (t.type == TokenType::FlowSequenceStart)
      return flow_sequence(collection(Node::Kind::Sequence));
    if (t.type == TokenType::FlowMappingStart) return flow_mapping(collection(Node::Kind::Mapping));
    if (block && t.type == TokenType::BlockSequenceStart)
      return block_sequence(collection(Node::Kind::Sequence));
    if (block && t.type == TokenType::BlockMappingStart)
      return block_mapping(collection(Node::Kind::Mapping));
    if (!anchor.empty() || has_tag) {
      auto n = empty_scalar(start, has_tag ? tag : "");
      register_anchor(anchor, n, start);
      return n;
    }
    s_.fail(block ? "while parsing a block node" : "while parsing a flow node", start,
            "did not find expected node content", t.start);
  }

  std::shared_ptr<Node> block_sequence(std::shared_ptr<Node> n) {
    s_.next();
    while (true) {
      const Token& t = s_.peek();
      if (t.type == TokenType::BlockEntry) {
        Mark m = s_.next().end;
        TokenType k = s_.peek().type;
        if (k != TokenType::BlockEntry && k != TokenType::BlockEnd)
          n->items.push_back(parse_node(true, false));
        else
          n->items.push_back(empty_scalar(m, ""));
      } else if (t.type == TokenType::BlockEnd) {
        s_.next();
        break;
      } else {
        s_.fail("while parsing a block collection", n->start, "did not find expected '-' indicator",
                t.start);
      }
    }
    --depth_;
    return n;
  }

  std::shared_ptr<Node> block_mapping(std::shared_ptr<Node> n) {
    s_.next();
    while (true) {
      const Token& t = s_.peek();
      if (t.type == TokenType::BlockEnd) {
        s_.next();
        break;
      }
      if (t.type != TokenType::Key)
        s_.fail("while parsing a block mapping", n->start, "did not find expected key", t.start);
      Mark m = s_.next().end;
      auto is_end = [&]() {
        TokenType k = s_.peek().type;
        return k == TokenType::Key || k == TokenType::Value || k == TokenType::BlockEnd;
      };
      std::shared_ptr<Node> key = is_end() ? empty_scalar(m, "") : parse_node(true, true);
      std::shared_ptr<Node> value;
      if (s_.peek().type == TokenType::Value) {
        Mark vm = s_.next().end;
        value = is_end() ? empty_scalar(vm, "") : parse_node(true, true);
      } else {
        value = empty_scalar(s_.peek().start, "");
      }
      n->pairs.emplace_back(std::move(key), std::move(value));
    }
    --depth_;
    return n;
  }

  std::shared_ptr<Node> flow_sequence(std::shared_ptr<Node> n) {
    s_.next();
    bool first = true;
    while (s_.peek().type != TokenType::FlowSequenceEnd) {
      if (!first) {
        if (s_.peek().type != TokenType::FlowEntry)
          s_.fail("while parsing a flow sequence", n->start, "did not find expected ',' or ']'",
                  s_.peek().start);
        s_.next();
      }
      first = false;
      const Token& t = s_.peek();
      if (t.type == TokenType::Key) {  // `[a: b]`: a one-pair mapping
        auto pair = std::make_shared<Node>();
        pair->kind = Node::Kind::Mapping;
        pair->tag = std::string(kTagPrefix) + "map";
        pair->start = t.start;
        Mark m = s_.next().end;
        TokenType k = s_.peek().type;
        std::shared_ptr<Node> key;
        if (k == TokenType::Value || k == TokenType::FlowEntry)
          // libyaml's parse_flow_sequence_entry_mapping_key drops this token; not reproduced.
          s_.fail("", {}, "an explicit `?` key with no content in a flow sequence is not supported",
                  s_.peek().start);
        key = k == TokenType::FlowSequenceEnd ? empty_scalar(m, "") : parse_node(false, false);
        std::shared_ptr<Node> value;
        if (s_.peek().type == TokenType::Value) {
          Mark vm = s_.next().end;
          TokenType v = s_.peek().type;
          value = v == TokenType::FlowEntry || v == TokenType::FlowSequenceEnd
                      ? empty_scalar(vm, "")
                      : parse_node(false, false);
        } else {
          value = empty_scalar(s_.peek().start, "");
        }
        pair->pairs.emplace_back(std::move(key), std::move(value));
        n->items.push_back(std::move(pair));
      } else if (t.type != TokenType::FlowSequenceEnd) {
        n->items.push_back(parse_node(false, false));
      }
    }
    s_.next();
    --depth_;
    return n;
  }

  std::shared_ptr<Node> flow_mapping(std::shared_ptr<Node> n) {
    s_.next();
    bool first = true;
    while (s_.peek().type != TokenType::FlowMappingEnd) {
      if (!first) {
        if (s_.peek().type != TokenType::FlowEntry)
          s_.fail("while parsing a flow mapping", n->start, "did not find expected ',' or '}'",
                  s_.peek().start);
        s_.next();
      }
      first = false;
      const Token& t = s_.peek();
      if (t.type == TokenType::Key) {
        Mark m = s_.next().end;
        TokenType k = s_.peek().type;
        std::shared_ptr<Node> key =
            k == TokenType::Value || k == TokenType::FlowEntry || k == TokenType::FlowMappingEnd
                ? empty_scalar(s_.peek().start, "")
                : parse_node(false, false);
        (void)m;
        std::shared_ptr<Node> value;
        if (s_.peek().type == TokenType::Value) {
          Mark vm = s_.next().end;
          TokenType v = s_.peek().type;
          value = v == TokenType::FlowEntry || v == TokenType::FlowMappingEnd
                      ? empty_scalar(vm, "")
                      : parse_node(false, false);
        } else {
          value = empty_scalar(s_.peek().start, "");
        }
        n->pairs.emplace_back(std::move(key), std::move(value));
      } else if (t.type != TokenType::FlowMappingEnd) {
        auto key = parse_node(false, false);
        n->pairs.emplace_back(std::move(key), empty_scalar(s_.peek().start, ""));
      }
    }
    s_.next();
    --depth_;
    return n;
  }

  static constexpr int kMaxDepth = 200;
  Scanner& s_;
  std::map<std::string, std::string> tag_directives_;
  std::map<std::string, std::shared_ptr<Node>> anchors_;
  int depth_ = 0;
};

}  // namespace

std::string resolve_plain(const std::string& v) {
  const std::string p = kTagPrefix;
  if (v.empty()) return p + "null";
  char c = v[0];
  if (std::string_view("yYnNtTfFoO").find(c) != std::string_view::npos) {
    static const char* kBools[] = {"yes",  "Yes",  "YES",  "no",    "No",    "NO",
                                   "true", "True", "TRUE", "false", "False", "FALSE",
                                   "on",   "On",   "ON",   "off",   "Off",   "OFF"};
    for (const char* b : kBools)
      if (v == b) return p + "bool";
  }
  bool numeric_start = std::string_view("-+0123456789.").find(c) != std::string_view::npos;
  if (numeric_start && is_yaml_float(v)) return p + "float";
  if (numeric_start && c != '.' && is_yaml_int(v)) return p + "int";
  if (v == "<<") return p + "merge";
  if (v == "~" || v == "null" || v == "Null" || v == "NULL") return p + "null";
  if (c >= '0' && c <= '9' && is_yaml_timestamp(v)) return p + "timestamp";
  if (v == "=") return p + "value";
  return p + "str";
}

std::shared_ptr<Node> compose(std::string_view bytes, const std::string& origin) {
  Scanner scanner(decode_stream(bytes, origin), origin);
  Composer composer(scanner);
  return composer.single_document();
}

}  // namespace lmeval::yaml
