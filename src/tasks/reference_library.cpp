#include "lmeval/tasks/reference_library.hpp"

#include <cstdlib>
#include <fstream>
#include <unordered_set>
#include <vector>

#include "lmeval/core/python_env.hpp"
#include "lmeval/tasks/task_index.hpp"
#include "lmeval/tasks/task_library_download.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

std::optional<fs::path> in_venv(const fs::path& venv) {
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"}) {
    for (const auto& e : fs::directory_iterator(venv / lib, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("python3", 0) != 0) continue;
      fs::path tasks = e.path() / "site-packages" / "lm_eval" / "tasks";
      if (fs::is_directory(tasks, ec)) return tasks;
    }
  }
  return std::nullopt;
}

bool is_elf(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == '\x7f' && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

// lm_eval/tasks in the folders site.py puts on sys.path for the interpreter at `real` (an
// executable, not a launcher script), in sys.path's order: the user site, then the prefix's
// site-packages (Debian: /usr/local/lib/python3.X/dist-packages, then /usr/lib/python3/
// dist-packages). Nothing is run.
std::optional<fs::path> in_interpreter_paths(const fs::path& real) {
  std::error_code ec;
  const fs::path prefix = real.parent_path().parent_path();
  std::vector<std::string> versions;  // "python3.11"
  const std::string exe = real.filename().string();
  if (exe.rfind("python3.", 0) == 0) {
    versions.push_back(exe);
  } else {
    for (const auto& e : fs::directory_iterator(prefix / "lib", ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("python3.", 0) == 0) versions.push_back(n);
    }
  }
  std::vector<fs::path> dirs;
  const char* home = std::getenv("HOME");
  for (const auto& v : versions)
    if (home && *home) dirs.push_back(fs::path(home) / ".local/lib" / v / "site-packages");
  for (const auto& v : versions) {
    dirs.push_back(prefix / "local/lib" / v / "dist-packages");
    dirs.push_back(prefix / "lib" / v / "site-packages");
    dirs.push_back(prefix / "lib" / v / "dist-packages");
  }
  dirs.push_back(prefix / "lib/python3/dist-packages");
  for (const auto& d : dirs)
    if (fs::is_directory(d / "lm_eval" / "tasks", ec)) return d / "lm_eval" / "tasks";
  return std::nullopt;
}

// The interpreter a pyenv shim would run, without running it (the shim is a shell script that
// takes about 0.3 s): $PYENV_VERSION, else the first .python-version from the working folder up,
// else $PYENV_ROOT/version, as `pyenv version-name` picks it. nullopt for "system" or an
// unknown layout (then the shim is asked).
std::optional<fs::path> pyenv_interpreter(const fs::path& shim) {
  if (shim.parent_path().filename() != "shims") return std::nullopt;
  const fs::path root = shim.parent_path().parent_path();
  auto first_word = [](const fs::path& file) {
    std::ifstream in(file);
    std::string w;
    in >> w;
    return w;
  };
  std::string version;
  if (const char* v = std::getenv("PYENV_VERSION"); v && *v) version = v;
  std::error_code ec;
  if (version.empty())
    for (fs::path d = fs::current_path(ec); !ec && !d.empty(); d = d.parent_path()) {
      if (fs::exists(d / ".python-version", ec)) {
        version = first_word(d / ".python-version");
        break;
      }
      if (d == d.parent_path()) break;
    }
  if (version.empty()) version = first_word(root / "version");
  version = version.substr(0, version.find(':'));
  if (version.empty() || version == "system") return std::nullopt;
  const fs::path exe = root / "versions" / version / "bin" / "python3";
  if (!fs::exists(exe, ec)) return std::nullopt;
  return exe;
}

ReferenceLibrary find_library() {
  ReferenceLibrary lib;
  if (const char* env = std::getenv("LMEVAL_REFERENCE_TASKS"); env && *env) {
    const std::string v = env;
    if (v == "off" || v == "0" || v == "none") {
      lib.described = "nowhere ($LMEVAL_REFERENCE_TASKS=" + v + ")";
    } else {
      lib.described = v + " ($LMEVAL_REFERENCE_TASKS)";
      if (fs::is_directory(v)) lib.dir = fs::path(v);
    }
    return lib;
  }
  const PythonEnv py = active_python_env();
  lib.described = py.described;
  if (!py.venv.empty()) {
    lib.dir = in_venv(py.venv);
    return lib;
  }
  if (py.python.empty()) return lib;
  // pyenv's shim stands for one of its versions (or a pyenv-virtualenv venv).
  const fs::path python = pyenv_interpreter(py.python).value_or(py.python);
  // A venv's python3 on PATH without $VIRTUAL_ENV (called by its path).
  const fs::path root = python.parent_path().parent_path();
  std::error_code ec;
  if (fs::exists(root / "pyvenv.cfg", ec)) {
    lib.dir = in_venv(root);
    return lib;
  }
  // An interpreter executable: its sys.path folders are known without running it.
  const fs::path real = fs::canonical(python, ec);
  if (!ec && is_elf(real)) {
    lib.dir = in_interpreter_paths(real);
    return lib;
  }
  // A launcher script (pyenv's shims): ask it where the package would be imported from
  // (importing lm_eval itself takes seconds).
  auto out = run_python(py.python,
                        "import importlib.util as u, os\n"
                        "s = u.find_spec('lm_eval')\n"
                        "print(os.path.join(os.path.dirname(s.origin), 'tasks') "
                        "if s and s.origin else '')\n",
                        10000);
  if (out) {
    std::string p = *out;
    while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
    if (!p.empty() && fs::is_directory(p)) lib.dir = fs::path(p);
  }
  return lib;
}

}  // namespace

const ReferenceLibrary& reference_task_library() {
  static const ReferenceLibrary lib = [] {
    ReferenceLibrary found = find_library();
    // `lm-eval download --task-library`'s copy stands in for a Python environment without the
    // package; $LMEVAL_REFERENCE_TASKS, when set, is the only place looked at.
    const char* env = std::getenv("LMEVAL_REFERENCE_TASKS");
    if (found.dir || (env && *env)) return found;
    if (auto dir = downloaded_task_library()) {
      found.described += "; then " + dir->string() + " (`lm-eval download --task-library`)";
      found.dir = *dir;
      found.downloaded = true;
    }
    return found;
  }();
  return lib;
}

namespace {

// tasks/reference_library_names.txt, sorted as written.
const std::vector<std::string>& reference_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    std::ifstream in(builtin_tasks_dir() / "reference_library_names.txt");
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') v.push_back(line);
    return v;
  }();
  return names;
}

}  // namespace

bool is_reference_task_name(const std::string& name) {
  static const std::unordered_set<std::string> names(reference_names().begin(),
                                                     reference_names().end());
  return names.count(name) > 0;
}

std::vector<std::string> reference_task_names_matching(const std::string& pattern) {
  std::vector<std::string> out;
  for (const auto& n : reference_names())
    if (fnmatch(n, pattern)) out.push_back(n);
  return out;
}

}  // namespace lmeval
