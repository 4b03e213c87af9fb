"""Benchmark problems: a test function with its domain and known optimum, and a registry.

>>> from jbo.benchmarks import get_problem
>>> p = get_problem("branin")
>>> round(float(p(p.argmins)[0]), 6)
0.397887
>>> round(p.evaluate({"x1": 3.14159265, "x2": 2.275}), 6)
0.397887
>>> get_problem("repeated_branin", dim=4).dim
4

Conventions (where the literature offers a choice):

* ``rosenbrock`` uses the domain [-5, 10]^d, the image of BOCK's search cube [-1, 1]^d under
  ``7.5 x + 2.5`` in its reference implementation. That implementation also scales the sum by
  ``50000 / ((90^2 + 9^2)(d - 1))`` (so that the values in BOCK's Table 1, e.g. 8608.36 for every d,
  are comparable across dimensions); that is ``rosenbrock(dim, normalized=True)``; the default is
  the plain, unscaled function (optimum 0 either way).
* ``repeated_branin`` / ``repeated_hartmann6`` are means over blocks (BOCK's definition, optimum
  equal to the block function's), each block on its own function's domain.
* ``hartmann3`` uses P[3, 0] = 0.03815 (see :mod:`jbo.benchmarks.functions`), the table whose
  minimum is the quoted -3.86278214782076.
* Where a problem has many global minimisers ``argmins`` lists all of them when there are at most
  a few hundred and otherwise a representative subset (documented per factory); the first row is
  always the canonical one (e.g. the origin for Alpine N.1).
* The classics of the Virtual Library of Simulation Experiments (Ackley ... Zakharov) use its
  usual domains. Minima and minimisers it prints to a few digits are given to double precision
  (root solves of the gradient; each docstring in :mod:`jbo.benchmarks.functions` quotes the
  library's value), e.g. Shekel's minimisers lie near, not at, (4, 4, 4, 4). ``schwefel`` uses the
  exact constant 418.98288727... (the library prints 418.9829), so that its minimum is 0;
  ``styblinski_tang``'s minimum is -39.16616570 d (the library's -39.16599 d is a typo);
  ``michalewicz``'s minimiser is computed for each d. All global minimisers are listed:
  ``dixon_price`` 2 (x_d of either sign), ``six_hump_camel`` 2, ``holder_table`` and
  ``cross_in_tray`` 4, ``shubert`` 18.
* The scalable classics of the BBOB and CEC suites (bent cigar, discus, high-conditioned elliptic,
  Weierstrass, Schaffer F7) and of Jamil & Yang (2013; Salomon, Qing, and Beyer & Finck's HappyCat)
  are their raw forms on the suites' usual domains, without the suites' own shifts, rotations and
  oscillations (:func:`jbo.benchmarks.shifted_rotated` draws those).

What a problem is: :mod:`jbo.benchmarks.problem`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import jax
import numpy as np

from jbo.benchmarks import functions as F
from jbo.benchmarks import jenatton, mlp, nonlinear_shared, pethick
from jbo.benchmarks.problem import ConditionalProblem, Problem, _box, _fixed_dim, _var_dim

__all__ = ["Problem", "ConditionalProblem", "PROBLEMS", "get_problem", "list_problems"]


# Problem.fn is jitted once per function, at module level: eager jnp would compile every primitive
# separately for each new input shape (ten times one jitted compile), and a shared jitted object lets every
# Problem of that function share the cache.
# Jitted functions still compose with jit, vmap and grad.
_branin = jax.jit(F.branin)
_hartmann3 = jax.jit(F.hartmann3)
_hartmann6 = jax.jit(F.hartmann6)
_rosenbrock = jax.jit(F.rosenbrock)
_levy = jax.jit(F.levy)


@jax.jit
def _rosenbrock_normalized(x):
    x = F._float(x)
    d = x.shape[-1]
    return (50000.0 / ((90.0**2 + 9.0**2) * (d - 1))) * F.rosenbrock(x)


_griewank = jax.jit(F.griewank)
_alpine01 = jax.jit(F.alpine01)
_repeated_branin = jax.jit(F.repeated(F.branin, 2))
_repeated_hartmann6 = jax.jit(F.repeated(F.hartmann6, 6))
# the classics of the Virtual Library of Simulation Experiments
_ackley = jax.jit(F.ackley)
_rastrigin = jax.jit(F.rastrigin)
_schwefel = jax.jit(F.schwefel)
_zakharov = jax.jit(F.zakharov)
_dixon_price = jax.jit(F.dixon_price)
_powell = jax.jit(F.powell)
_shekel = {5: jax.jit(F.shekel5), 7: jax.jit(F.shekel7), 10: jax.jit(F.shekel10)}
_sum_of_different_powers = jax.jit(F.sum_of_different_powers)
_styblinski_tang = jax.jit(F.styblinski_tang)
_michalewicz = jax.jit(F.michalewicz)
_six_hump_camel = jax.jit(F.six_hump_camel)
_rotated_hyper_ellipsoid = jax.jit(F.rotated_hyper_ellipsoid)
_trid = jax.jit(F.trid)
_sphere = jax.jit(F.sphere)
_sum_squares = jax.jit(F.sum_squares)
_goldstein_price = jax.jit(F.goldstein_price)
_beale = jax.jit(F.beale)
_booth = jax.jit(F.booth)
_matyas = jax.jit(F.matyas)
_three_hump_camel = jax.jit(F.three_hump_camel)
_easom = jax.jit(F.easom)
_eggholder = jax.jit(F.eggholder)
_holder_table = jax.jit(F.holder_table)
_cross_in_tray = jax.jit(F.cross_in_tray)
_drop_wave = jax.jit(F.drop_wave)
_levy13 = jax.jit(F.levy13)
_bukin6 = jax.jit(F.bukin6)
_mccormick = jax.jit(F.mccormick)
_colville = jax.jit(F.colville)
_forrester = jax.jit(F.forrester)
_gramacy_lee = jax.jit(F.gramacy_lee)
_shubert = jax.jit(F.shubert)
# scalable classics of the BBOB and CEC suites and of Jamil & Yang (2013)
_bent_cigar = jax.jit(F.bent_cigar)
_discus = jax.jit(F.discus)
_elliptic = jax.jit(F.elliptic)
_weierstrass = jax.jit(F.weierstrass)
_schaffer_f7 = jax.jit(F.schaffer_f7)
_salomon = jax.jit(F.salomon)
_qing = jax.jit(F.qing)
_happy_cat = jax.jit(F.happy_cat)


def branin(dim: int | None = None) -> Problem:
    """Branin on x1 in [-5, 10], x2 in [0, 15]: 5 / (4 pi) at (-pi, 12.275), (pi, 2.275),
    (3 pi, 2.475)."""
    _fixed_dim("branin", 2, dim)
    return Problem(
        "branin",
        _branin,
        np.array([[-5.0, 10.0], [0.0, 15.0]]),
        F.BRANIN_OPTIMUM,
        F.BRANIN_ARGMINS.copy(),
    )


def hartmann3(dim: int | None = None) -> Problem:
    """Hartmann 3-d on [0, 1]^3: -3.86278214782076 at (0.114614, 0.555649, 0.852547)."""
    _fixed_dim("hartmann3", 3, dim)
    return Problem(
        "hartmann3", _hartmann3, _box(0.0, 1.0, 3), F.HARTMANN3_OPTIMUM, F.HARTMANN3_ARGMIN.copy()
    )


def hartmann6(dim: int | None = None) -> Problem:
    """Hartmann 6-d on [0, 1]^6: -3.32236801141551 at (0.20169, 0.15001, 0.47687, 0.27533,
    0.31165, 0.65730)."""
    _fixed_dim("hartmann6", 6, dim)
    return Problem(
        "hartmann6", _hartmann6, _box(0.0, 1.0, 6), F.HARTMANN6_OPTIMUM, F.HARTMANN6_ARGMIN.copy()
    )


def rosenbrock(dim: int | None = None, *, normalized: bool = False) -> Problem:
    """Rosenbrock on [-5, 10]^d (default d = 2, d >= 2): 0 at ones.

    ``normalized=True`` multiplies by BOCK's ``50000 / ((90^2 + 9^2)(d - 1))`` (its reference
    implementation), under which the centre of the domain scores 8608.36 for every d, the value
    several baselines are stuck at in BOCK's Table 1.
    """
    d = _var_dim("rosenbrock", dim, 2, minimum=2)
    fn = _rosenbrock_normalized if normalized else _rosenbrock
    return Problem("rosenbrock", fn, _box(-5.0, 10.0, d), 0.0, np.ones((1, d)))


def levy(dim: int | None = None) -> Problem:
    """Levy on [-10, 10]^d (default d = 2): 0 at ones."""
    d = _var_dim("levy", dim, 2)
    return Problem("levy", _levy, _box(-10.0, 10.0, d), 0.0, np.ones((1, d)))


def griewank(dim: int | None = None) -> Problem:
    """Griewank on [-600, 600]^d (default d = 2): 0 at the origin."""
    d = _var_dim("griewank", dim, 2)
    return Problem("griewank", _griewank, _box(-600.0, 600.0, d), 0.0, np.zeros((1, d)))


def alpine01(dim: int | None = None) -> Problem:
    """Alpine N.1 on [-10, 10]^d (default d = 2): 0 at the origin.

    It is 0 wherever every coordinate is 0 or a root of sin(x) = -0.1, i.e. at 8^d points of the
    domain. ``argmins`` lists all of them (origin first) for d <= 3 and otherwise the origin and
    the 7 points with all coordinates equal to the same root.
    """
    d = _var_dim("alpine01", dim, 2)
    roots = np.concatenate([[0.0], F.ALPINE01_ROOTS[F.ALPINE01_ROOTS != 0.0]])
    if d <= 3:
        argmins = np.array(list(itertools.product(roots, repeat=d)))
    else:
        argmins = np.repeat(roots[:, None], d, axis=1)
    return Problem("alpine01", _alpine01, _box(-10.0, 10.0, d), 0.0, argmins)


def repeated_branin(dim: int | None = None) -> Problem:
    """Repeated Branin (BOCK): mean of Branin over the d / 2 consecutive pairs (default d = 20).

    Optimum 5 / (4 pi) = 0.3979 at every d, attained at the 3^(d/2) points where each pair is one
    of Branin's three minimisers. ``argmins`` lists all of them for d <= 10 (243 rows) and
    otherwise 6: the 3 with every pair at the same minimiser, then 3 cyclic mixes (pair j at
    minimiser (j + s) mod 3, s = 0, 1, 2), the first row being pair-wise (-pi, 12.275).
    """
    d = _var_dim("repeated_branin", dim, 20, minimum=2, multiple=2)
    m = d // 2
    bounds = np.tile(np.array([[-5.0, 10.0], [0.0, 15.0]]), (m, 1))
    a = F.BRANIN_ARGMINS
    if m <= 5:
        choices = list(itertools.product(range(3), repeat=m))
    else:
        choices = [(s,) * m for s in range(3)]
        choices += [tuple((j + s) % 3 for j in range(m)) for s in range(3)]
    argmins = np.array([np.concatenate([a[c] for c in combo]) for combo in choices])
    return Problem("repeated_branin", _repeated_branin, bounds, F.BRANIN_OPTIMUM, argmins)


def repeated_hartmann6(dim: int | None = None) -> Problem:
    """Repeated Hartmann6 (BOCK): mean of Hartmann6 over the d / 6 consecutive 6-d blocks
    (default d = 12, d a multiple of 6) on [0, 1]^d; optimum -3.32236801141551 at every d, at the
    Hartmann6 minimiser repeated in every block."""
    d = _var_dim("repeated_hartmann6", dim, 12, minimum=6, multiple=6)
    argmins = np.tile(F.HARTMANN6_ARGMIN, (1, d // 6))
    return Problem(
        "repeated_hartmann6",
        _repeated_hartmann6,
        _box(0.0, 1.0, d),
        F.HARTMANN6_OPTIMUM,
        argmins,
    )


# --------------------------------------------------------------------------------------------
# The classics of the Virtual Library of Simulation Experiments (Surjanovic & Bingham,
# sfu.ca/~ssurjano): usual domain, known minimum, minimisers; formulas and sources of the
# constants in jbo.benchmarks.functions. Scalable ones default to d = 2 (Powell: 4).
# --------------------------------------------------------------------------------------------
def _origin(name: str, fn, low: float, high: float, dim, default: int = 2, multiple: int = 1) -> Problem:
    """A scalable problem on [low, high]^d with minimum 0 at the origin only."""
    d = _var_dim(name, dim, default, minimum=multiple, multiple=multiple)
    return Problem(name, fn, _box(low, high, d), 0.0, np.zeros((1, d)))


def ackley(dim: int | None = None) -> Problem:
    """Ackley (a = 20, b = 0.2, c = 2 pi) on [-32.768, 32.768]^d (default d = 2): 0 at the origin."""
    return _origin("ackley", _ackley, -32.768, 32.768, dim)


def rastrigin(dim: int | None = None) -> Problem:
    """Rastrigin on [-5.12, 5.12]^d (default d = 2): 0 at the origin."""
    return _origin("rastrigin", _rastrigin, -5.12, 5.12, dim)


def schwefel(dim: int | None = None) -> Problem:
    """Schwefel on [-500, 500]^d (default d = 2): 0 at x_i = 420.968746 (with the exact
    constant 418.98288727..., see :func:`jbo.benchmarks.functions.schwefel`)."""
    d = _var_dim("schwefel", dim, 2)
    return Problem("schwefel", _schwefel, _box(-500.0, 500.0, d), 0.0, np.full((1, d), F.SCHWEFEL_ARGMIN))


def zakharov(dim: int | None = None) -> Problem:
    """Zakharov on [-5, 10]^d (default d = 2): 0 at the origin."""
    return _origin("zakharov", _zakharov, -5.0, 10.0, dim)


def dixon_price(dim: int | None = None) -> Problem:
    """Dixon-Price on [-10, 10]^d (default d = 2): 0 at x_i = 2^(-(2^i - 2) / 2^i).

    ``argmins``: that point, then (d >= 2) the same with x_d negated, the only other minimiser.
    """
    d = _var_dim("dixon_price", dim, 2)
    i = np.arange(1, d + 1, dtype=np.float64)
    x = 2.0 ** (-(2.0**i - 2.0) / 2.0**i)
    rows = [x] if d == 1 else [x, np.concatenate([x[:-1], -x[-1:]])]
    return Problem("dixon_price", _dixon_price, _box(-10.0, 10.0, d), 0.0, np.array(rows))


def powell(dim: int | None = None) -> Problem:
    """Powell on [-4, 5]^d (default d = 4, d a multiple of 4): 0 at the origin."""
    return _origin("powell", _powell, -4.0, 5.0, dim, default=4, multiple=4)


def _shekel_problem(m: int, dim) -> Problem:
    name = f"shekel{m}"
    _fixed_dim(name, 4, dim)
    return Problem(name, _shekel[m], _box(0.0, 10.0, 4), F.SHEKEL_OPTIMA[m], F.SHEKEL_ARGMINS[m].copy())


def shekel5(dim: int | None = None) -> Problem:
    """Shekel with m = 5 on [0, 10]^4: -10.1531996791 (VLSE: -10.1532) near (4, 4, 4, 4)."""
    return _shekel_problem(5, dim)


def shekel7(dim: int | None = None) -> Problem:
    """Shekel with m = 7 on [0, 10]^4: -10.4029153368 (VLSE: -10.4029) near (4, 4, 4, 4)."""
    return _shekel_problem(7, dim)


def shekel10(dim: int | None = None) -> Problem:
    """Shekel with m = 10 on [0, 10]^4: -10.5364431535 (VLSE: -10.5364) near (4, 4, 4, 4)."""
    return _shekel_problem(10, dim)


def sum_of_different_powers(dim: int | None = None) -> Problem:
    """Sum of different powers on [-1, 1]^d (default d = 2): 0 at the origin."""
    return _origin("sum_of_different_powers", _sum_of_different_powers, -1.0, 1.0, dim)


def styblinski_tang(dim: int | None = None) -> Problem:
    """Styblinski-Tang on [-5, 5]^d (default d = 2): -39.16616570 d at x_i = -2.903534028."""
    d = _var_dim("styblinski_tang", dim, 2)
    return Problem(
        "styblinski_tang",
        _styblinski_tang,
        _box(-5.0, 5.0, d),
        F.STYBLINSKI_TANG_OPTIMUM * d,
        np.full((1, d), F.STYBLINSKI_TANG_ARGMIN),
    )


def michalewicz(dim: int | None = None) -> Problem:
    """Michalewicz (m = 10) on [0, pi]^d (default d = 2): -1.8013 (d = 2), -4.687658 (d = 5),
    -9.66015 (d = 10), any d computed by :func:`jbo.benchmarks.functions.michalewicz_minimiser`."""
    d = _var_dim("michalewicz", dim, 2)
    x, value = F.michalewicz_minimiser(d)
    return Problem("michalewicz", _michalewicz, _box(0.0, np.pi, d), value, x[None])


def six_hump_camel(dim: int | None = None) -> Problem:
    """Six-hump camel on [-3, 3] x [-2, 2]: -1.0316284535 at +-(0.0898420131, -0.7126564030)."""
    _fixed_dim("six_hump_camel", 2, dim)
    return Problem(
        "six_hump_camel",
        _six_hump_camel,
        np.array([[-3.0, 3.0], [-2.0, 2.0]]),
        F.SIX_HUMP_CAMEL_OPTIMUM,
        F.SIX_HUMP_CAMEL_ARGMINS.copy(),
    )


def rotated_hyper_ellipsoid(dim: int | None = None) -> Problem:
    """Rotated hyper-ellipsoid on [-65.536, 65.536]^d (default d = 2): 0 at the origin."""
    return _origin("rotated_hyper_ellipsoid", _rotated_hyper_ellipsoid, -65.536, 65.536, dim)


def trid(dim: int | None = None) -> Problem:
    """Trid on [-d^2, d^2]^d (default d = 2): -d (d + 4)(d - 1) / 6 at x_i = i (d + 1 - i)."""
    d = _var_dim("trid", dim, 2)
    i = np.arange(1, d + 1, dtype=np.float64)
    return Problem(
        "trid", _trid, _box(-float(d * d), float(d * d), d), -d * (d + 4) * (d - 1) / 6.0, (i * (d + 1 - i))[None]
    )


def sphere(dim: int | None = None) -> Problem:
    """Sphere on [-5.12, 5.12]^d (default d = 2): 0 at the origin."""
    return _origin("sphere", _sphere, -5.12, 5.12, dim)


def sum_squares(dim: int | None = None) -> Problem:
    """Sum of squares on [-10, 10]^d (default d = 2): 0 at the origin."""
    return _origin("sum_squares", _sum_squares, -10.0, 10.0, dim)


def _fixed(name: str, fn, bounds, optimum: float, argmins, dim) -> Problem:
    """A fixed-dimension problem on ``bounds``."""
    bounds = np.asarray(bounds, dtype=np.float64)
    _fixed_dim(name, bounds.shape[0], dim)
    return Problem(name, fn, bounds, float(optimum), np.array(argmins, dtype=np.float64))


def goldstein_price(dim: int | None = None) -> Problem:
    """Goldstein-Price on [-2, 2]^2: 3 at (0, -1)."""
    return _fixed("goldstein_price", _goldstein_price, _box(-2.0, 2.0, 2), 3.0, [[0.0, -1.0]], dim)


def beale(dim: int | None = None) -> Problem:
    """Beale on [-4.5, 4.5]^2: 0 at (3, 0.5)."""
    return _fixed("beale", _beale, _box(-4.5, 4.5, 2), 0.0, [[3.0, 0.5]], dim)


def booth(dim: int | None = None) -> Problem:
    """Booth on [-10, 10]^2: 0 at (1, 3)."""
    return _fixed("booth", _booth, _box(-10.0, 10.0, 2), 0.0, [[1.0, 3.0]], dim)


def matyas(dim: int | None = None) -> Problem:
    """Matyas on [-10, 10]^2: 0 at the origin."""
    return _fixed("matyas", _matyas, _box(-10.0, 10.0, 2), 0.0, [[0.0, 0.0]], dim)


def three_hump_camel(dim: int | None = None) -> Problem:
    """Three-hump camel on [-5, 5]^2: 0 at the origin."""
    return _fixed("three_hump_camel", _three_hump_camel, _box(-5.0, 5.0, 2), 0.0, [[0.0, 0.0]], dim)


def easom(dim: int | None = None) -> Problem:
    """Easom on [-100, 100]^2: -1 at (pi, pi)."""
    return _fixed("easom", _easom, _box(-100.0, 100.0, 2), -1.0, [[np.pi, np.pi]], dim)


def eggholder(dim: int | None = None) -> Problem:
    """Eggholder on [-512, 512]^2: -959.6406627 at (512, 404.2318051), on the boundary."""
    return _fixed("eggholder", _eggholder, _box(-512.0, 512.0, 2), F.EGGHOLDER_OPTIMUM, F.EGGHOLDER_ARGMIN, dim)


def holder_table(dim: int | None = None) -> Problem:
    """Hölder table on [-10, 10]^2: -19.2085025679 at (+-8.0550235, +-9.6645900)."""
    return _fixed(
        "holder_table", _holder_table, _box(-10.0, 10.0, 2), F.HOLDER_TABLE_OPTIMUM, F.HOLDER_TABLE_ARGMINS, dim
    )


def cross_in_tray(dim: int | None = None) -> Problem:
    """Cross-in-tray on [-10, 10]^2: -2.0626118708 at (+-1.3494066, +-1.3494066)."""
    return _fixed(
        "cross_in_tray", _cross_in_tray, _box(-10.0, 10.0, 2), F.CROSS_IN_TRAY_OPTIMUM, F.CROSS_IN_TRAY_ARGMINS, dim
    )


def drop_wave(dim: int | None = None) -> Problem:
    """Drop-wave on [-5.12, 5.12]^2: -1 at the origin."""
    return _fixed("drop_wave", _drop_wave, _box(-5.12, 5.12, 2), -1.0, [[0.0, 0.0]], dim)


def levy13(dim: int | None = None) -> Problem:
    """Levy N. 13 on [-10, 10]^2: 0 at (1, 1)."""
    return _fixed("levy13", _levy13, _box(-10.0, 10.0, 2), 0.0, [[1.0, 1.0]], dim)


def bukin6(dim: int | None = None) -> Problem:
    """Bukin N. 6 on [-15, -5] x [-3, 3]: 0 at (-10, 1)."""
    return _fixed("bukin6", _bukin6, [[-15.0, -5.0], [-3.0, 3.0]], 0.0, [[-10.0, 1.0]], dim)


def mccormick(dim: int | None = None) -> Problem:
    """McCormick on [-1.5, 4] x [-3, 4]: -sqrt(3)/2 - pi/3 at (1/2 - pi/3, -1/2 - pi/3)."""
    return _fixed(
        "mccormick", _mccormick, [[-1.5, 4.0], [-3.0, 4.0]], F.MCCORMICK_OPTIMUM, F.MCCORMICK_ARGMIN, dim
    )


def colville(dim: int | None = None) -> Problem:
    """Colville on [-10, 10]^4: 0 at (1, 1, 1, 1)."""
    return _fixed("colville", _colville, _box(-10.0, 10.0, 4), 0.0, np.ones((1, 4)), dim)


def forrester(dim: int | None = None) -> Problem:
    """Forrester et al. (2008) on [0, 1]: -6.0207400558 at 0.7572487578."""
    return _fixed(
        "forrester", _forrester, _box(0.0, 1.0, 1), F.FORRESTER_OPTIMUM, [[F.FORRESTER_ARGMIN]], dim
    )


def gramacy_lee(dim: int | None = None) -> Problem:
    """Gramacy & Lee (2012) on [0.5, 2.5]: -0.8690111350 at 0.5485634445."""
    return _fixed(
        "gramacy_lee", _gramacy_lee, _box(0.5, 2.5, 1), F.GRAMACY_LEE_OPTIMUM, [[F.GRAMACY_LEE_ARGMIN]], dim
    )


def shubert(dim: int | None = None) -> Problem:
    """Shubert on [-10, 10]^2: -186.7309088 at 18 points (``argmins`` lists all, sorted)."""
    return _fixed("shubert", _shubert, _box(-10.0, 10.0, 2), F.SHUBERT_OPTIMUM, F.SHUBERT_ARGMINS, dim)


def bent_cigar(dim: int | None = None) -> Problem:
    """Bent cigar on [-100, 100]^d (default d = 2): 0 at the origin."""
    return _origin("bent_cigar", _bent_cigar, -100.0, 100.0, dim)


def discus(dim: int | None = None) -> Problem:
    """Discus on [-100, 100]^d (default d = 2): 0 at the origin."""
    return _origin("discus", _discus, -100.0, 100.0, dim)


def elliptic(dim: int | None = None) -> Problem:
    """High-conditioned elliptic on [-100, 100]^d (default d = 2): 0 at the origin."""
    return _origin("elliptic", _elliptic, -100.0, 100.0, dim)


def weierstrass(dim: int | None = None) -> Problem:
    """Weierstrass (a = 0.5, b = 3, k_max = 20) on [-0.5, 0.5]^d (default d = 2): 0 at the origin."""
    return _origin("weierstrass", _weierstrass, -0.5, 0.5, dim)


def schaffer_f7(dim: int | None = None) -> Problem:
    """Schaffer F7 on [-100, 100]^d (default d = 2, d >= 2): 0 at the origin."""
    d = _var_dim("schaffer_f7", dim, 2, minimum=2)
    return _origin("schaffer_f7", _schaffer_f7, -100.0, 100.0, d)


def salomon(dim: int | None = None) -> Problem:
    """Salomon on [-100, 100]^d (default d = 2): 0 at the origin."""
    return _origin("salomon", _salomon, -100.0, 100.0, dim)


def qing(dim: int | None = None) -> Problem:
    """Qing on [-500, 500]^d (default d = 2): 0 at the 2^d points x_i = ±sqrt(i).

    ``argmins`` lists all of them for d <= 8 (all signs positive first) and otherwise the 2 with
    every sign the same and the d with one coordinate negated.
    """
    d = _var_dim("qing", dim, 2)
    root = np.sqrt(np.arange(1, d + 1, dtype=np.float64))
    if d <= 8:
        signs = np.array(list(itertools.product([1.0, -1.0], repeat=d)))
    else:
        signs = np.concatenate([np.ones((1, d)), -np.ones((1, d)), 1.0 - 2.0 * np.eye(d)])
    return Problem("qing", _qing, _box(-500.0, 500.0, d), 0.0, signs * root)


def happy_cat(dim: int | None = None) -> Problem:
    """HappyCat (alpha = 1/8) on [-2, 2]^d (default d = 2): 0 at x = -1."""
    d = _var_dim("happy_cat", dim, 2)
    return Problem("happy_cat", _happy_cat, _box(-2.0, 2.0, d), 0.0, -np.ones((1, d)))


PROBLEMS: dict[str, Callable[..., Problem]] = {
    "branin": branin,
    "hartmann3": hartmann3,
    "hartmann6": hartmann6,
    "rosenbrock": rosenbrock,
    "levy": levy,
    "griewank": griewank,
    "alpine01": alpine01,
    "repeated_branin": repeated_branin,
    "repeated_hartmann6": repeated_hartmann6,
    # the classics of the Virtual Library of Simulation Experiments
    "ackley": ackley,
    "beale": beale,
    "booth": booth,
    "bukin6": bukin6,
    "colville": colville,
    "cross_in_tray": cross_in_tray,
    "dixon_price": dixon_price,
    "drop_wave": drop_wave,
    "easom": easom,
    "eggholder": eggholder,
    "forrester": forrester,
    "goldstein_price": goldstein_price,
    "gramacy_lee": gramacy_lee,
    "holder_table": holder_table,
    "levy13": levy13,
    "matyas": matyas,
    "mccormick": mccormick,
    "michalewicz": michalewicz,
    "powell": powell,
    "rastrigin": rastrigin,
    "rotated_hyper_ellipsoid": rotated_hyper_ellipsoid,
    "schwefel": schwefel,
    "shekel5": shekel5,
    "shekel7": shekel7,
    "shekel10": shekel10,
    "shubert": shubert,
    "six_hump_camel": six_hump_camel,
    "sphere": sphere,
    "styblinski_tang": styblinski_tang,
    "sum_of_different_powers": sum_of_different_powers,
    "sum_squares": sum_squares,
    "three_hump_camel": three_hump_camel,
    "trid": trid,
    "zakharov": zakharov,
    # scalable classics of the BBOB and CEC suites and of Jamil & Yang (2013)
    "bent_cigar": bent_cigar,
    "discus": discus,
    "elliptic": elliptic,
    "weierstrass": weierstrass,
    "schaffer_f7": schaffer_f7,
    "salomon": salomon,
    "qing": qing,
    "happy_cat": happy_cat,
}

# Pethick (2018)'s benchmarks (SinOne and its embeddings, Corana, Dolan, LennardJones6).
PROBLEMS.update(pethick.PROBLEMS)

# Jenatton et al. (2017)'s synthetic tree-structured functions: ConditionalProblems.
PROBLEMS.update(jenatton.PROBLEMS)

# Conditional problems whose shared parameters act non-linearly and differently per branch.
PROBLEMS.update(nonlinear_shared.PROBLEMS)

# The real conditional problem: tuning an MLP classifier (Jenatton et al. 2017, Sec. 4.2).
PROBLEMS.update(mlp.PROBLEMS)


def list_problems() -> list[str]:
    """Names of the registered problems, sorted."""
    return sorted(PROBLEMS)


def get_problem(name: str, dim: int | None = None, **kwargs) -> Problem | ConditionalProblem:
    """The problem ``name`` (at dimension ``dim`` for the scalable ones; ``None``: its default).

    Extra keyword arguments go to the factory (e.g. ``normalized=True`` for ``rosenbrock``).
    Raises ``ValueError`` for an unknown name (listing the valid ones), for a ``dim`` other than
    the native one of a fixed-dimension problem, and for an invalid ``dim``.
    """
    try:
        factory = PROBLEMS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown benchmark problem {name!r}; valid names: {', '.join(list_problems())}"
        ) from None
    return factory(dim, **kwargs)
