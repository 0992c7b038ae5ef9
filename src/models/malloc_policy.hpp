// How glibc's malloc treats freed memory while a model runs (hf_plugin.cpp applies it when an hf
// backend loads).
#pragma once

namespace lmeval {

// glibc maps every block over its mmap threshold afresh and unmaps it when freed, and trims the
// heap's free top back to the system: each large temporary of a forward pass (a prefill's
// [heads, T, S] attention scores, 20-60 MB) was faulted in page by page again, and the kernel's
// page-fault handling took more time than the arithmetic (docs/performance.md, "Page faults").
// Applied: no mmapped blocks and no trimming, so freed memory is reused (the process keeps its
// peak). Returns false where it is not applied: not glibc, or the user set MALLOC_MMAP_MAX_,
// MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES (their setting wins).
bool keep_freed_memory();

}  // namespace lmeval
