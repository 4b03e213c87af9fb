"""Benchmark problems with known optima (vectorised ``jax.numpy``, user units).

``get_problem(name, dim=None)`` returns a :class:`Problem` (``fn``, ``bounds``, ``optimum``,
``argmins``, ``space()``, ``evaluate(config)``) or, for the tree-structured problems of
:mod:`jbo.benchmarks.jenatton`, a :class:`ConditionalProblem` (``space()``, ``evaluate(config)``,
``optimum``, ``best_config``); ``list_problems()`` names them. The raw test
functions are in :mod:`jbo.benchmarks.functions`, the problems and their conventions in
:mod:`jbo.benchmarks.registry`. ``shifted_rotated(problem, key)`` (:mod:`jbo.benchmarks.transforms`)
is a random instance of a box problem with its minimiser moved to a random point of the box and
the function turned by a random orthogonal matrix, with the same known optimum.
"""

from jbo.benchmarks import functions
from jbo.benchmarks.registry import PROBLEMS, ConditionalProblem, Problem, get_problem, list_problems
from jbo.benchmarks.transforms import shifted_rotated

__all__ = [
    "PROBLEMS",
    "ConditionalProblem",
    "Problem",
    "functions",
    "get_problem",
    "list_problems",
    "shifted_rotated",
]
