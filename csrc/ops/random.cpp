// CPU kernels of the random ops. Element i of an op's output uses Philox block (start + i / 4)
// word i % 4 (two words for 64-bit draws), so results do not depend on the thread count.
#include "random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "../kernels/loops.h"

namespace fl {
namespace {

struct Philox {
  uint32_t out[4];
  Philox(uint64_t seed, uint64_t counter) {
    uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int r = 0; r < 10; ++r) {
      uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
      uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(p1);
      c3 = static_cast<uint32_t>(p0);
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
  }
};

// Uniform in [0, 1) with the precision of T's mantissa.
template <typename T> inline double uniform01(uint32_t a, uint32_t b) {
  if constexpr (std::is_same_v<T, double>) return ((uint64_t(a) << 21) ^ (b >> 11)) * (1.0 / 9007199254740992.0);
  else return (a >> 8) * (1.0 / 16777216.0);
}

// Fills `t` (any layout) with f(i, words) where words = the 4 Philox outputs of element i's block.
template <typename scalar_t, typename F>
void fill_random(const Tensor& t, Generator* gen, int per_block, F f) {
  Generator& g = gen ? *gen : default_generator();
  int64_t n = t->numel;
  uint64_t start = g.reserve((n + per_block - 1) / per_block);
  uint64_t seed = g.seed;
  Tensor dense = t->contiguous ? t : empty(t->sizes, t->dtype);
  scalar_t* out = dense->data<scalar_t>();
  int64_t nblocks = (n + per_block - 1) / per_block;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t b = 0; b < nblocks; ++b) {
    Philox p(seed, start + b);
    for (int j = 0; j < per_block && b * per_block + j < n; ++j) out[b * per_block + j] = f(p.out, j);
  }
  if (dense != t) copy_into(t, dense);
  t->bump_version();
}

}  // namespace

Tensor uniform_cpu(const Tensor& t, double lo, double hi, Generator* gen) {
  FL_CHECK(lo <= hi, Error, "uniform_ expects to return a [from, to) range, but found from=", lo, " > to=", hi);
  FL_DISPATCH_FLOATING(t->dtype, "uniform_", {
    bool dbl = std::is_same_v<scalar_t, double>;
    fill_random<scalar_t>(t, gen, dbl ? 2 : 4, [=](const uint32_t* w, int j) {
      double u = dbl ? uniform01<double>(w[2 * j], w[2 * j + 1]) : uniform01<float>(w[j], 0);
      return static_cast<scalar_t>(static_cast<float>(lo + u * (hi - lo)));
    });
  });
  return t;
}

Tensor normal_cpu(const Tensor& t, double mean, double std, Generator* gen) {
  FL_CHECK(std >= 0, Error, "normal expects std >= 0.0, but found std ", std);
  FL_DISPATCH_FLOATING(t->dtype, "normal_", {
    // Box-Muller: each block's 4 words give two uniforms in double precision -> two normals
    fill_random<scalar_t>(t, gen, 2, [=](const uint32_t* w, int j) {
      double u1 = 1.0 - uniform01<double>(w[0], w[1]), u2 = uniform01<double>(w[2], w[3]);
      double r = std::sqrt(-2.0 * std::log(u1)), th = 6.283185307179586 * u2;
      double z = j == 0 ? r * std::cos(th) : r * std::sin(th);
      if constexpr (std::is_same_v<scalar_t, double>) return mean + z * std;
      else return static_cast<scalar_t>(static_cast<float>(mean + z * std));
    });
  });
  return t;
}

// random_'s bound without `to`, as torch's: every integer the dtype holds exactly (2^digits for floating types),
// the largest value + 1 for integer types
int64_t random_default_to(ScalarType dt) {
  switch (dt) {
    case ScalarType::Bool: return 2;
    case ScalarType::UInt8: return int64_t(1) << 8;
    case ScalarType::Int8: return int64_t(1) << 7;
    case ScalarType::Int16: return int64_t(1) << 15;
    case ScalarType::Int32: return int64_t(1) << 31;
    case ScalarType::Int64: return std::numeric_limits<int64_t>::max();
    case ScalarType::Float16: return int64_t(1) << 11;
    case ScalarType::BFloat16: return int64_t(1) << 8;
    case ScalarType::Float64: return int64_t(1) << 53;
    default: return int64_t(1) << std::min<size_t>(24, 8 * element_size(dt));  // float32, and float8's 2^8
  }
}

Tensor random_cpu(const Tensor& t, int64_t lo, std::optional<int64_t> to, Generator* gen) {
  const int64_t hi = to ? *to : random_default_to(t->dtype);
  FL_CHECK(lo < hi, Error, "random_ expects 'from' to be less than 'to', but got from=", lo, " >= to=", hi);
  uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  FL_DISPATCH_ALL(t->dtype, "random_", {
    fill_random<scalar_t>(t, gen, 2, [=](const uint32_t* w, int j) {
      uint64_t r = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
      int64_t v = lo + static_cast<int64_t>(r % range);
      if constexpr (std::is_same_v<scalar_t, bool>) return v != 0;
      else return static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(v));
    });
  });
  return t;
}

Tensor bernoulli_cpu(const Tensor& t, const Tensor& p, Generator* gen) {
  Tensor u = empty(t->sizes, ScalarType::Float64);
  uniform_cpu(u, 0.0, 1.0, gen);
  Tensor pd = to_dtype(p, ScalarType::Float64);
  FL_CHECK(broadcast_shapes(t->sizes, pd->sizes, "bernoulli_") == t->sizes, Error, "bernoulli_: probability of shape ",
           shape_str(p->sizes), " cannot be broadcast to ", shape_str(t->sizes));
  Tensor bits = empty(t->sizes, ScalarType::Bool);
  bool bad = false;
  ElementwiseIter it({bits.get(), u.get(), pd.get()}, "bernoulli_");
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      double prob = *reinterpret_cast<const double*>(d[2] + i * s[2]);
      if (!(prob >= 0 && prob <= 1)) bad = true;
      *reinterpret_cast<bool*>(d[0] + i * s[0]) = *reinterpret_cast<const double*>(d[1] + i * s[1]) < prob;
    }
  }, int64_t(1) << 62);
  FL_CHECK(!bad, Error, "bernoulli_: Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  copy_into(t, bits);
  t->bump_version();
  return t;
}

Tensor randperm_cpu(int64_t n, ScalarType dtype, Generator* gen) {
  FL_CHECK(n >= 0, Error, "randperm: n must be non-negative, got ", n);
  Tensor idx = empty({n}, ScalarType::Int64);
  int64_t* v = idx->data<int64_t>();
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  Generator& g = gen ? *gen : default_generator();
  uint64_t start = g.reserve((n + 1) / 2);
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates, one 64-bit draw per step
    Philox p(g.seed, start + i / 2);
    uint64_t r = (uint64_t(p.out[2 * (i % 2)]) << 32) | p.out[2 * (i % 2) + 1];
    std::swap(v[i], v[r % uint64_t(i + 1)]);
  }
  return to_dtype(idx, dtype);
}

Tensor multinomial_cpu(const Tensor& probs, int64_t k, bool replacement, Generator* gen) {
  FL_CHECK(probs->dim() == 1 || probs->dim() == 2, Error, "multinomial: prob_dist must be 1 or 2 dim, got ", probs->dim());
  FL_CHECK(is_floating(probs->dtype), Error, "multinomial only supports floating-point dtypes for input, got: ",
           dtype_name(probs->dtype));
  int64_t rows = probs->dim() == 1 ? 1 : probs->sizes[0], cats = probs->sizes.back();
  FL_CHECK(k > 0, Error, "multinomial: cannot sample n_sample <= 0 samples");
  FL_CHECK(replacement || k <= cats, Error, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  Tensor p = contiguous(to_dtype(probs, ScalarType::Float64));
  Tensor u = empty({rows, k}, ScalarType::Float64);
  uniform_cpu(u, 0.0, 1.0, gen);
  Tensor out = empty(probs->dim() == 1 ? IntList{k} : IntList{rows, k}, ScalarType::Int64);
  const double* pd = p->data<double>();
  const double* ud = u->data<double>();
  int64_t* od = out->data<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> w(pd + r * cats, pd + (r + 1) * cats);
    double total = 0;
    for (double x : w) {
      FL_CHECK(std::isfinite(x) && x >= 0, Error, "multinomial: probability tensor contains either `inf`, `nan` or element < 0");
      total += x;
    }
    FL_CHECK(total > 0, Error, "multinomial: invalid multinomial distribution (sum of probabilities <= 0)");
    for (int64_t s = 0; s < k; ++s) {
      double target = ud[r * k + s] * total, acc = 0;
      int64_t pick = cats - 1;
      for (int64_t c = 0; c < cats; ++c) {
        acc += w[c];
        if (target < acc && w[c] > 0) { pick = c; break; }
      }
      while (w[pick] <= 0 && pick > 0) --pick;
      od[r * k + s] = pick;
      if (!replacement) { total -= w[pick]; w[pick] = 0; }
    }
  }
  return out;
}

Generator& default_generator() {
  static Generator* g = new Generator();
  return *g;
}

}  // namespace fl
