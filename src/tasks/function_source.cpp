// Binding `!function` references to the C++ ports of their exact module source.
#include "lmeval/tasks/function_source.hpp"

#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "lmeval/core/sha256.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

// lm_eval/tasks/_yaml_loader.py _import_func_in_yml: `a.b.fn` is fn of <yaml dir>/a/b.py.
fs::path module_file(const std::string& qualified, const fs::path& yaml_path) {
  std::string mod = qualified.substr(0, qualified.rfind('.'));
  for (auto& c : mod)
    if (c == '.') c = '/';
  return yaml_path.parent_path() / (mod + ".py");
}

bool is_blank_or_comment(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\r\n");
  return i == std::string_view::npos || line[i] == '#';
}

// What inspect.getsource gives for the module-level function `fn` defined by a `def` (its
// decorators, the def and its indented body up to the last line of code, each line with its
// newline), as TaskConfig.serialize_function shows it in the results' configs; nullopt when `fn`
// is no such def (a functools.partial, a name bound again after its def, ...), whose str() holds
// an address.
std::optional<std::string> def_source(const std::string& text, const std::string& fn) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.emplace_back(text.data() + pos, end - pos);
    pos = end;
  }
  std::optional<size_t> def;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l.rfind("def " + fn + "(", 0) == 0) {
      def = i;
    } else if (l.rfind(fn, 0) == 0) {
      std::string_view rest = l.substr(fn.size());
      size_t k = rest.find_first_not_of(' ');
      if (k != std::string_view::npos && (rest[k] == '=' || rest[k] == ':') &&
          rest.substr(k, 2) != "==")
        return std::nullopt;  // bound again at module level
    }
  }
  if (!def) return std::nullopt;
  size_t first = *def;
  while (first > 0 && lines[first - 1].rfind('@', 0) == 0) --first;
  // The block's lines as Python's tokenizer ends it: indented lines, and any line inside
  // brackets, a triple-quoted string or after a backslash, whatever its indentation.
  size_t last = *def;
  int depth = 0;
  std::string_view quote;  // the open triple quote
  bool backslash = false;
  for (size_t i = *def; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    const bool continued = depth > 0 || !quote.empty() || backslash;
    if (i > *def && !continued) {
      if (is_blank_or_comment(l)) continue;
      if (l[0] != ' ' && l[0] != '\t') break;
    }
    for (size_t j = 0; j < l.size(); ++j) {
      if (!quote.empty()) {
        if (l[j] == '\\')
          ++j;
        else if (l.substr(j, 3) == quote)
          j += 2, quote = {};
        continue;
      }
      const char c = l[j];
      if (c == '#') break;
      if (l.substr(j, 3) == "\"\"\"" || l.substr(j, 3) == "'''") {
        quote = l.substr(j, 3);
        j += 2;
      } else if (c == '"' || c == '\'') {
        for (++j; j < l.size() && l[j] != c; ++j)
          if (l[j] == '\\') ++j;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        --depth;
      }
    }
    backslash = quote.empty() && l.size() >= 2 && l.substr(l.size() - 2) == "\\\n";
    last = i;
  }
  std::string out;
  for (size_t i = first; i <= last; ++i) out += lines[i];
  if (out.back() != '\n') out += '\n';
  return out;
}

bool is_inside(const fs::path& file, const fs::path& root) {
  if (root.empty()) return false;
  std::error_code ec1, ec2;
  fs::path f = fs::weakly_canonical(file, ec1), r = fs::weakly_canonical(root, ec2);
  if (ec1 || ec2) return false;
  auto [ri, fi] = std::mismatch(r.begin(), r.end(), f.begin(), f.end());
  return ri == r.end();
}

void bind(Json& v, const fs::path& yaml_path, bool builtin,
          const std::vector<FunctionSource>& sources) {
  if (is_function_ref(v)) {
    fs::path module = module_file(function_ref_name(v), yaml_path);
    std::error_code ec;
    if (fs::is_regular_file(module, ec)) {
      std::ifstream in(module, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      std::string digest = sha256_hex(ss.str());
      for (const auto& s : sources) {
        if (s.sha256 == digest) {
          v["dir"] = s.family;
          v.erase("python_module");
          // Where the family has no port of this function, the reference's Python runs it
          // (resolve_function_ref): a family ports a module's functions one by one.
          v["port_module"] = module.string();
          const std::string& name = function_ref_name(v);
          if (auto src = def_source(ss.str(), name.substr(name.rfind('.') + 1))) v["source"] = *src;
          return;
        }
      }
      v["dir"] = "";
      v["python_module"] = module.string();
      v["module_sha256"] = digest;
    } else if (!builtin) {
      v["dir"] = "";
      v["python_module"] = module.string();
    }
    // else: a built-in task of lm-eval's own folder, whose ports are registered under its name.
    return;
  }
  if (v.is_object() || v.is_array())
    for (auto& x : v) bind(x, yaml_path, builtin, sources);
}

}  // namespace

void bind_function_sources(Json& config, const fs::path& yaml_path, const fs::path& builtin_root,
                           const std::vector<FunctionSource>& sources) {
  bind(config, yaml_path, is_inside(yaml_path, builtin_root), sources);
}

}  // namespace lmeval
