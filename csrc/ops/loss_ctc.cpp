// CPU kernels of the CTC loss (Graves et al., "Connectionist Temporal Classification", 2006), as
// PyTorch's: the forward runs the alpha recursion in log space over the extended target l' (blanks
// between and around the labels) and keeps log_alpha for backward; the backward runs the beta
// recursion, gathers log(sum alpha * beta) per (t, class) and forms PyTorch's gradient
// exp(log_probs) - exp(log_alpha_beta + nll - log_probs) (eq. 16), zero past each input length.
#include <cmath>
#include <limits>

#include "../kernels/loops.h"
#include "loss.h"

namespace fl {
namespace {

// Batch offsets and strides of the targets, checked as PyTorch's ctc_loss_cpu does.
struct CtcTargets {
  Tensor data;  // int64, contiguous
  std::vector<int64_t> offsets;
  int64_t stride = 1;
  int64_t max_target_length = 0;
};

const char* kWhile = " (while checking arguments for ctc_loss_allocate_outputs)";

CtcTargets ctc_targets(const Tensor& log_probs, const Tensor& targets, const IntList& input_lengths,
                       const IntList& target_lengths, int64_t blank) {
  FL_CHECK(is_floating(log_probs->dtype), NotImplementedError, "\"ctc_loss_cpu\" not implemented for '",
           c10_type_name(log_probs->dtype), "'");
  FL_CHECK(log_probs->dim() == 3, Error, "Expected 3-dimensional tensor, but got ", log_probs->dim(),
           "-dimensional tensor for argument #1 'log_probs'", kWhile);
  const int64_t T = log_probs->sizes[0], N = log_probs->sizes[1], C = log_probs->sizes[2];
  FL_CHECK(blank >= 0 && blank < C, Error, "blank must be in label range");
  FL_CHECK(static_cast<int64_t>(input_lengths.size()) == N, Error, "input_lengths must be of size batch_size");
  FL_CHECK(static_cast<int64_t>(target_lengths.size()) == N, Error, "target_lengths must be of size batch_size");
  FL_CHECK(targets->dim() >= 1 && targets->dim() <= 2, Error, "Expected 1 to 2 dimensions, but got ", targets->dim(),
           "-dimensional tensor for argument #2 'targets'", kWhile);
  CtcTargets r;
  r.data = contiguous(to_dtype(targets, ScalarType::Int64));  // PyTorch also takes (and truncates) float targets
  r.offsets.resize(N);
  int64_t pos = 0;
  for (int64_t b = 0; b < N; ++b) {
    FL_CHECK(target_lengths[b] >= 0, Error, "Expected target_lengths to have value at least 0, but got value ",
             target_lengths[b], kWhile);
    r.max_target_length = std::max(r.max_target_length, target_lengths[b]);
    if (targets->dim() == 1) {
      r.offsets[b] = pos;
      pos += target_lengths[b];
    } else {
      r.offsets[b] = b * (targets->sizes[1]);
    }
  }
  if (targets->dim() == 1) {
    FL_CHECK(targets->sizes[0] == pos, Error, "Expected tensor to have size ", pos, " at dimension 0, but got size ",
             targets->sizes[0], " for argument #2 'targets'", kWhile);
  } else {
    FL_CHECK(targets->sizes[0] == N, Error, "Expected tensor to have size ", N, " at dimension 0, but got size ",
             targets->sizes[0], " for argument #2 'targets'", kWhile);
    FL_CHECK(targets->sizes[1] >= r.max_target_length, Error, "Expected tensor to have size at least ",
             r.max_target_length, " at dimension 1, but got size ", targets->sizes[1], " for argument #2 'targets'", kWhile);
  }
  for (int64_t b = 0; b < N; ++b) {
    FL_CHECK(input_lengths[b] >= 0, Error, "Expected input_lengths to have value at least 0, but got value ",
             input_lengths[b], kWhile);
    FL_CHECK(input_lengths[b] <= T, Error, "Expected input_lengths to have value at most ", T, ", but got value ",
             input_lengths[b], kWhile);
  }
  // PyTorch reads out of bounds here; we refuse instead.
  const int64_t* t = r.data->data<int64_t>();
  for (int64_t b = 0; b < N; ++b)
    for (int64_t i = 0; i < target_lengths[b]; ++i) {
      const int64_t v = t[r.offsets[b] + i];
      FL_CHECK(v >= 0 && v < C, IndexError, "ctc_loss: target ", v, " is out of bounds for ", C, " classes.");
    }
  return r;
}

template <typename T>
inline T log3(T a, T b, T c) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  T m = std::max(a, std::max(b, c));
  if (m == neginf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

template <typename T>
std::tuple<Tensor, Tensor> ctc_forward(const Tensor& lp_in, const CtcTargets& tg, const IntList& il, const IntList& tl,
                                       int64_t blank) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const Tensor lp = contiguous(lp_in);
  const int64_t Tm = lp->sizes[0], N = lp->sizes[1], C = lp->sizes[2], L = 2 * tg.max_target_length + 1;
  Tensor log_alpha = empty({N, Tm, L}, lp->dtype);
  fill(log_alpha, Scalar(-std::numeric_limits<double>::infinity()));
  Tensor nll = empty({N}, lp->dtype);
  const T* P = lp->data<T>();
  T* A = log_alpha->data<T>();
  T* out = nll->data<T>();
  const int64_t* tgt = tg.data->data<int64_t>();
#pragma omp parallel for schedule(dynamic, 1) if (N > 1 && Tm * L * N > 4096)
  for (int64_t b = 0; b < N; ++b) {
    const int64_t in_len = il[b], tlen = tl[b];
    auto prime = [&](int64_t s) { return s % 2 == 0 ? blank : tgt[tg.offsets[b] + s / 2]; };
    auto lpa = [&](int64_t t, int64_t c) { return P[(t * N + b) * C + c]; };
    T* a = A + b * Tm * L;
    if (in_len == 0) {
      out[b] = tlen == 0 ? T(0) : -neginf;
      continue;
    }
    a[0] = lpa(0, blank);
    if (tlen > 0) a[1] = lpa(0, prime(1));
    for (int64_t t = 1; t < in_len; ++t) {
      for (int64_t s = 0; s < 2 * tlen + 1; ++s) {
        const int64_t cur = prime(s);
        const T la1 = a[(t - 1) * L + s];
        const T la2 = s > 0 ? a[(t - 1) * L + s - 1] : neginf;
        const T la3 = (s > 1 && prime(s - 2) != cur) ? a[(t - 1) * L + s - 2] : neginf;
        a[t * L + s] = log3(la1, la2, la3) + lpa(t, cur);
      }
    }
    if (tlen == 0) {
      out[b] = -a[(in_len - 1) * L];
    } else {
      const T l1 = a[(in_len - 1) * L + 2 * tlen], l2 = a[(in_len - 1) * L + 2 * tlen - 1];
      out[b] = -log3(l1, l2, neginf);
    }
  }
  return {nll, log_alpha};
}

template <typename T>
Tensor ctc_backward(const Tensor& grad_out, const Tensor& lp_in, const CtcTargets& tg, const IntList& il,
                    const IntList& tl, const Tensor& nll_t, const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const Tensor lp = contiguous(lp_in), go = contiguous(grad_out), la = contiguous(log_alpha);
  const int64_t Tm = lp->sizes[0], N = lp->sizes[1], C = lp->sizes[2], L = la->sizes[2];
  Tensor grad = empty(lp->sizes, lp->dtype);
  fill(grad, Scalar(-std::numeric_limits<double>::infinity()));
  Tensor log_beta = empty(la->sizes, lp->dtype);
  fill(log_beta, Scalar(-std::numeric_limits<double>::infinity()));
  const T* P = lp->data<T>();
  const T* A = la->data<T>();
  T* B = log_beta->data<T>();
  T* G = grad->data<T>();
  const T* gout = go->data<T>();
  const T* nllp = contiguous(nll_t)->data<T>();
  const int64_t* tgt = tg.data->data<int64_t>();
#pragma omp parallel for schedule(dynamic, 1) if (N > 1 && Tm * L * N > 4096)
  for (int64_t b = 0; b < N; ++b) {
    const T nll = nllp[b];
    auto g = [&](int64_t t, int64_t c) -> T& { return G[(t * N + b) * C + c]; };
    if (zero_infinity && nll == std::numeric_limits<T>::infinity()) {
      for (int64_t t = 0; t < Tm; ++t)
        for (int64_t c = 0; c < C; ++c) g(t, c) = 0;
      continue;
    }
    const int64_t in_len = il[b], tlen = tl[b];
    auto prime = [&](int64_t s) { return s % 2 == 0 ? blank : tgt[tg.offsets[b] + s / 2]; };
    auto lpa = [&](int64_t t, int64_t c) { return P[(t * N + b) * C + c]; };
    const T* a = A + b * Tm * L;
    T* bt = B + b * Tm * L;
    if (in_len > 0) {
      const int64_t t = in_len - 1;
      bt[t * L + 2 * tlen] = lpa(t, blank);
      g(t, blank) = a[t * L + 2 * tlen] + bt[t * L + 2 * tlen];
      if (tlen > 0) {
        const int64_t cur = prime(2 * tlen - 1);
        bt[t * L + 2 * tlen - 1] = lpa(t, cur);
        g(t, cur) = a[t * L + 2 * tlen - 1] + bt[t * L + 2 * tlen - 1];
      }
    }
    for (int64_t t = in_len - 2; t >= 0; --t) {
      for (int64_t s = 2 * tlen; s >= 0; --s) {
        const int64_t cur = prime(s);
        const T lb1 = bt[(t + 1) * L + s];
        const T lb2 = s < 2 * tlen ? bt[(t + 1) * L + s + 1] : neginf;
        const T lb3 = (s < 2 * tlen - 1 && prime(s + 2) != cur) ? bt[(t + 1) * L + s + 2] : neginf;
        bt[t * L + s] = log3(lb1, lb2, lb3) + lpa(t, cur);
        const T lab = a[t * L + s] + bt[t * L + s];
        T& lcab = g(t, cur);
        if (lcab == neginf) {
          lcab = lab;
        } else {
          const T m = std::max(lcab, lab);
          lcab = std::log(std::exp(lcab - m) + std::exp(lab - m)) + m;
        }
      }
    }
    const T gr = gout[b];
    for (int64_t t = 0; t < in_len; ++t)
      for (int64_t c = 0; c < C; ++c) {
        T& res = g(t, c);
        const T l = lpa(t, c);
        res = (std::exp(l) - std::exp(res + nll - l)) * gr;
      }
    for (int64_t t = in_len; t < Tm; ++t)
      for (int64_t c = 0; c < C; ++c) g(t, c) = 0;
  }
  return grad;
}

// float16/bfloat16 run in float32; the results are cast back.
ScalarType compute_type(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t;
}

}  // namespace

std::tuple<Tensor, Tensor> ctc_loss_cpu(const Tensor& log_probs, const Tensor& targets, const IntList& il,
                                        const IntList& tl, int64_t blank, bool) {
  CtcTargets tg = ctc_targets(log_probs, targets, il, tl, blank);
  const ScalarType ct = compute_type(log_probs->dtype);
  Tensor lp = to_dtype(log_probs, ct), nll, alpha;
  FL_DISPATCH_FLOAT_DOUBLE(ct, "ctc_loss_cpu", std::tie(nll, alpha) = ctc_forward<scalar_t>(lp, tg, il, tl, blank));
  return {to_dtype(nll, log_probs->dtype), alpha};
}

Tensor ctc_loss_backward_cpu(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                             const IntList& il, const IntList& tl, const Tensor& nll, const Tensor& alpha, int64_t blank,
                             bool zero_infinity) {
  CtcTargets tg = ctc_targets(log_probs, targets, il, tl, blank);
  const ScalarType ct = compute_type(log_probs->dtype);
  Tensor out;
  FL_DISPATCH_FLOAT_DOUBLE(ct, "ctc_loss_backward_cpu",
                       out = ctc_backward<scalar_t>(to_dtype(grad, ct), to_dtype(log_probs, ct), tg, il, tl,
                                                    to_dtype(nll, ct), alpha, blank, zero_infinity));
  return to_dtype(out, log_probs->dtype);
}

}  // namespace fl
