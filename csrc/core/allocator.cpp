#include "allocator.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "error.h"

namespace fl {
namespace {

struct State {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;  // size class -> blocks
  int64_t cached_bytes = 0;
  int64_t cache_limit = int64_t(4) << 30;
  MemoryStats stats;
};

State& state() {
  static State* s = new State();  // leaked on purpose: tensors may be freed during interpreter exit
  return *s;
}

thread_local bool tls_in_cache_update = false;  // this thread holds State::mu while the cache's lists grow

// operator new out of memory while this cache holds freed blocks: hand them back to the system and let new try
// again (tensors just freed sit here, not in malloc: a destructor that must queue or record something, such as
// Node's teardown, would otherwise find no memory at all). Nothing cached, or the cache itself growing: bad_alloc.
void release_cache_for_new() {
  if (tls_in_cache_update) throw std::bad_alloc();
  State& s = state();
  {
    std::lock_guard<std::mutex> g(s.mu);  // (free of this thread: only the cache's growth allocates under it)
    if (s.cached_bytes == 0) throw std::bad_alloc();
  }
  CPUAllocator::get().empty_cache();
}

[[maybe_unused]] const bool new_handler_installed = (std::set_new_handler(release_cache_for_new), true);

}  // namespace

CPUAllocator& CPUAllocator::get() {
  static CPUAllocator a;
  return a;
}

size_t CPUAllocator::round_size(size_t n) {
  if (n == 0) return 64;
  if (n <= 4096) return (n + 63) & ~size_t(63);
  // Four size classes per power of two: at most 25% slack, few distinct classes.
  size_t p = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

void* CPUAllocator::allocate(size_t nbytes, size_t* capacity, bool exact) {
  size_t sz = exact ? (std::max<size_t>(nbytes, 1) + 63) & ~size_t(63) : round_size(nbytes);
  State& s = state();
  {
    std::lock_guard<std::mutex> g(s.mu);
    s.stats.num_allocs++;
    auto it = s.free_blocks.find(sz);
    if (it != s.free_blocks.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      s.cached_bytes -= sz;
      s.stats.num_cache_hits++;
      s.stats.allocated += sz;
      if (s.stats.allocated > s.stats.max_allocated) s.stats.max_allocated = s.stats.allocated;
      *capacity = sz;
      return p;
    }
  }
  void* p = std::aligned_alloc(64, sz);
  if (!p) {
    empty_cache();
    p = std::aligned_alloc(64, sz);
  }
  FL_CHECK(p, Error, "CPU out of memory: tried to allocate ", nbytes, " bytes");
  std::lock_guard<std::mutex> g(s.mu);
  s.stats.allocated += sz;
  s.stats.reserved += sz;
  if (s.stats.allocated > s.stats.max_allocated) s.stats.max_allocated = s.stats.allocated;
  if (s.stats.reserved > s.stats.max_reserved) s.stats.max_reserved = s.stats.reserved;
  *capacity = sz;
  return p;
}

void CPUAllocator::free(void* ptr, size_t capacity) {
  State& s = state();
  {
    std::lock_guard<std::mutex> g(s.mu);
    s.stats.allocated -= capacity;
    if (s.cached_bytes + int64_t(capacity) <= s.cache_limit) {
      try {
        tls_in_cache_update = true;
        s.free_blocks[capacity].push_back(ptr);
        tls_in_cache_update = false;
        s.cached_bytes += capacity;
        return;
      } catch (const std::bad_alloc&) {
        tls_in_cache_update = false;
        // no memory for the cache's bookkeeping (free runs in destructors, which must not throw): release the block
      }
    }
    s.stats.reserved -= capacity;
  }
  std::free(ptr);
}

void CPUAllocator::empty_cache() {
  State& s = state();
  // taken whole, not copied: empty_cache runs when an allocation has just failed, with no memory to spare
  std::unordered_map<size_t, std::vector<void*>> release;
  {
    std::lock_guard<std::mutex> g(s.mu);
    release.swap(s.free_blocks);
    for (auto& kv : release) s.stats.reserved -= int64_t(kv.first) * int64_t(kv.second.size());
    s.cached_bytes = 0;
  }
  for (auto& kv : release)
    for (void* p : kv.second) std::free(p);
}

MemoryStats CPUAllocator::stats() {
  std::lock_guard<std::mutex> g(state().mu);
  return state().stats;
}

void CPUAllocator::reset_peak_stats() {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.stats.max_allocated = s.stats.allocated;
  s.stats.max_reserved = s.stats.reserved;
}


}  // namespace fl
