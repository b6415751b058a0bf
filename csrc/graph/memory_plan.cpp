#include "memory_plan.h"

#include <algorithm>
#include <exception>

#include "../core/allocator.h"

namespace fl::graph {

namespace {
constexpr size_t kAlign = 64;  // as the caching allocator's blocks
size_t aligned(size_t n) { return (std::max<size_t>(n, 1) + kAlign - 1) / kAlign * kAlign; }
}  // namespace

struct MemoryPlan::Shared {
  std::mutex mu;                      // storages may be freed on another thread
  std::vector<Record> records;        // while recording
  int64_t clock = 0;
  std::unique_ptr<std::atomic<bool>[]> alive;  // per planned allocation: its storage still exists
};

MemoryPlan::Recording::Recording(MemoryPlan& p)
    : plan(p), previous(detail::allocation_planner), exceptions(std::uncaught_exceptions()) {
  plan.shared_ = std::make_shared<Shared>();  // storages of an earlier plan keep theirs
  plan.recording_ = true;
  plan.planned_ = false;
  detail::allocation_planner = &plan;
}

MemoryPlan::Recording::~Recording() {
  detail::allocation_planner = previous;
  plan.recording_ = false;
  if (std::uncaught_exceptions() == exceptions) plan.finish_recording();
}

MemoryPlan::Run::Run(MemoryPlan& p) : plan(p), previous(detail::allocation_planner) {
  plan.next_ = 0;
  plan.stats_.fallbacks = 0;
  if (plan.stats_.arena_bytes > 0) {
    // one block of the caching allocator for the whole run, handed back when the run and every tensor placed in it
    // are gone
    size_t capacity = 0;
    void* data = CPUAllocator::get().allocate(static_cast<size_t>(plan.stats_.arena_bytes), &capacity,
                                              /*exact=*/true);
    plan.arena_ = std::shared_ptr<void>(data, [capacity](void* d) { CPUAllocator::get().free(d, capacity); });
  }
  detail::allocation_planner = &plan;
}

MemoryPlan::Run::~Run() {
  detail::allocation_planner = previous;
  plan.arena_.reset();
}

std::shared_ptr<StorageImpl> MemoryPlan::allocate(size_t nbytes) {
  if (recording_) {
    auto s = StorageImpl::heap_allocate(nbytes);
    std::shared_ptr<Shared> shared = shared_;
    size_t k;
    {
      std::lock_guard<std::mutex> g(shared->mu);
      k = shared->records.size();
      shared->records.push_back({nbytes, shared->clock++, -1});
    }
    s->external = std::shared_ptr<void>(nullptr, [shared, k](void*) {
      std::lock_guard<std::mutex> g(shared->mu);
      if (k < shared->records.size()) shared->records[k].freed_at = shared->clock++;
    });
    return s;
  }
  const size_t k = next_++;
  if (!arena_ || k >= offset_.size() || offset_[k] < 0) return nullptr;  // not planned: the caching allocator
  bool free = nbytes == recorded_size_[k];
  for (int32_t j : conflicts_[k]) free = free && !shared_->alive[j].load(std::memory_order_acquire);
  if (!free || shared_->alive[k].load(std::memory_order_acquire)) {
    ++stats_.fallbacks;
    return nullptr;
  }
  shared_->alive[k].store(true, std::memory_order_release);
  auto s = std::make_shared<StorageImpl>();
  s->data = static_cast<char*>(arena_.get()) + offset_[k];
  s->nbytes = nbytes;
  s->resizable = false;  // its bytes are planned: growing would need the caching allocator's block
  std::shared_ptr<Shared> shared = shared_;
  std::shared_ptr<void> arena = arena_;
  s->external = std::shared_ptr<void>(nullptr, [shared, arena, k](void*) {
    shared->alive[k].store(false, std::memory_order_release);
  });
  return s;
}

void MemoryPlan::finish_recording() {
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> g(shared_->mu);
    records = shared_->records;
    shared_->records.clear();
  }
  const size_t n = records.size();
  stats_ = {};
  stats_.allocations = static_cast<int64_t>(n);
  recorded_size_.assign(n, 0);
  offset_.assign(n, -1);
  conflicts_.assign(n, {});
  // the peak of live bytes, replaying the clock
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +bytes / -bytes)
  std::vector<size_t> order;
  for (size_t k = 0; k < n; ++k) {
    const Record& r = records[k];
    recorded_size_[k] = r.nbytes;
    events.emplace_back(r.allocated_at, static_cast<int64_t>(r.nbytes));
    if (r.freed_at >= 0) {
      events.emplace_back(r.freed_at, -static_cast<int64_t>(r.nbytes));
      order.push_back(k);
      stats_.planned_bytes += static_cast<int64_t>(r.nbytes);
    } else {
      stats_.kept_bytes += static_cast<int64_t>(r.nbytes);
    }
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (const auto& [t, bytes] : events) stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, live += bytes);
  // largest first, each at the lowest offset not used by an allocation alive at the same time
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return records[a].nbytes > records[b].nbytes; });
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t k : order) {
    const Record& r = records[k];
    std::vector<std::pair<int64_t, int64_t>> taken;  // byte ranges of placed allocations alive with k
    for (size_t j : placed) {
      const Record& o = records[j];
      if (o.allocated_at < r.freed_at && r.allocated_at < o.freed_at)
        taken.emplace_back(offset_[j], offset_[j] + static_cast<int64_t>(aligned(o.nbytes)));
    }
    std::sort(taken.begin(), taken.end());
    const int64_t size = static_cast<int64_t>(aligned(r.nbytes));
    int64_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (at + size <= lo) break;
      at = std::max(at, hi);
    }
    offset_[k] = at;
    arena = std::max(arena, at + size);
    placed.push_back(k);
  }
  // the planned allocations sharing bytes (their lifetimes are disjoint): each must be gone before the other is served
  for (size_t a = 0; a < placed.size(); ++a)
    for (size_t b = a + 1; b < placed.size(); ++b) {
      const size_t i = placed[a], j = placed[b];
      if (offset_[i] < offset_[j] + static_cast<int64_t>(aligned(records[j].nbytes)) &&
          offset_[j] < offset_[i] + static_cast<int64_t>(aligned(records[i].nbytes))) {
        conflicts_[i].push_back(static_cast<int32_t>(j));
        conflicts_[j].push_back(static_cast<int32_t>(i));
      }
    }
  shared_->alive.reset(new std::atomic<bool>[n]);
  for (size_t k = 0; k < n; ++k) shared_->alive[k].store(false);
  stats_.planned = static_cast<int64_t>(placed.size());
  stats_.arena_bytes = arena;
  planned_ = true;
}

}  // namespace fl::graph
