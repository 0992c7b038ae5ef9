#include "models/malloc_policy.hpp"

#include <cstdlib>
#include <initializer_list>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lmeval {

bool keep_freed_memory() {
#if defined(__GLIBC__)
  for (const char* user :
       {"MALLOC_MMAP_MAX_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"})
    if (std::getenv(user)) return false;
  // Both are needed: without mmapped blocks the trimmed heap faults again; without trimming the
  // blocks over the threshold (up to 32 MB, and every larger one) are still unmapped.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1;
#else
  return false;
#endif
}

}  // namespace lmeval
