"""csrc/kernels/vec_math.h in Triton: the float32 exp, tanh, sigmoid, erf and erfc that flowlike's eager kernels and
its generated C++ use, step for step (same constants, same order of operations), so that a generated Triton kernel
computes what the C++ kernel computes. Divisions are IEEE's (div_rn): a GPU's `/` is approximate; the fused
multiply-adds are explicit (tl.fma rounds once, as std::fma: vec_math.h's Note [explicit FMA]). Kernels written
by codegen/triton.py import these."""
import triton
import triton.language as tl


@triton.jit
def _copysign(v, x):
    bits = (v.to(tl.int32, bitcast=True) & 0x7FFFFFFF) | (x.to(tl.int32, bitcast=True) & -2147483648)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def exp_f32(x):
    xc = tl.minimum(tl.maximum(x, -87.0), 88.0)
    k = xc * 1.44269504088896341 + 12582912.0
    ki = k.to(tl.int32, bitcast=True)
    n = k - 12582912.0
    r = tl.fma(n, -0.693359375, xc)
    r = tl.fma(n, 2.12194440e-4, r)
    p = 1.9875691500e-4
    p = tl.fma(p, r, 1.3981999507e-3)
    p = tl.fma(p, r, 8.3334519073e-3)
    p = tl.fma(p, r, 4.1665795894e-2)
    p = tl.fma(p, r, 1.6666665459e-1)
    p = tl.fma(p, r, 5.0000001201e-1)
    p = tl.fma(p, r * r, r) + 1.0
    scale = ((ki - 0x4B400000 + 127) << 23).to(tl.float32, bitcast=True)
    return tl.where(x < -87.0, 0.0, p * scale)


@triton.jit
def dense_exp(x):
    # libm stands in where exp_f32 saturates (pointwise_list.h's FL_DENSE_UNARY)
    return tl.where((x > 88.0) | (x < -87.0), tl.exp(x), exp_f32(x))


@triton.jit
def dense_tanh(x):
    z = x * x
    ax = tl.abs(x)
    p = -5.70498872745e-3
    p = p * z + 2.06390887954e-2
    p = p * z - 5.37397155531e-2
    p = p * z + 1.33314422036e-1
    p = p * z - 3.33332819422e-1
    small = ax + ax * z * p
    big = 1.0 - tl.math.div_rn(2.0, exp_f32(2.0 * ax) + 1.0)
    return _copysign(tl.where(ax < 0.625, small, big), x)


@triton.jit
def sigmoid_f32(x):
    e = exp_f32(-tl.abs(x))
    r = tl.math.div_rn(1.0, 1.0 + e)
    return tl.where(x >= 0.0, r, e * r)


@triton.jit
def dense_sigmoid(x):
    return tl.where(x < -87.0, tl.math.div_rn(1.0, 1.0 + tl.exp(-x)), sigmoid_f32(x))


@triton.jit
def erfc_f32(x):
    z = tl.abs(x)
    t = tl.math.div_rn(1.0, 1.0 + 0.5 * z)
    p = 0.17087277
    p = tl.fma(p, t, -0.82215223)
    p = tl.fma(p, t, 1.48851587)
    p = tl.fma(p, t, -1.13520398)
    p = tl.fma(p, t, 0.27886807)
    p = tl.fma(p, t, -0.18628806)
    p = tl.fma(p, t, 0.09678418)
    p = tl.fma(p, t, 0.37409196)
    p = tl.fma(p, t, 1.00002368)
    p = tl.fma(p, t, -1.26551223)
    r = t * exp_f32(tl.fma(-z, z, p))
    return tl.where(x >= 0.0, r, 2.0 - r)


@triton.jit
def dense_erf(x):
    z = x * x
    p = 7.853861353153693e-5
    p = p * z - 8.010193625184903e-4
    p = p * z + 5.188327685732524e-3
    p = p * z - 2.685381193529856e-2
    p = p * z + 1.128358514861418e-1
    p = p * z - 3.761262582423300e-1
    p = p * z + 1.128379165726710
    return tl.where(tl.abs(x) < 1.0, x * p, 1.0 - erfc_f32(x))
