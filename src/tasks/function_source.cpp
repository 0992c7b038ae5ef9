// Binding `!function` references to the C++ ports of their exact module source.
#include "lmeval/tasks/function_source.hpp"

#include <fstream>
#include <sstream>

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
