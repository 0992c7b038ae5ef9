// The reference's task library fetched from PyPI (`lm-eval download --task-library`, issue 33
// point 3): lm_eval/tasks/** of the pinned release's wheel, its published sha256 checked,
// extracted into lm-eval's cache so that its tasks run by name without a Python environment.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmeval {

// The release whose library is fetched: the one lm-eval reproduces.
inline constexpr const char* kReferencePackage = "lm-eval";
inline constexpr const char* kReferenceVersion = "0.4.13";

// lm-eval's cache folder: $XDG_CACHE_HOME/lm-eval, else ~/.cache/lm-eval; empty without either
// (defined beside the task index's cache, task_index.cpp).
std::filesystem::path lmeval_cache_dir();

// <lmeval_cache_dir()>/task-library/<version>/lm_eval/tasks (whether or not it exists); empty
// without a cache folder.
std::filesystem::path downloaded_task_library_path();
// That folder when a download completed there.
std::optional<std::filesystem::path> downloaded_task_library();

// For an error about Python while loading a task from `yaml_file`: when that file is in the
// downloaded library, a sentence saying that its Python helpers still need the reference's
// environment (else "").
std::string downloaded_library_python_note(const std::string& yaml_file);

struct TaskLibraryDownload {
  std::filesystem::path dir;  // the lm_eval/tasks folder
  std::string url;
  std::string sha256;
  size_t files = 0;
};

// Fetches, verifies and installs the library (replacing an earlier download as one rename).
// RuntimeError for network, hash and archive failures (nothing is left behind); UserError when
// the archive holds a member name that would land outside the folder.
TaskLibraryDownload download_task_library();

// When `names` (asked for, of the reference's library, not found here) are wanted and stdin
// and stderr are terminals (and $CI is unset): asks on stderr whether to download the library,
// and does so on "y". The library's folder when it was downloaded; nullopt otherwise (no
// terminal, declined, or the download failed: said on stderr, the run goes on to its "not found").
std::optional<std::filesystem::path> offer_task_library_download(
    const std::vector<std::string>& names);

}  // namespace lmeval
