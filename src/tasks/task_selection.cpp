// --tasks resolution: globs, YAML paths, directories, groups with overrides, tags.
#include "lmeval/tasks/task_selection.hpp"
#include "lmeval/tasks/reference_library.hpp"
#include "lmeval/tasks/task_library_download.hpp"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/python_format.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

struct Builder {
  const TaskIndex& index;
  const Json& run_metadata;
  std::vector<UserError>* collect;
  TaskSelection out;
  std::map<std::string, std::string> leaf_owner;  // leaf task -> top-level item that brought it
  // Groups being expanded, outermost first: a group reached again through its own members is a
  // cycle (the reference recurses until RecursionError).
  std::vector<std::string> group_stack;
  // Where the overrides that groups pass down to their tasks were written (the group's file,
  // or the member mapping), so a bad key is reported there and not in the task's own file.
  std::map<std::string, SourceLocation> override_origin;
  // The places of the values nested in those overrides, by JSON pointer from the key on
  // ("/dataset_kwargs/data_files/test").
  std::map<std::string, SourceLocation> override_marks;

  void report(UserError e) {
    if (!collect) throw e;
    collect->push_back(std::move(e));
  }

  static Json merge(Json base, const Json& over) {
    for (auto it = over.begin(); it != over.end(); ++it) base[it.key()] = it.value();
    return base;
  }

  Json task_metadata(const Json& yaml_meta, const std::string& config_source) {
    Json m = Json::object();
    if (yaml_meta.is_object())
      m = yaml_meta;
    else if (!yaml_meta.is_null())
      m["_metadata"] = yaml_meta;
    for (auto it = run_metadata.begin(); it != run_metadata.end(); ++it) m[it.key()] = it.value();
    m["config_source"] = config_source;
    return m;
  }

  // Leaf task from a YAML (or inline mapping) with overrides.
  void add_task(const TaskYaml& yaml, Json merged, const std::string& config_source,
                const std::string& top, std::vector<std::string>* leaves) {
    merged["metadata"] =
        task_metadata(merged.contains("metadata") ? merged["metadata"] : Json(), config_source);
    TaskConfig cfg;
    try {
      cfg = make_task_config(yaml, merged, config_source, collect);
    } catch (UserError& e) {
      report(e);
      return;
    }
    std::string name = cfg.name();
    auto it = leaf_owner.find(name);
    if (it != leaf_owner.end()) {
      if (it->second != top)
        report(UserError(
            "Duplicate task '" + name + "': found in both '" + it->second + "' and '" + top + "'",
            {"", 0, 0, "--tasks"}, "each task reachable from one requested item"));
      return;
    }
    leaf_owner[name] = top;
    if (leaves) leaves->push_back(name);
    out.tasks.push_back(std::move(cfg));
  }

  void add_indexed_task(const std::string& name, const Json& overrides, const std::string& top,
                        std::vector<std::string>* leaves) {
    const IndexEntry* e = index.find(name);
    TaskYaml y;
    try {
      y = load_task_yaml(e->yaml);
    } catch (UserError& err) {
      report(err);
      return;
    }
    for (const auto& [key, loc] : override_origin)
      if (key != "task" && overrides.contains(key)) {
        y.origin[key] = loc;
        y.forget_marks(key);
      }
    for (const auto& [pointer, loc] : override_marks) {
      std::string key = pointer.substr(1, pointer.find('/', 1) - 1);
      if (key != "task" && overrides.contains(key)) y.marks[pointer] = loc;
    }
    Json merged = merge(y.value, overrides);
    add_task(y, merged, e->yaml.string(), top, leaves);
  }

  // Records where the keys of `keys` (a mapping written at JSON pointer `at` of `yaml`) and the
  // values nested in them were written, as overrides passed down; `field` prefixes the names
  // ("task[1]." for a group member's keys). Keys already located by an outer group stay theirs.
  void locate_overrides(const TaskYaml& yaml, const std::string& at, const Json& keys,
                        const std::string& field, bool keep_outer) {
    for (auto it = keys.begin(); it != keys.end(); ++it) {
      const std::string& key = it.key();
      if (keep_outer && override_origin.count(key)) continue;
      override_origin[key] = yaml.where_at(at + "/" + key, field + key);
      const std::string from = at + "/" + key;
      for (auto m = override_marks.lower_bound("/" + key); m != override_marks.end();)
        m = m->first == "/" + key || m->first.starts_with("/" + key + "/") ? override_marks.erase(m)
                                                                           : std::next(m);
      for (auto m = yaml.marks.lower_bound(from); m != yaml.marks.end(); ++m) {
        if (!m->first.starts_with(from)) break;
        if (m->first.size() > from.size() && m->first[from.size()] != '/') continue;
        SourceLocation loc = m->second;
        loc.field = field + loc.field;
        override_marks["/" + key + m->first.substr(from.size())] = loc;
      }
    }
  }

  // `add` with the keys of a group member's mapping located at the member's own lines.
  template <class F>
  void with_member_origin(const TaskYaml& yaml, const std::string& member_at, const Json& member,
                          const std::string& field, F add) {
    auto saved = override_origin;
    auto saved_marks = override_marks;
    locate_overrides(yaml, member_at, member, field, false);
    add();
    override_origin = std::move(saved);
    override_marks = std::move(saved_marks);
  }

  // Returns the group's index in out.groups (or -1).
  // `at`: the JSON pointer of the group's mapping in `yaml` ("" for the file itself, "/task/2" for
  // a group written inline as a member).
  int add_group(const TaskYaml& yaml, const Json& merged, const Json& parent_overrides,
                const std::string& top, std::vector<std::string>* parent_leaves,
                const std::string& forced_name = {}, const std::string& at = {}) {
    GroupConfig gc;
    try {
      gc = make_group_config(yaml, merged, collect);
    } catch (UserError& e) {
      report(e);
      return -1;
    }
    if (!forced_name.empty()) gc.name = forced_name;
    // Group-level keys < keys passed from the parent.
    Json overrides = merge(gc.overrides, parent_overrides);
    GroupNode node;
    node.name = gc.name;
    Json meta = gc.metadata;
    node.version = meta.contains("version") ? py::str(meta["version"]) : "N/A";
    for (auto it = run_metadata.begin(); it != run_metadata.end(); ++it)
      meta[it.key()] = it.value();
    gc.metadata = meta;
    node.config = gc;
    size_t my_index = out.groups.size();
    out.groups.push_back(node);
    group_stack.push_back(gc.name);
    auto saved_origin = override_origin;
    auto saved_marks = override_marks;
    locate_overrides(yaml, at, gc.overrides, "", true);
    std::vector<std::string> children, leaves;
    size_t member_i = 0;
    // A `task:` that is one name is member 0 at the key's own line.
    const bool task_list = merged.contains("task") && merged["task"].is_array();
    for (const auto& member : gc.task) {
      const std::string nth = std::to_string(member_i++);
      const std::string label = "task[" + nth + "]";
      std::string member_at = at;
      member_at.append("/task");
      if (task_list) member_at.append("/").append(nth);
      SourceLocation where = yaml.where_at(member_at, label);
      if (member.is_string()) {
        std::string m = member.get<std::string>();
        const IndexEntry* e = index.find(m);
        if (!e) {
          std::string hint = did_you_mean(m, index.all_names());
          report(UserError("group '" + gc.name + "' names unknown task '" + m + "'" +
                               (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                           where, "an indexed task, group or tag"));
          continue;
        }
        if (e->kind == IndexKind::Task) {
          Json ov = overrides;
          ov["task"] = m;
          children.push_back(m);
          add_indexed_task(m, ov, top, &leaves);
        } else if (e->kind == IndexKind::Group) {
          children.push_back(m);
          add_indexed_group(m, overrides, top, &leaves, where);
        } else {
          for (const auto& t : e->tag_tasks) {
            Json ov = overrides;
            ov["task"] = t;
            children.push_back(t);
            add_indexed_task(t, ov, top, &leaves);
          }
        }
      } else if (member.is_object()) {
        if (member.contains("group")) {
          std::string gname = member["group"].is_string() ? member["group"].get<std::string>() : "";
          Json extra = member;
          const IndexEntry* e = index.find(gname);
          if (e && e->kind == IndexKind::Group) {
            extra.erase("group");
            children.push_back(gname);
            with_member_origin(yaml, member_at, extra, label + ".", [&] {
              add_indexed_group(gname, merge(overrides, extra), top, &leaves, where);
            });
          } else {
            std::string inline_name = gc.name + "::" + gname;
            children.push_back(inline_name);
            add_group(yaml, member, overrides, top, &leaves, inline_name, member_at);
          }
        } else if (member.contains("task") && member["task"].is_string()) {
          std::string tname = member["task"].get<std::string>();
          const IndexEntry* e = index.find(tname);
          if (e && e->kind == IndexKind::Task) {
            children.push_back(tname);
            with_member_origin(yaml, member_at, member, label + ".", [&] {
              add_indexed_task(tname, merge(overrides, member), top, &leaves);
            });
          } else {
            std::string inline_name = gc.name + "::" + tname;
            Json m = merge(member, overrides);
            m = merge(m, member);
            m["task"] = inline_name;
            children.push_back(inline_name);
            TaskYaml iy;
            iy.path = yaml.path;
            iy.value = m;
            // The member's own keys at their lines; the group's overrides where they were given.
            auto saved_member = override_origin;
            auto saved_member_marks = override_marks;
            locate_overrides(yaml, member_at, member, label + ".", false);
            for (auto it = m.begin(); it != m.end(); ++it) {
              auto o = override_origin.find(it.key());
              iy.origin[it.key()] = o != override_origin.end() ? o->second : where;
            }
            for (const auto& [pointer, loc] : override_marks)
              if (m.contains(pointer.substr(1, pointer.find('/', 1) - 1))) iy.marks[pointer] = loc;
            override_origin = std::move(saved_member);
            override_marks = std::move(saved_member_marks);
            add_task(iy, m, "inline", top, &leaves);
          }
        } else {
          report(UserError("group member mapping needs `task` or `group`", where, "task: <name>"));
        }
      } else {
        report(
            UserError("group member must be a name or a mapping", where, "a string or a mapping"));
      }
    }
    group_stack.pop_back();
    override_origin = std::move(saved_origin);
    override_marks = std::move(saved_marks);
    out.groups[my_index].children = children;
    out.groups[my_index].leaves = leaves;
    if (parent_leaves) parent_leaves->insert(parent_leaves->end(), leaves.begin(), leaves.end());
    return static_cast<int>(my_index);
  }

  void add_indexed_group(const std::string& name, const Json& parent_overrides,
                         const std::string& top, std::vector<std::string>* parent_leaves,
                         const SourceLocation& where = {"", 0, 0, "--tasks"}) {
    if (std::find(group_stack.begin(), group_stack.end(), name) != group_stack.end()) {
      std::string path;
      for (auto it = std::find(group_stack.begin(), group_stack.end(), name);
           it != group_stack.end(); ++it)
        path += *it + " -> ";
      report(UserError("group '" + group_stack.back() + "' includes group '" + name +
                           "', which contains it: " + path + name,
                       where, "groups that do not contain themselves"));
      return;
    }
    const IndexEntry* e = index.find(name);
    TaskYaml y;
    try {
      y = load_task_yaml(e->yaml);
    } catch (UserError& err) {
      report(err);
      return;
    }
    add_group(y, y.value, parent_overrides, top, parent_leaves);
  }

  void add_item(const std::string& name) {
    const IndexEntry* e = index.find(name);
    if (e->kind == IndexKind::Task) {
      add_indexed_task(name, Json::object(), name, nullptr);
    } else if (e->kind == IndexKind::Group) {
      add_indexed_group(name, Json::object(), name, nullptr);
    } else {
      for (const auto& t : e->tag_tasks) add_indexed_task(t, Json::object(), name, nullptr);
    }
  }

  void add_yaml_path(const fs::path& p) {
    TaskYaml y;
    try {
      y = load_task_yaml(p);
    } catch (UserError& err) {
      report(err);
      return;
    }
    std::string abs = fs::absolute(p).string();
    if (y.value.contains("group")) {
      add_group(y, y.value, Json::object(), abs, nullptr);
    } else {
      add_task(y, y.value, abs, abs, nullptr);
    }
  }
};

bool is_glob(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

// POSIX glob(3), sorted; Python's glob.glob likewise leaves out hidden files for '*'.
std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// "a, b, c, d, e and 3 more".
std::string some_of(const std::vector<std::string>& names) {
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 5);
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

// How to get the reference's library, which was not found.
std::string reference_library_advice() {
  return "run `lm-eval download --task-library` (fetches lm-eval " +
         std::string(kReferenceVersion) + "'s task files from PyPI into " +
         downloaded_task_library_path().string() +
         "), or `pip install lm-eval==" + kReferenceVersion +
         "` in the active Python environment (" + reference_task_library().described +
         "), or pass --include_path <site-packages>/lm_eval/tasks";
}

// The reference's library is not here: a glob that it would widen says what it leaves out (the
// reference's TaskManager.match_tasks matches over its library too).
void warn_of_narrowed_glob(const TaskIndex& index, const std::string& pattern, size_t matched) {
  std::vector<std::string> more;
  for (const auto& n : reference_task_names_matching(pattern))
    if (!index.find(n)) more.push_back(n);
  if (more.empty()) return;
  log::warn("--tasks '" + pattern + "' matches " + std::to_string(matched) +
            (matched == 1 ? " name" : " names") +
            " here; in the reference's task library "
            "(lm-eval 0.4.13) it also matches " +
            some_of(more) + ", which it would run too: " + reference_library_advice());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> unreadable_task_files(
    const TaskIndex& index, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::string>> named, all;
  for (const auto& [path, msg] : index.skipped()) {
    all.emplace_back(path, msg);
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string stem = fs::path(path).stem().string();
    for (const auto& n : names) {
      bool declares = stem == n;
      // A cheap look for `task: <n>` / `group: <n>` in text YAML could not parse.
      for (const char* key : {"task:", "group:"}) {
        for (size_t p = text.find(key); !declares && p != std::string::npos;
             p = text.find(key, p + 1)) {
          size_t v = text.find_first_not_of(" \t'\"", p + std::string(key).size());
          if (v != std::string::npos && text.compare(v, n.size(), n) == 0) {
            size_t after = v + n.size();
            declares = after == text.size() ||
                       std::string(" \t\r\n'\"#").find(text[after]) != std::string::npos;
          }
        }
      }
      if (declares) {
        named.emplace_back(path, msg);
        break;
      }
    }
  }
  if (!named.empty()) return named;
  if (all.size() > 5) all.resize(5);
  return all;
}

TaskSelection select_tasks(const TaskIndex& index, const std::vector<std::string>& requested,
                           const Json& run_metadata, std::vector<UserError>* collect) {
  Builder b{index, run_metadata, collect, {}, {}, {}, {}, {}};
  if (requested.empty()) {
    b.report(UserError("No tasks specified, or no tasks found. Please verify the task names.",
                       {"", 0, 0, "--tasks"}, "at least one task, group or tag name"));
    return b.out;
  }
  // The reference looks an empty name up like any other and fails ("Tasks not found: ").
  for (const auto& r : requested)
    if (r.empty()) {
      b.report(UserError("an empty task name in --tasks", {"", 0, 0, "--tasks"},
                         "task names separated by single commas, none of them empty"));
      return b.out;
    }
  // A single existing directory: every *.yaml in it.
  // error_code forms: a task name too long for a path (300 characters) is a name, no error.
  std::error_code ec;
  // A registered name wins over a folder of that name (the reference's process_tasks, which
  // warns).
  if (requested.size() == 1 && fs::is_directory(requested[0], ec)) {
    if (index.match(requested[0]).empty()) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(requested[0]))
        if (e.path().extension() == ".yaml") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) b.add_yaml_path(f);
      return b.out;
    }
    log::warn("A local directory named '" + requested[0] +
              "' exists but a registered task with the same name was found: using the "
              "registered task. To load tasks from a directory, use --include_path or rename "
              "the directory.");
  }
  std::vector<std::string> entries;
  std::set<std::string> seen_entries;
  for (const auto& r : requested) {
    std::string e = r;
    if (e.size() > 5 && e.substr(e.size() - 5) == ".yaml") e = fs::absolute(e).string();
    if (seen_entries.insert(e).second) entries.push_back(e);
  }
  std::vector<std::string> missing;
  std::vector<std::string> names;
  std::set<std::string> seen_names;
  for (const auto& e : entries) {
    if (e.size() > 5 && e.substr(e.size() - 5) == ".yaml") {
      // The reference's process_tasks expands a YAML path with glob.glob (in the directory's
      // order; sorted here).
      if (is_glob(e)) {
        std::vector<std::string> files = glob_paths(e);
        if (files.empty()) missing.push_back(e);
        for (const auto& f : files) b.add_yaml_path(f);
        continue;
      }
      if (!fs::exists(e, ec)) {
        missing.push_back(e);
        continue;
      }
      b.add_yaml_path(e);
      continue;
    }
    auto m = index.match(e);
    if (m.empty()) missing.push_back(e);
    if (m.size() > 1 || (m.size() == 1 && m[0] != e)) {
      std::string all;
      for (const auto& n : m) all += (all.empty() ? "" : ", ") + n;
      log::debug("--tasks '" + e + "' matches " + all);
    }
    if (!m.empty() && is_glob(e) && !reference_task_library().dir)
      warn_of_narrowed_glob(index, e, m.size());
    for (const auto& n : m)
      if (seen_names.insert(n).second) names.push_back(n);
  }
  if (!missing.empty()) {
    std::string list, hints;
    for (const auto& m : missing) {
      list += (list.empty() ? "" : ", ") + m;
      std::string h = did_you_mean(m, index.all_names());
      if (!h.empty()) hints += (hints.empty() ? "" : ", ") + m + " -> " + h;
    }
    // A name is often missing because the file that defines it could not be read: say why.
    // (validate, collecting, lists every unreadable file as a problem of its own.)
    std::string causes;
    if (!collect)
      for (const auto& [path, msg] : unreadable_task_files(index, missing)) causes += "\n  " + msg;
    // Names of the reference's library when it is not installed: say how to get it.
    std::string reference;
    const auto& lib = reference_task_library();
    if (!lib.dir) {
      std::string names;
      size_t count = 0;
      for (const auto& m : missing) {
        std::string item;
        if (is_reference_task_name(m)) {
          item = m;
        } else if (is_glob(m)) {
          auto matching = reference_task_names_matching(m);
          if (!matching.empty()) item = m + " (matching " + some_of(matching) + ")";
        }
        if (item.empty()) continue;
        names += (names.empty() ? "" : ", ") + item;
        ++count;
      }
      if (!names.empty())
        reference =
            "; " + names + (count == 1 ? " is" : " are") +
            " in the reference's task library (lm-eval 0.4.13): " + reference_library_advice();
    }
    b.report(UserError(
        "Tasks not found: " + list + (hints.empty() ? "" : " (did you mean: " + hints + "?)") +
            (causes.empty() ? "" : "; these task files could not be read:" + causes) + reference,
        {"", 0, 0, "--tasks"}, "names listed by `lm-eval ls tasks`, globs, or YAML paths"));
  }
  for (const auto& n : names) b.add_item(n);
  return b.out;
}

}  // namespace lmeval
