#include "collective.h"

#include <mutex>

namespace fl {
namespace {

std::mutex g_backend_mutex;
std::shared_ptr<CollectiveBackend> g_backend;

std::shared_ptr<CollectiveBackend> backend(const char* op) {
  std::lock_guard<std::mutex> lock(g_backend_mutex);
  FL_CHECK(g_backend != nullptr, Error, op, ": Default process group has not been initialized, please make sure to "
           "call init_process_group.");
  return g_backend;
}

}  // namespace

void set_collective_backend(std::shared_ptr<CollectiveBackend> b) {
  std::lock_guard<std::mutex> lock(g_backend_mutex);
  g_backend = std::move(b);
}

// The kernels of collective.yaml's ops: the engine communicates in place; the version bump tells saved tensors
// that the data changed.
Tensor c10d_all_reduce_cpu(const Tensor& t, const std::string& reduce_op, const std::string& group) {
  backend("all_reduce")->all_reduce(t, reduce_op, group);
  t->bump_version();
  return t;
}

Tensor c10d_broadcast_cpu(const Tensor& t, int64_t src, const std::string& group) {
  backend("broadcast")->broadcast(t, src, group);
  t->bump_version();
  return t;
}

}  // namespace fl
