// The wheel is read in memory and lm_eval/tasks/** written into a fresh temporary folder beside
// the target, which is renamed into place only when every member was written: a failed or
// interrupted download leaves the previous library (or none) as it was.
#include "lmeval/tasks/task_library_download.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "lmeval/core/atomic_file.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/data/pypi_release.hpp"
#include "lmeval/data/zip_archive.hpp"

namespace lmeval {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTasksPrefix = "lm_eval/tasks/";
// Written last into the version folder: its presence says the download completed.
constexpr const char* kStampFile = "DOWNLOADED";

fs::path version_dir() {
  const fs::path cache = lmeval_cache_dir();
  return cache.empty() ? fs::path() : cache / "task-library" / kReferenceVersion;
}

void write_member(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw RuntimeError("cannot write " + path.string());
}

// Removes the temporary folder unless released.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

fs::path downloaded_task_library_path() {
  const fs::path v = version_dir();
  return v.empty() ? v : v / "lm_eval" / "tasks";
}

std::optional<fs::path> downloaded_task_library() {
  if (version_dir().empty()) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(version_dir() / kStampFile, ec)) return std::nullopt;
  const fs::path dir = downloaded_task_library_path();
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return dir;
}

std::string downloaded_library_python_note(const std::string& yaml_file) {
  const auto dir = downloaded_task_library();
  if (!dir || yaml_file.rfind(dir->string() + "/", 0) != 0) return "";
  return " (this task comes from the task library `lm-eval download --task-library` fetched: "
         "tasks without Python helpers run from it as they are, tasks with Python helpers need "
         "the reference's Python environment, `pip install lm-eval==" +
         std::string(kReferenceVersion) + "` in the active one)";
}

TaskLibraryDownload download_task_library() {
  const fs::path target = version_dir();
  if (target.empty())
    throw UserError("no cache folder for the task library: neither XDG_CACHE_HOME nor HOME is set",
                    {"", 0, 0, "XDG_CACHE_HOME"}, "a writable folder");
  const PypiFile wheel = pypi_wheel(kReferencePackage, kReferenceVersion);
  const ZipArchive zip(download_verified(wheel), wheel.filename);
  TaskLibraryDownload out;
  out.url = wheel.url;
  out.sha256 = wheel.sha256;
  // Every name is checked before anything is written.
  for (const auto& e : zip.entries())
    if (e.name.rfind(kTasksPrefix, 0) == 0 && !is_safe_zip_member_name(e.name))
      throw UserError("refusing " + wheel.filename + ": its member '" + e.name +
                          "' would be written outside the task library folder",
                      {wheel.url, 0, 0, e.name}, "relative names without '..' parts");
  create_output_folder(target.parent_path());
  TempDir tmp{target.parent_path() /
              ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()))};
  std::error_code ec;
  fs::remove_all(tmp.path, ec);
  for (const auto& e : zip.entries()) {
    if (e.name.rfind(kTasksPrefix, 0) != 0 || e.name.back() == '/') continue;
    write_member(tmp.path / e.name, zip.read(e));
    ++out.files;
  }
  if (out.files == 0) throw RuntimeError(wheel.filename + " holds no " + kTasksPrefix + " files");
  write_member(tmp.path / kStampFile, wheel.url + "\nsha256 " + wheel.sha256 + "\n");
  // The old download is moved aside first: rename cannot replace a non-empty folder.
  const fs::path old = target.parent_path() /
                       ("." + target.filename().string() + ".old" + std::to_string(::getpid()));
  if (fs::exists(target, ec)) fs::rename(target, old);
  fs::rename(tmp.path, target);
  tmp.path.clear();
  fs::remove_all(old, ec);
  out.dir = target / "lm_eval" / "tasks";
  return out;
}

std::optional<fs::path> offer_task_library_download(const std::vector<std::string>& names) {
  const char* ci = std::getenv("CI");
  if (names.empty() || !::isatty(0) || !::isatty(2) || (ci && *ci)) return std::nullopt;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::cerr << list << (names.size() == 1 ? " is" : " are") << " in the task library of "
            << kReferencePackage << " " << kReferenceVersion
            << ", which is not here. Download its task files from PyPI into "
            << downloaded_task_library_path().string() << " now? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer) || (answer != "y" && answer != "Y" && answer != "yes"))
    return std::nullopt;
  try {
    const TaskLibraryDownload got = download_task_library();
    std::cerr << "task library: " << got.files << " files (sha256 verified) in " << got.dir.string()
              << "\n";
    return got.dir;
  } catch (const std::exception& e) {
    std::cerr << "the task library could not be downloaded: " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace lmeval
