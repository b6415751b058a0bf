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

}  // namespace fl

using namespace fl;

FL_DEFINE_OP(_c10d_all_reduce_, "_c10d_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
             Tensor(const Tensor&, const std::string&, const std::string&))
FL_REGISTER_KERNEL(_c10d_all_reduce_, CPU,
                   [](DispatchKeySet, const Tensor& t, const std::string& reduce_op, const std::string& group) {
  backend("all_reduce")->all_reduce(t, reduce_op, group);
  t->bump_version();
  return t;
})
FL_REGISTER_FALLTHROUGH(_c10d_all_reduce_, Autograd)

FL_DEFINE_OP(_c10d_broadcast_, "_c10d_broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)",
             Tensor(const Tensor&, int64_t, const std::string&))
FL_REGISTER_KERNEL(_c10d_broadcast_, CPU, [](DispatchKeySet, const Tensor& t, int64_t src, const std::string& group) {
  backend("broadcast")->broadcast(t, src, group);
  t->bump_version();
  return t;
})
FL_REGISTER_FALLTHROUGH(_c10d_broadcast_, Autograd)
