// keep_freed_memory (malloc_policy.hpp): a large block comes from the heap, not from a mapping of
// its own, once applied; a user's malloc setting keeps it from being applied.
#include "models/malloc_policy.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lmeval {
namespace {

#if defined(__GLIBC__)
// Bytes of blocks mapped on their own while `bytes` are allocated (and written).
size_t mapped_while_holding(size_t bytes) {
  // Through a volatile pointer: the compiler may not drop the allocation.
  void* volatile p = std::malloc(bytes);
  std::memset(p, 1, bytes);
  const size_t mapped = mallinfo2().hblkhd;
  std::free(p);
  return mapped;
}

TEST(MallocPolicy, LargeBlocksComeFromTheHeapOnceApplied) {
  constexpr size_t kBlock = 64u << 20;
  EXPECT_GE(mapped_while_holding(kBlock), kBlock);  // glibc's default: a mapping of its own
  setenv("GLIBC_TUNABLES", "glibc.malloc.check=0", 1);
  EXPECT_FALSE(keep_freed_memory());  // the user's setting wins
  EXPECT_GE(mapped_while_holding(kBlock), kBlock);
  unsetenv("GLIBC_TUNABLES");
  ASSERT_TRUE(keep_freed_memory());
  EXPECT_LT(mapped_while_holding(kBlock), kBlock);
}
#else
TEST(MallocPolicy, NotAppliedWithoutGlibc) { EXPECT_FALSE(keep_freed_memory()); }
#endif

}  // namespace
}  // namespace lmeval
