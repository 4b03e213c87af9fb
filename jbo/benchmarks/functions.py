"""Vectorised test functions for minimisation, written in ``jax.numpy``.

Every function here maps an array ``x`` of shape ``(..., dim)`` in *user units* to values of
shape ``(...)``: it is pure, jit-able and vectorised over all leading axes (no Python loop over
points), and it computes in the dtype of ``x`` (float32 in, float32 out; constant tables are cast
to ``x.dtype``), so the float32 path used on TPUs works as well as float64.

The definitions follow the Virtual Library of Simulation Experiments (Surjanovic & Bingham,
sfu.ca/~ssurjano) and Jamil & Yang, "A literature survey of benchmark functions for global
optimization problems" (2013); where they differ the choice is stated in the function's docstring.
The problems built from these functions (domain, optimum, minimisers) live in
:mod:`jbo.benchmarks.registry`.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

__all__ = [
    "branin",
    "hartmann3",
    "hartmann6",
    "rosenbrock",
    "levy",
    "griewank",
    "alpine01",
    "repeated",
    # classics of the Virtual Library of Simulation Experiments (Surjanovic & Bingham)
    "ackley",
    "rastrigin",
    "schwefel",
    "zakharov",
    "dixon_price",
    "powell",
    "shekel",
    "shekel5",
    "shekel7",
    "shekel10",
    "sum_of_different_powers",
    "styblinski_tang",
    "michalewicz",
    "michalewicz_minimiser",
    "six_hump_camel",
    "rotated_hyper_ellipsoid",
    "trid",
    "sphere",
    "sum_squares",
    "goldstein_price",
    "beale",
    "booth",
    "matyas",
    "three_hump_camel",
    "easom",
    "eggholder",
    "holder_table",
    "cross_in_tray",
    "drop_wave",
    "levy13",
    "bukin6",
    "mccormick",
    "colville",
    "forrester",
    "gramacy_lee",
    "shubert",
    "bent_cigar",
    "discus",
    "elliptic",
    "weierstrass",
    "schaffer_f7",
    "salomon",
    "qing",
    "happy_cat",
    "BRANIN_ARGMINS",
    "BRANIN_OPTIMUM",
    "HARTMANN3_ARGMIN",
    "HARTMANN3_OPTIMUM",
    "HARTMANN6_ARGMIN",
    "HARTMANN6_OPTIMUM",
    "ALPINE01_ROOTS",
    "SCHWEFEL_ARGMIN",
    "SCHWEFEL_CONSTANT",
    "SHEKEL_ARGMINS",
    "SHEKEL_OPTIMA",
    "STYBLINSKI_TANG_ARGMIN",
    "STYBLINSKI_TANG_OPTIMUM",
    "SIX_HUMP_CAMEL_ARGMINS",
    "SIX_HUMP_CAMEL_OPTIMUM",
    "EGGHOLDER_ARGMIN",
    "EGGHOLDER_OPTIMUM",
    "HOLDER_TABLE_ARGMINS",
    "HOLDER_TABLE_OPTIMUM",
    "CROSS_IN_TRAY_ARGMINS",
    "CROSS_IN_TRAY_OPTIMUM",
    "MCCORMICK_ARGMIN",
    "MCCORMICK_OPTIMUM",
    "FORRESTER_ARGMIN",
    "FORRESTER_OPTIMUM",
    "GRAMACY_LEE_ARGMIN",
    "GRAMACY_LEE_OPTIMUM",
    "SHUBERT_ARGMINS",
    "SHUBERT_OPTIMUM",
]


def _float(x):
    """``x`` as a floating jnp array (integer input is promoted to the default float dtype)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.result_type(float))
    return x


# --------------------------------------------------------------------------------------------
# Branin (Branin-Hoo), 2-d
# --------------------------------------------------------------------------------------------
_BRANIN_B = 5.1 / (4.0 * math.pi**2)
_BRANIN_C = 5.0 / math.pi
_BRANIN_T = 1.0 / (8.0 * math.pi)

#: Global minimum of Branin, 10 t = 5 / (4 pi).
BRANIN_OPTIMUM = 5.0 / (4.0 * math.pi)  # 0.397887357729738...
#: Its three global minimisers, exact: x1 in {-pi, pi, 3 pi}, x2 in {12.275, 2.275, 2.475}.
BRANIN_ARGMINS = np.array(
    [[-math.pi, 12.275], [math.pi, 2.275], [3.0 * math.pi, 2.475]], dtype=np.float64
)


def branin(x):
    """Branin-Hoo: ``(x2 - b x1^2 + c x1 - r)^2 + s (1 - t) cos(x1) + s``.

    a = 1, b = 5.1 / (4 pi^2), c = 5 / pi, r = 6, s = 10, t = 1 / (8 pi); usual domain
    x1 in [-5, 10], x2 in [0, 15]; minimum 5 / (4 pi) = 0.397887... at three points.
    """
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return (
        (x2 - _BRANIN_B * x1**2 + _BRANIN_C * x1 - 6.0) ** 2
        + 10.0 * (1.0 - _BRANIN_T) * jnp.cos(x1)
        + 10.0
    )


# --------------------------------------------------------------------------------------------
# Hartmann 3-d and 6-d
# --------------------------------------------------------------------------------------------
_HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])

_HARTMANN3_A = np.array(
    [[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]]
)
# P[3, 0] = 0.03815 as in Jamil & Yang (2013) and scipy's global-optimisation benchmarks; the SFU
# library prints 0.0381 (1e-4 * 381), whose minimum is -3.8627797873 rather than the widely quoted
# -3.86278214782076. The latter value and the minimiser (0.114614, 0.555649, 0.852547) belong to
# 0.03815, so that is the table used here.
_HARTMANN3_P = np.array(
    [
        [0.3689, 0.1170, 0.2673],
        [0.4699, 0.4387, 0.7470],
        [0.1091, 0.8732, 0.5547],
        [0.03815, 0.5743, 0.8828],
    ]
)
HARTMANN3_OPTIMUM = -3.86278214782076
#: Stationary point found by a root solve of the gradient from (0.114614, 0.555649, 0.852547).
HARTMANN3_ARGMIN = np.array([[0.114614338589672, 0.5556488499718569, 0.8525469535208658]])

_HARTMANN6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_HARTMANN6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)
HARTMANN6_OPTIMUM = -3.32236801141551
HARTMANN6_ARGMIN = np.array(
    [
        [
            0.2016895110067054,
            0.150010691823458,
            0.476873974221897,
            0.2753324304940561,
            0.3116516166001133,
            0.6573005340656204,
        ]
    ]
)


def _hartmann(x, a, p):
    x = _float(x)
    a = jnp.asarray(a, x.dtype)
    p = jnp.asarray(p, x.dtype)
    alpha = jnp.asarray(_HARTMANN_ALPHA, x.dtype)
    inner = jnp.sum(a * (x[..., None, :] - p) ** 2, axis=-1)  # (..., 4)
    return -jnp.sum(alpha * jnp.exp(-inner), axis=-1)


def hartmann3(x):
    """Hartmann 3-d on [0, 1]^3: ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)``."""
    return _hartmann(x, _HARTMANN3_A, _HARTMANN3_P)


def hartmann6(x):
    """Hartmann 6-d on [0, 1]^6: ``-sum_i alpha_i exp(-sum_j A_ij (x_j - P_ij)^2)``."""
    return _hartmann(x, _HARTMANN6_A, _HARTMANN6_P)


# --------------------------------------------------------------------------------------------
# Scalable functions
# --------------------------------------------------------------------------------------------
def rosenbrock(x):
    """Rosenbrock: ``sum_{i<d} 100 (x_{i+1} - x_i^2)^2 + (x_i - 1)^2``; 0 at ones (dim >= 2)."""
    x = _float(x)
    return jnp.sum(100.0 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (x[..., :-1] - 1.0) ** 2, axis=-1)


def levy(x):
    """Levy: with ``w = 1 + (x - 1) / 4``,
    ``sin^2(pi w_1) + sum_{i<d} (w_i - 1)^2 (1 + 10 sin^2(pi w_i + 1))
    + (w_d - 1)^2 (1 + sin^2(2 pi w_d))``; 0 at ones."""
    x = _float(x)
    w = 1.0 + (x - 1.0) / 4.0
    head = jnp.sin(math.pi * w[..., 0]) ** 2
    wi = w[..., :-1]
    middle = jnp.sum((wi - 1.0) ** 2 * (1.0 + 10.0 * jnp.sin(math.pi * wi + 1.0) ** 2), axis=-1)
    wd = w[..., -1]
    tail = (wd - 1.0) ** 2 * (1.0 + jnp.sin(2.0 * math.pi * wd) ** 2)
    return head + middle + tail


def griewank(x):
    """Griewank: ``1 + sum x_i^2 / 4000 - prod cos(x_i / sqrt(i))``; 0 at the origin."""
    x = _float(x)
    i = jnp.arange(1, x.shape[-1] + 1, dtype=x.dtype)
    return 1.0 + jnp.sum(x**2, axis=-1) / 4000.0 - jnp.prod(jnp.cos(x / jnp.sqrt(i)), axis=-1)


#: Zeros of ``x sin(x) + 0.1 x`` in [-10, 10]: 0 and the seven roots of sin(x) = -0.1. Alpine N.1
#: is 0 exactly where every coordinate is one of these, so it has 8^d global minimisers there.
_ASIN = math.asin(0.1)
ALPINE01_ROOTS = np.array(
    sorted(
        [0.0]
        + [-_ASIN + 2.0 * math.pi * k for k in (-1, 0, 1)]
        + [math.pi + _ASIN + 2.0 * math.pi * k for k in (-2, -1, 0, 1)]
    )
)


def alpine01(x):
    """Alpine N.1 (Jamil & Yang 2013, #6): ``sum_i |x_i sin(x_i) + 0.1 x_i|``; 0 at the origin
    (and wherever every coordinate solves sin(x) = -0.1, see ``ALPINE01_ROOTS``)."""
    x = _float(x)
    return jnp.sum(jnp.abs(x * jnp.sin(x) + 0.1 * x), axis=-1)


def repeated(fn, block: int):
    """The mean of ``fn`` over consecutive blocks of ``block`` coordinates.

    ``repeated(branin, 2)`` and ``repeated(hartmann6, 6)`` are the "repeated Branin" and
    "repeated Hartmann6" of Oh et al. (2018, BOCK; after Eggensperger et al. 2013): the mean, not
    the sum, over blocks, so that the optimum equals the block function's (0.3979 and -3.3223 in
    BOCK's Table 1 at every dimension; their reference implementation divides by the number of
    blocks).
    """

    def f(x):
        x = _float(x)
        d = x.shape[-1]
        if d % block:
            raise ValueError(f"dimension {d} is not a multiple of the block size {block}")
        xb = x.reshape(x.shape[:-1] + (d // block, block))
        return jnp.mean(fn(xb), axis=-1)

    f.__name__ = f"repeated_{getattr(fn, '__name__', 'fn')}"
    f.__doc__ = f"Mean of ``{getattr(fn, '__name__', 'fn')}`` over consecutive {block}-d blocks."
    return f


# ============================================================================================
# The classics of the Virtual Library of Simulation Experiments
# ============================================================================================
# Surjanovic, S. & Bingham, D., "Virtual Library of Simulation Experiments: Test Functions and
# Datasets", https://www.sfu.ca/~ssurjano (cited below as "VLSE"). Each docstring gives the
# formula (x_i is the i-th coordinate, i = 1..d), the usual domain and the global minimum; the
# minimisers the library rounds to a few digits are given here to double precision, found by a
# root solve of the gradient in 40-digit arithmetic (mpmath) from the library's values, and the
# library's own value is quoted next to ours.


def _index(x):
    """``(1, 2, ..., d)`` in the dtype of ``x`` (``d = x.shape[-1]``)."""
    return jnp.arange(1, x.shape[-1] + 1, dtype=x.dtype)


# --------------------------------------------------------------------------------------------
# Many local minima: Ackley, Rastrigin, Schwefel, Eggholder, Holder table, Cross-in-tray,
# Drop-wave, Levy N.13, Bukin N.6, Shubert, Gramacy & Lee
# --------------------------------------------------------------------------------------------
def ackley(x, a: float = 20.0, b: float = 0.2, c: float = 2.0 * math.pi):
    """Ackley (VLSE): ``-a exp(-b sqrt(mean_i x_i^2)) - exp(mean_i cos(c x_i)) + a + e``.

    a = 20, b = 0.2, c = 2 pi; usual domain [-32.768, 32.768]^d; minimum 0 at the origin, and
    nowhere else in R^d. The square root is written so that its gradient at the origin (where the
    function has a kink) is 0 rather than NaN.
    """
    x = _float(x)
    ms = jnp.mean(x**2, axis=-1)
    positive = ms > 0
    rms = jnp.where(positive, jnp.sqrt(jnp.where(positive, ms, 1.0)), 0.0)
    return (
        -a * jnp.exp(-b * rms) - jnp.exp(jnp.mean(jnp.cos(c * x), axis=-1)) + (a + math.e)
    )


def rastrigin(x):
    """Rastrigin (VLSE): ``10 d + sum_i (x_i^2 - 10 cos(2 pi x_i))``; usual domain
    [-5.12, 5.12]^d; minimum 0 at the origin (every term is >= 0 on all of R^d)."""
    x = _float(x)
    return jnp.sum(x**2 - 10.0 * jnp.cos(2.0 * math.pi * x) + 10.0, axis=-1)


#: ``max_t t sin(sqrt|t|)`` on [-500, 500] (VLSE prints 418.9829), and where it is attained.
SCHWEFEL_CONSTANT = 418.9828872724337
SCHWEFEL_ARGMIN = 420.96874635998205


def schwefel(x):
    """Schwefel (VLSE): ``418.9829 d - sum_i x_i sin(sqrt|x_i|)``; usual domain [-500, 500]^d;
    minimum 0 at x_i = 420.9687.

    The constant here is the exact ``max_t t sin(sqrt|t|) = 418.98288727243...`` (at t =
    420.968746...), so that the minimum is 0 to rounding; VLSE's rounded 418.9829 puts it at
    1.27e-5 d instead. The function decreases without bound outside [-500, 500]^d.
    """
    x = _float(x)
    return jnp.sum(SCHWEFEL_CONSTANT - x * jnp.sin(jnp.sqrt(jnp.abs(x))), axis=-1)


EGGHOLDER_OPTIMUM = -959.6406627208509
#: On the boundary x1 = 512 (the gradient there points out of the box; VLSE: (512, 404.2319)).
EGGHOLDER_ARGMIN = np.array([[512.0, 404.2318051137578]])


def eggholder(x):
    """Eggholder (VLSE), 2-d: ``-(x2 + 47) sin(sqrt|x2 + x1/2 + 47|) - x1 sin(sqrt|x1 - (x2 + 47)|)``.

    Usual domain [-512, 512]^2; minimum -959.6406627 (VLSE: -959.6407) at (512, 404.2318051), on
    the boundary.
    """
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return -(x2 + 47.0) * jnp.sin(jnp.sqrt(jnp.abs(x2 + 0.5 * x1 + 47.0))) - x1 * jnp.sin(
        jnp.sqrt(jnp.abs(x1 - (x2 + 47.0)))
    )


HOLDER_TABLE_OPTIMUM = -19.208502567886732
#: The four minimisers (+-8.0550234757, +-9.6645900192) (VLSE: (+-8.05502, +-9.66459)).
HOLDER_TABLE_ARGMINS = np.array(
    [[s1 * 8.055023475736563, s2 * 9.664590019241272] for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]
)


def holder_table(x):
    """Hölder table (VLSE), 2-d: ``-|sin(x1) cos(x2) exp(|1 - sqrt(x1^2 + x2^2) / pi|)|``.

    Usual domain [-10, 10]^2; minimum -19.2085025679 (VLSE: -19.2085) at the four points
    (+-8.0550235, +-9.6645900).
    """
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    r = jnp.sqrt(x1**2 + x2**2)
    return -jnp.abs(jnp.sin(x1) * jnp.cos(x2) * jnp.exp(jnp.abs(1.0 - r / math.pi)))


CROSS_IN_TRAY_OPTIMUM = -2.062611870822737
#: The four minimisers (+-1.3494066172, +-1.3494066172) (VLSE: (+-1.3491, +-1.3491)).
CROSS_IN_TRAY_ARGMINS = np.array(
    [[s1 * 1.3494066171539107, s2 * 1.3494066171539107] for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)]
)


def cross_in_tray(x):
    """Cross-in-tray (VLSE), 2-d:
    ``-0.0001 (|sin(x1) sin(x2) exp(|100 - sqrt(x1^2 + x2^2) / pi|)| + 1)^0.1``.

    Usual domain [-10, 10]^2; minimum -2.0626118708 (VLSE: -2.06261) at the four points
    (+-1.3494066, +-1.3494066). Computed in log space (the exponential reaches e^100, beyond
    float32's range).
    """
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    r = jnp.sqrt(x1**2 + x2**2)
    # (|s| e^a + 1)^0.1 = exp(0.1 log(e^(log|s| + a) + 1)): e^a reaches e^100, beyond float32.
    log_inner = jnp.log(jnp.abs(jnp.sin(x1) * jnp.sin(x2))) + jnp.abs(100.0 - r / math.pi)
    return -0.0001 * jnp.exp(0.1 * jnp.logaddexp(log_inner, 0.0))


def drop_wave(x):
    """Drop-wave (VLSE), 2-d: ``-(1 + cos(12 sqrt(x1^2 + x2^2))) / (0.5 (x1^2 + x2^2) + 2)``;
    usual domain [-5.12, 5.12]^2; minimum -1 at the origin."""
    x = _float(x)
    r2 = x[..., 0] ** 2 + x[..., 1] ** 2
    return -(1.0 + jnp.cos(12.0 * jnp.sqrt(r2))) / (0.5 * r2 + 2.0)


def levy13(x):
    """Levy N. 13 (VLSE), 2-d:
    ``sin^2(3 pi x1) + (x1 - 1)^2 (1 + sin^2(3 pi x2)) + (x2 - 1)^2 (1 + sin^2(2 pi x2))``;
    usual domain [-10, 10]^2; minimum 0 at (1, 1)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return (
        jnp.sin(3.0 * math.pi * x1) ** 2
        + (x1 - 1.0) ** 2 * (1.0 + jnp.sin(3.0 * math.pi * x2) ** 2)
        + (x2 - 1.0) ** 2 * (1.0 + jnp.sin(2.0 * math.pi * x2) ** 2)
    )


def bukin6(x):
    """Bukin N. 6 (VLSE), 2-d: ``100 sqrt|x2 - 0.01 x1^2| + 0.01 |x1 + 10|``; usual domain
    x1 in [-15, -5], x2 in [-3, 3]; minimum 0 at (-10, 1), at the end of a non-smooth ridge."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    # 100 sqrt|x2 - 0.01 x1^2| written as 10 sqrt|100 x2 - x1^2|: 0.01 is not a binary fraction,
    # and its rounding (or a fused multiply-add) leaves ~1e-17 (float32: ~1e-8) under the root at
    # the minimiser, 1e-7 (float32: 0.015) after it; 100 x2 - x1^2 is exactly 0 there.
    return 10.0 * jnp.sqrt(jnp.abs(100.0 * x2 - x1**2)) + 0.01 * jnp.abs(x1 + 10.0)


# Shubert = g(x1) g(x2) with g(t) = sum_{i=1}^5 i cos((i + 1) t + i), 2 pi-periodic, with one
# minimum (-12.8708854977) and one maximum (14.5080079272) per period; the global minima of the
# product pair the minimum of one factor with the maximum of the other: in [-10, 10] each occurs
# at three points, hence 2 * 3 * 3 = 18 global minimisers.
_SHUBERT_G_ARGMIN = -1.425128428319761 + 2.0 * math.pi * np.array([-1.0, 0.0, 1.0])
_SHUBERT_G_ARGMAX = -0.8003211004719731 + 2.0 * math.pi * np.array([-1.0, 0.0, 1.0])
SHUBERT_OPTIMUM = -186.73090883102384
#: The 18 minimisers in [-10, 10]^2, sorted.
SHUBERT_ARGMINS = np.array(
    sorted(
        [(a, b) for a in _SHUBERT_G_ARGMIN for b in _SHUBERT_G_ARGMAX]
        + [(b, a) for a in _SHUBERT_G_ARGMIN for b in _SHUBERT_G_ARGMAX]
    )
)


def shubert(x):
    """Shubert (VLSE), 2-d: ``prod_{k=1,2} sum_{i=1}^5 i cos((i + 1) x_k + i)``; usual domain
    [-10, 10]^2; minimum -186.7309088 (VLSE: -186.7309) at 18 points (``SHUBERT_ARGMINS``)."""
    x = _float(x)
    i = jnp.arange(1, 6, dtype=x.dtype)
    g = jnp.sum(i * jnp.cos((i + 1.0) * x[..., None] + i), axis=-1)  # (..., 2)
    return g[..., 0] * g[..., 1]


GRAMACY_LEE_OPTIMUM = -0.8690111349894998
#: VLSE gives no minimiser; it is 0.5485634445 (value -0.869011134989500).
GRAMACY_LEE_ARGMIN = 0.5485634445276052


def gramacy_lee(x):
    """Gramacy & Lee (2012) (VLSE), 1-d: ``sin(10 pi x) / (2 x) + (x - 1)^4``; usual domain
    [0.5, 2.5]; minimum -0.8690111350 at x = 0.5485634445 (of ``x[..., 0]``)."""
    x = _float(x)[..., 0]
    return jnp.sin(10.0 * math.pi * x) / (2.0 * x) + (x - 1.0) ** 4


# --------------------------------------------------------------------------------------------
# Bowl-shaped: sphere, sum of squares, rotated hyper-ellipsoid, sum of different powers, Trid
# --------------------------------------------------------------------------------------------
def sphere(x):
    """Sphere (VLSE): ``sum_i x_i^2``; usual domain [-5.12, 5.12]^d; minimum 0 at the origin."""
    x = _float(x)
    return jnp.sum(x**2, axis=-1)


def sum_squares(x):
    """Sum of squares (VLSE): ``sum_i i x_i^2``; usual domain [-10, 10]^d; minimum 0 at the
    origin."""
    x = _float(x)
    return jnp.sum(_index(x) * x**2, axis=-1)


def rotated_hyper_ellipsoid(x):
    """Rotated hyper-ellipsoid (VLSE): ``sum_{i=1}^d sum_{j=1}^i x_j^2`` (= ``sum_j (d - j + 1)
    x_j^2``); usual domain [-65.536, 65.536]^d; minimum 0 at the origin."""
    x = _float(x)
    return jnp.sum(jnp.cumsum(x**2, axis=-1), axis=-1)


def sum_of_different_powers(x):
    """Sum of different powers (VLSE): ``sum_i |x_i|^(i + 1)``; usual domain [-1, 1]^d;
    minimum 0 at the origin."""
    x = _float(x)
    return jnp.sum(jnp.abs(x) ** (_index(x) + 1.0), axis=-1)


def trid(x):
    """Trid (VLSE): ``sum_{i=1}^d (x_i - 1)^2 - sum_{i=2}^d x_i x_{i-1}``; usual domain
    [-d^2, d^2]^d; minimum ``-d (d + 4)(d - 1) / 6`` at ``x_i = i (d + 1 - i)`` (a convex
    quadratic: that is its minimum on all of R^d)."""
    x = _float(x)
    return jnp.sum((x - 1.0) ** 2, axis=-1) - jnp.sum(x[..., 1:] * x[..., :-1], axis=-1)


# --------------------------------------------------------------------------------------------
# Plate- and valley-shaped: Zakharov, Booth, Matyas, McCormick, Dixon-Price, three- and six-hump
# camel
# --------------------------------------------------------------------------------------------
def zakharov(x):
    """Zakharov (VLSE): with ``s = sum_i 0.5 i x_i``, ``sum_i x_i^2 + s^2 + s^4``; usual domain
    [-5, 10]^d; minimum 0 at the origin."""
    x = _float(x)
    s = jnp.sum(0.5 * _index(x) * x, axis=-1)
    return jnp.sum(x**2, axis=-1) + s**2 + s**4


def booth(x):
    """Booth (VLSE), 2-d: ``(x1 + 2 x2 - 7)^2 + (2 x1 + x2 - 5)^2``; usual domain [-10, 10]^2;
    minimum 0 at (1, 3)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return (x1 + 2.0 * x2 - 7.0) ** 2 + (2.0 * x1 + x2 - 5.0) ** 2


def matyas(x):
    """Matyas (VLSE), 2-d: ``0.26 (x1^2 + x2^2) - 0.48 x1 x2``; usual domain [-10, 10]^2;
    minimum 0 at the origin."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return 0.26 * (x1**2 + x2**2) - 0.48 * x1 * x2


#: McCormick's minimum in closed form: the gradient vanishes where cos(x1 + x2) = -1/2 and
#: x1 - x2 = 1, i.e. at x1 + x2 = -2 pi / 3, giving -sqrt(3)/2 - pi/3 (VLSE: -1.9133 at
#: (-0.54719, -1.54719)).
MCCORMICK_OPTIMUM = -math.sqrt(3.0) / 2.0 - math.pi / 3.0
MCCORMICK_ARGMIN = np.array([[0.5 - math.pi / 3.0, -0.5 - math.pi / 3.0]])


def mccormick(x):
    """McCormick (VLSE), 2-d: ``sin(x1 + x2) + (x1 - x2)^2 - 1.5 x1 + 2.5 x2 + 1``; usual domain
    x1 in [-1.5, 4], x2 in [-3, 4]; minimum ``-sqrt(3)/2 - pi/3 = -1.9132229550`` at
    ``(1/2 - pi/3, -1/2 - pi/3)``. It decreases without bound along x1 = x2 -> -inf."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return jnp.sin(x1 + x2) + (x1 - x2) ** 2 - 1.5 * x1 + 2.5 * x2 + 1.0


def dixon_price(x):
    """Dixon-Price (VLSE): ``(x_1 - 1)^2 + sum_{i=2}^d i (2 x_i^2 - x_{i-1})^2``; usual domain
    [-10, 10]^d; minimum 0 at ``x_i = 2^(-(2^i - 2) / 2^i)``, and (d >= 2) at the same point with
    the sign of x_d flipped: every other x_i must be >= 0 for the next term to vanish."""
    x = _float(x)
    i = _index(x)[1:]
    return (x[..., 0] - 1.0) ** 2 + jnp.sum(i * (2.0 * x[..., 1:] ** 2 - x[..., :-1]) ** 2, axis=-1)


def three_hump_camel(x):
    """Three-hump camel (VLSE), 2-d: ``2 x1^2 - 1.05 x1^4 + x1^6 / 6 + x1 x2 + x2^2``; usual
    domain [-5, 5]^2; minimum 0 at the origin."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return 2.0 * x1**2 - 1.05 * x1**4 + x1**6 / 6.0 + x1 * x2 + x2**2


SIX_HUMP_CAMEL_OPTIMUM = -1.0316284534898774
#: The two minimisers +-(0.0898420131, -0.7126564030) (VLSE: +-(0.0898, -0.7126)).
SIX_HUMP_CAMEL_ARGMINS = np.array(
    [[0.08984201310031806, -0.7126564030207396], [-0.08984201310031806, 0.7126564030207396]]
)


def six_hump_camel(x):
    """Six-hump camel (VLSE), 2-d: ``(4 - 2.1 x1^2 + x1^4 / 3) x1^2 + x1 x2 + (-4 + 4 x2^2) x2^2``;
    usual domain x1 in [-3, 3], x2 in [-2, 2]; minimum -1.0316284535 (VLSE: -1.0316) at
    +-(0.0898420131, -0.7126564030)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return (4.0 - 2.1 * x1**2 + x1**4 / 3.0) * x1**2 + x1 * x2 + (-4.0 + 4.0 * x2**2) * x2**2


# --------------------------------------------------------------------------------------------
# Steep ridges / drops: Easom, Michalewicz
# --------------------------------------------------------------------------------------------
def easom(x):
    """Easom (VLSE), 2-d: ``-cos(x1) cos(x2) exp(-(x1 - pi)^2 - (x2 - pi)^2)``; usual domain
    [-100, 100]^2; minimum -1 at (pi, pi)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return -jnp.cos(x1) * jnp.cos(x2) * jnp.exp(-((x1 - math.pi) ** 2) - (x2 - math.pi) ** 2)


def michalewicz(x, m: int = 10):
    """Michalewicz (VLSE): ``-sum_i sin(x_i) sin^(2m)(i x_i^2 / pi)``, m = 10; usual domain
    [0, pi]^d. VLSE quotes the minimum -1.8013 at (2.20, 1.57) for d = 2, -4.687658 for d = 5 and
    -9.66015 for d = 10; the function is a sum of one-dimensional terms, so its minimiser is
    that of each term, computed for any d by :func:`michalewicz_minimiser`. It takes lower values
    outside [0, pi]^d (e.g. near x_1 = 5 pi / 2).
    """
    x = _float(x)
    return -jnp.sum(jnp.sin(x) * jnp.sin(_index(x) * x**2 / math.pi) ** (2 * m), axis=-1)


def michalewicz_minimiser(dim: int, m: int = 10) -> tuple[np.ndarray, float]:
    """The global minimiser ``(dim,)`` and minimum of :func:`michalewicz` on [0, pi]^dim.

    Term i, ``-sin(t) sin^(2m)(i t^2 / pi)``, is <= 0 and vanishes where ``i t^2 / pi`` is a
    multiple of pi, so [0, pi] splits into i lobes ``[pi sqrt(k / i), pi sqrt((k + 1) / i)]``,
    each with one dip. Every lobe is scanned on a 33-point grid, the best grid point refined by
    golden-section search in its two neighbouring intervals (to about 1e-8 in t, 1e-16 in value),
    and the lowest lobe kept. O(dim^2) work: milliseconds for dim = 100.
    """
    coord = np.repeat(np.arange(1, dim + 1), np.arange(1, dim + 1)).astype(np.float64)
    lobe = np.concatenate([np.arange(i) for i in range(1, dim + 1)]).astype(np.float64)

    def term(t, i):
        return -np.sin(t) * np.sin(i * t**2 / np.pi) ** (2 * m)

    lo_lobe = np.pi * np.sqrt(lobe / coord)
    hi_lobe = np.pi * np.sqrt((lobe + 1.0) / coord)
    grid = lo_lobe[:, None] + (hi_lobe - lo_lobe)[:, None] * np.linspace(0.0, 1.0, 33)
    j = np.clip(np.argmin(term(grid, coord[:, None]), axis=1), 1, 31)
    rows = np.arange(len(coord))
    lo, hi = grid[rows, j - 1], grid[rows, j + 1]
    shrink = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):
        c = hi - shrink * (hi - lo)
        d = lo + shrink * (hi - lo)
        left = term(c, coord) < term(d, coord)
        hi = np.where(left, d, hi)
        lo = np.where(left, lo, c)
    t = 0.5 * (lo + hi)
    values = term(t, coord)
    starts = np.concatenate([[0], np.cumsum(np.arange(1, dim + 1))[:-1]])
    best = [s + int(np.argmin(values[s : s + i])) for s, i in zip(starts, range(1, dim + 1))]
    return t[best], math.fsum(values[best])


# --------------------------------------------------------------------------------------------
# Others: Goldstein-Price, Beale, Colville, Powell, Shekel, Styblinski-Tang, Forrester
# --------------------------------------------------------------------------------------------
def goldstein_price(x):
    """Goldstein-Price (VLSE), 2-d:
    ``[1 + (x1 + x2 + 1)^2 (19 - 14 x1 + 3 x1^2 - 14 x2 + 6 x1 x2 + 3 x2^2)]
    * [30 + (2 x1 - 3 x2)^2 (18 - 32 x1 + 12 x1^2 + 48 x2 - 36 x1 x2 + 27 x2^2)]``;
    usual domain [-2, 2]^2; minimum 3 at (0, -1)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    a = 1.0 + (x1 + x2 + 1.0) ** 2 * (
        19.0 - 14.0 * x1 + 3.0 * x1**2 - 14.0 * x2 + 6.0 * x1 * x2 + 3.0 * x2**2
    )
    b = 30.0 + (2.0 * x1 - 3.0 * x2) ** 2 * (
        18.0 - 32.0 * x1 + 12.0 * x1**2 + 48.0 * x2 - 36.0 * x1 * x2 + 27.0 * x2**2
    )
    return a * b


def beale(x):
    """Beale (VLSE), 2-d:
    ``(1.5 - x1 + x1 x2)^2 + (2.25 - x1 + x1 x2^2)^2 + (2.625 - x1 + x1 x2^3)^2``; usual domain
    [-4.5, 4.5]^2; minimum 0 at (3, 0.5)."""
    x = _float(x)
    x1, x2 = x[..., 0], x[..., 1]
    return (
        (1.5 - x1 + x1 * x2) ** 2
        + (2.25 - x1 + x1 * x2**2) ** 2
        + (2.625 - x1 + x1 * x2**3) ** 2
    )


def colville(x):
    """Colville (VLSE), 4-d: ``100 (x1^2 - x2)^2 + (x1 - 1)^2 + (x3 - 1)^2 + 90 (x3^2 - x4)^2
    + 10.1 ((x2 - 1)^2 + (x4 - 1)^2) + 19.8 (x2 - 1)(x4 - 1)``; usual domain [-10, 10]^4;
    minimum 0 at (1, 1, 1, 1)."""
    x = _float(x)
    x1, x2, x3, x4 = (x[..., i] for i in range(4))
    return (
        100.0 * (x1**2 - x2) ** 2
        + (x1 - 1.0) ** 2
        + (x3 - 1.0) ** 2
        + 90.0 * (x3**2 - x4) ** 2
        + 10.1 * ((x2 - 1.0) ** 2 + (x4 - 1.0) ** 2)
        + 19.8 * (x2 - 1.0) * (x4 - 1.0)
    )


def powell(x):
    """Powell (VLSE), d a multiple of 4: over the blocks (x_{4i-3}, x_{4i-2}, x_{4i-1}, x_{4i}),
    ``sum_i (x_{4i-3} + 10 x_{4i-2})^2 + 5 (x_{4i-1} - x_{4i})^2 + (x_{4i-2} - 2 x_{4i-1})^4
    + 10 (x_{4i-3} - x_{4i})^4``; usual domain [-4, 5]^d; minimum 0 at the origin."""
    x = _float(x)
    d = x.shape[-1]
    if d % 4:
        raise ValueError(f"powell: dimension {d} is not a multiple of 4")
    b = x.reshape(x.shape[:-1] + (d // 4, 4))
    a1, a2, a3, a4 = (b[..., i] for i in range(4))
    return jnp.sum(
        (a1 + 10.0 * a2) ** 2 + 5.0 * (a3 - a4) ** 2 + (a2 - 2.0 * a3) ** 4 + 10.0 * (a1 - a4) ** 4,
        axis=-1,
    )


_SHEKEL_BETA = 0.1 * np.array([1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 3.0, 7.0, 5.0, 5.0])
_SHEKEL_C = np.array(
    [
        [4.0, 1.0, 8.0, 6.0, 3.0, 2.0, 5.0, 8.0, 6.0, 7.0],
        [4.0, 1.0, 8.0, 6.0, 7.0, 9.0, 3.0, 1.0, 2.0, 3.6],
        [4.0, 1.0, 8.0, 6.0, 3.0, 2.0, 5.0, 8.0, 6.0, 7.0],
        [4.0, 1.0, 8.0, 6.0, 7.0, 9.0, 3.0, 1.0, 2.0, 3.6],
    ]
)
#: Minimum of Shekel with m = 5, 7, 10 terms (VLSE: -10.1532, -10.4029, -10.5364).
SHEKEL_OPTIMA = {5: -10.153199679058227, 7: -10.402915336777744, 10: -10.536443153483528}
#: Its minimiser, near (4, 4, 4, 4) (where VLSE places it; the value there is within 2e-4).
SHEKEL_ARGMINS = {
    5: np.array([[4.000037152819676, 4.00013327659156, 4.000037152819676, 4.00013327659156]]),
    7: np.array([[4.000572819251117, 3.9996062096096887, 4.000572819251117, 3.9996062096096887]]),
    10: np.array([[4.000746868270634, 3.9995094800857736, 4.000746868270634, 3.9995094800857736]]),
}


def shekel(x, m: int = 10):
    """Shekel (VLSE), 4-d: ``-sum_{i=1}^m (sum_{j=1}^4 (x_j - C_ji)^2 + beta_i)^-1`` with
    beta = (1, 2, 2, 4, 4, 6, 3, 7, 5, 5) / 10 and VLSE's 4 x 10 table C; m = 5, 7 or 10;
    usual domain [0, 10]^4; minimum in ``SHEKEL_OPTIMA`` near (4, 4, 4, 4)."""
    x = _float(x)
    c = jnp.asarray(_SHEKEL_C[:, :m].T, x.dtype)  # (m, 4)
    beta = jnp.asarray(_SHEKEL_BETA[:m], x.dtype)
    return -jnp.sum(1.0 / (jnp.sum((x[..., None, :] - c) ** 2, axis=-1) + beta), axis=-1)


def shekel5(x):
    """Shekel with m = 5 (VLSE): minimum -10.1531996791 (VLSE: -10.1532) near (4, 4, 4, 4)."""
    return shekel(x, 5)


def shekel7(x):
    """Shekel with m = 7 (VLSE): minimum -10.4029153368 (VLSE: -10.4029) near (4, 4, 4, 4)."""
    return shekel(x, 7)


def shekel10(x):
    """Shekel with m = 10 (VLSE): minimum -10.5364431535 (VLSE: -10.5364) near (4, 4, 4, 4)."""
    return shekel(x, 10)


#: Root of 4 t^3 - 32 t + 5 (VLSE: -2.903534) and the per-coordinate minimum.
STYBLINSKI_TANG_ARGMIN = -2.903534027771177
STYBLINSKI_TANG_OPTIMUM = -39.16616570377141


def styblinski_tang(x):
    """Styblinski-Tang (VLSE): ``sum_i (x_i^4 - 16 x_i^2 + 5 x_i) / 2``; usual domain [-5, 5]^d;
    minimum ``-39.16616570377 d`` at x_i = -2.903534028. (VLSE prints -39.16599 d, a typo: its
    own minimiser gives -39.166166 d.)"""
    x = _float(x)
    return 0.5 * jnp.sum(x**4 - 16.0 * x**2 + 5.0 * x, axis=-1)


FORRESTER_OPTIMUM = -6.0207400557670825
#: VLSE's "global minimum at x = 0.75725, -6.02074" to double precision.
FORRESTER_ARGMIN = 0.7572487578418559


def forrester(x):
    """Forrester et al. (2008) (VLSE), 1-d: ``(6 x - 2)^2 sin(12 x - 4)`` of ``x[..., 0]``; usual
    domain [0, 1]; minimum -6.0207400558 at x = 0.7572487578."""
    x = _float(x)[..., 0]
    return (6.0 * x - 2.0) ** 2 * jnp.sin(12.0 * x - 4.0)


# ============================================================================================
# Scalable classics of the BBOB and CEC suites, and of Jamil & Yang (2013)
# ============================================================================================
# Hansen, N., Finck, S., Ros, R. & Auger, A., "Real-parameter black-box optimization benchmarking
# 2009: noiseless functions definitions", INRIA RR-6829 (cited as "BBOB"); Liang, J. J., Qu, B. Y.,
# Suganthan, P. N. & Hernández-Díaz, A. G., "Problem definitions and evaluation criteria for the
# CEC 2013 special session on real-parameter optimization" (cited as "CEC 2013"). Here in their
# raw forms, without the suites' own shifts, rotations and oscillation transforms (jbo's
# :func:`jbo.benchmarks.shifted_rotated` draws those per seed); every one is >= its minimum on all
# of R^d. Ill-conditioned (bent cigar, discus, elliptic: values spanning six decades), rugged
# (Weierstrass, Schaffer F7, Salomon), with many minimisers (Qing) or a curved valley (HappyCat).
#: The condition number of the ill-conditioned quadratics (BBOB's 10^6).
CONDITIONING = 1e6


def bent_cigar(x):
    """Bent cigar (CEC 2013 F3 without its transforms; BBOB f12): ``x_1^2 + 10^6 sum_{i>=2} x_i^2``;
    usual domain [-100, 100]^d; minimum 0 at the origin."""
    x = _float(x)
    return x[..., 0] ** 2 + CONDITIONING * jnp.sum(x[..., 1:] ** 2, axis=-1)


def discus(x):
    """Discus (CEC 2013 F4; BBOB f11): ``10^6 x_1^2 + sum_{i>=2} x_i^2``; usual domain [-100, 100]^d;
    minimum 0 at the origin."""
    x = _float(x)
    return CONDITIONING * x[..., 0] ** 2 + jnp.sum(x[..., 1:] ** 2, axis=-1)


def elliptic(x):
    """High-conditioned elliptic (CEC 2013 F1; BBOB f10): ``sum_i 10^{6 (i - 1) / (d - 1)} x_i^2``
    (weight 1 when d = 1); usual domain [-100, 100]^d; minimum 0 at the origin."""
    x = _float(x)
    d = x.shape[-1]
    weights = CONDITIONING ** (jnp.arange(d, dtype=x.dtype) / max(d - 1, 1))
    return jnp.sum(weights * x**2, axis=-1)


def weierstrass(x, a: float = 0.5, b: float = 3.0, k_max: int = 20):
    """Weierstrass (CEC 2013 F12; BBOB f16): ``sum_i sum_{k=0}^{k_max} a^k cos(2 pi b^k (x_i + 1/2))
    - d sum_k a^k cos(pi b^k)``, a = 0.5, b = 3, k_max = 20; usual domain [-0.5, 0.5]^d; minimum 0
    at the origin (with b odd every term is at its least, ``-a^k``, at the integers: the only one in
    the domain is the origin)."""
    x = _float(x)
    k = jnp.arange(k_max + 1, dtype=x.dtype)
    ak, bk = a**k, b**k
    inner = jnp.sum(ak * jnp.cos(2.0 * math.pi * bk * (x[..., None] + 0.5)), axis=-1)
    return jnp.sum(inner, axis=-1) - x.shape[-1] * jnp.sum(ak * jnp.cos(math.pi * bk))


def schaffer_f7(x):
    """Schaffer F7 (CEC 2013 F7; BBOB f17 without its conditioning): with ``s_i = sqrt(x_i^2 +
    x_{i+1}^2)``, ``(mean_{i<d} sqrt(s_i) (1 + sin^2(50 s_i^0.2)))^2``; usual domain [-100, 100]^d,
    d >= 2; minimum 0 at the origin."""
    x = _float(x)
    s = jnp.sqrt(x[..., :-1] ** 2 + x[..., 1:] ** 2)
    return jnp.mean(jnp.sqrt(s) * (1.0 + jnp.sin(50.0 * s**0.2) ** 2), axis=-1) ** 2


def salomon(x):
    """Salomon (Jamil & Yang 2013, #110): ``1 - cos(2 pi |x|) + 0.1 |x|``; usual domain
    [-100, 100]^d; minimum 0 at the origin, ringed by local minima near the spheres ``|x| = k``."""
    x = _float(x)
    r = jnp.sqrt(jnp.sum(x**2, axis=-1))
    return 1.0 - jnp.cos(2.0 * math.pi * r) + 0.1 * r


def qing(x):
    """Qing (Jamil & Yang 2013, #98): ``sum_i (x_i^2 - i)^2``; usual domain [-500, 500]^d; minimum 0
    at the 2^d points ``x_i = ±sqrt(i)``."""
    x = _float(x)
    return jnp.sum((x**2 - _index(x)) ** 2, axis=-1)


def happy_cat(x, alpha: float = 0.125):
    """HappyCat (Beyer & Finck 2012, eq. 2; CEC 2014 F13): ``((|x|^2 - d)^2)^alpha + (|x|^2 / 2 +
    sum_i x_i) / d + 1/2``, alpha = 1/8; usual domain [-2, 2]^d; minimum 0 at ``x = -1``: with ``u =
    |x| / sqrt(d)`` it is at least ``|d (u^2 - 1)|^{1/4} + (u - 1)^2 / 2 >= 0``, zero only there."""
    x = _float(x)
    d = x.shape[-1]
    norm2 = jnp.sum(x**2, axis=-1)
    return ((norm2 - d) ** 2) ** alpha + (0.5 * norm2 + jnp.sum(x, axis=-1)) / d + 0.5
