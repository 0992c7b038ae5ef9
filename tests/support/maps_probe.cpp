// LD_PRELOAD probe for tests/cli/lazy_torch_test.cpp and lazy_python_test.cpp: when lm-eval
// exits, appends the lines of its own /proc/self/maps that name libtorch, c10 or libpython (and
// lm-eval's Python plugin) to $LMEVAL_MAPS_PROBE_OUT, then a marker line
// (so a test can tell "nothing mapped" from "the probe never ran").
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace {

__attribute__((destructor)) void dump_torch_mappings() {
  const char* out_path = std::getenv("LMEVAL_MAPS_PROBE_OUT");
  if (!out_path || !*out_path) return;
  // Only lm-eval's own process: the preload is inherited by what it starts (a python3 asked
  // where a package is), whose mappings are not lm-eval's.
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  const char* base = std::strrchr(exe, '/');
  if (std::strcmp(base ? base + 1 : exe, "lm-eval") != 0) return;
  FILE* maps = std::fopen("/proc/self/maps", "r");
  FILE* out = std::fopen(out_path, "a");
  if (!maps || !out) {
    if (maps) std::fclose(maps);
    if (out) std::fclose(out);
    return;
  }
  char line[8192];
  while (std::fgets(line, sizeof line, maps))
    if (std::strstr(line, "libtorch") || std::strstr(line, "libc10") ||
        std::strstr(line, "libpython") || std::strstr(line, "liblmeval_python"))
      std::fputs(line, out);
  std::fputs("maps-probe-ran\n", out);
  std::fclose(maps);
  std::fclose(out);
}

}  // namespace
