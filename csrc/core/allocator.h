// Caching CPU allocator: freed blocks are kept by size class and handed out again, so that
// large eager ops reuse warm pages instead of faulting in fresh ones.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fl {

struct MemoryStats {
  int64_t allocated = 0;        // bytes in blocks handed out now
  int64_t max_allocated = 0;    // peak of `allocated` since the last reset
  int64_t reserved = 0;         // bytes held from the system (handed out + cached)
  int64_t max_reserved = 0;
  int64_t num_allocs = 0;       // calls to allocate
  int64_t num_cache_hits = 0;   // of those, served from the cache
};

class CPUAllocator {
 public:
  static CPUAllocator& get();
  // Returns a 64-byte aligned block of at least `nbytes`; `*capacity` receives the block size,
  // which must be passed back to `free`. `exact`: the block is `nbytes` rounded to 64 bytes, not to a size class
  // (one large block asked for again and again with the same size: a graph run's arena).
  void* allocate(size_t nbytes, size_t* capacity, bool exact = false);
  void free(void* ptr, size_t capacity);
  void empty_cache();
  MemoryStats stats();
  void reset_peak_stats();
  static size_t round_size(size_t nbytes);
};

}  // namespace fl
