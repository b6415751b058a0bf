// Python bindings of the generator and the threading controls (the random ops' faces are generated: random.yaml).

#include <omp.h>

#include <random>

#include "../ops/random.h"
#include "../kernels/blas.h"
#include "python_util.h"

namespace fl::python {
namespace {

void bind(py::module_& m, TensorClass&) {
  py::class_<Generator, std::shared_ptr<Generator>>(m, "Generator", "A Philox random number generator (seed + offset).")
      .def(py::init([](py::object device) { return std::make_shared<Generator>(); }), py::arg("device") = "cpu")
      .def("manual_seed", [](py::object self, py::int_ seed) {
        Generator& g = *py::cast<Generator*>(self);
        // negative seeds wrap to uint64 as PyTorch's do
        g.seed = static_cast<uint64_t>(PyLong_AsUnsignedLongLongMask(seed.ptr()));
        g.offset = 0;
        return self;
      }, py::arg("seed"))
      .def("initial_seed", [](const Generator& g) { return g.seed; })
      .def("seed", [](Generator& g) {
        std::random_device rd;
        g.seed = (uint64_t(rd()) << 32 | rd()) & ((uint64_t(1) << 63) - 1);
        g.offset = 0;
        return g.seed;
      })
      .def("get_state", [](const Generator& g) {
        Tensor t = empty({16}, ScalarType::UInt8);
        std::memcpy(t->data_ptr(), &g.seed, 8);
        std::memcpy(t->data_ptr() + 8, &g.offset, 8);
        return t;
      })
      .def("set_state", [](py::object self, const Tensor& state) {
        FL_CHECK(state, TypeError, "set_state(): argument 'new_state' (position 1) must be Tensor, not NoneType");
        FL_CHECK(state->dtype == ScalarType::UInt8 && state->numel == 16 && state->contiguous, Error,
                 "RNG state must be a contiguous uint8 tensor of 16 bytes (seed, offset), got ", state->numel, " elements");
        Generator& g = *py::cast<Generator*>(self);
        std::memcpy(&g.seed, state->data_ptr(), 8);
        std::memcpy(&g.offset, state->data_ptr() + 8, 8);
        return self;
      }, py::arg("new_state"))
      .def_property_readonly("device", [](const Generator&) { return cpu_device_object(); });
  m.attr("default_generator") = py::cast(std::shared_ptr<Generator>(&default_generator(), [](Generator*) {}));

  m.def("get_num_threads", []() { return fl::get_num_threads(); }, "Threads used for intra-op parallelism.");
  m.def("set_num_threads", [](int n) {
    FL_CHECK(n > 0, Error, "set_num_threads expects a positive integer");
    fl::set_num_threads(n);  // every thread of the process, as torch's (Note [Thread count])
    blas::set_num_threads(n);
  }, py::arg("int"), "Sets the number of threads used for intra-op parallelism, for every thread of the process.");
  m.def("_openmp_state", []() {
    const int icv = omp_get_max_threads();  // as this thread's last op call left it
    sync_num_threads();
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
      team = omp_get_num_threads();
    }
    return std::make_pair(icv, team);
  }, "(this thread's OpenMP thread count before syncing, the team an op's parallel region gets): for the tests of "
     "Note [Thread count].");
}

}  // namespace
}  // namespace fl::python

FL_PY_BINDINGS(50, fl::python::bind)
