"""Benchmark problems with known optima (vectorised ``jax.numpy``, user units).

``get_problem(name, dim=None)`` returns a :class:`Problem` (``fn``, ``bounds``, ``optimum``,
``argmins``, ``space()``, ``evaluate(config)``) or, for the tree-structured problems of
:mod:`jbo.benchmarks.jenatton`, a :class:`ConditionalProblem` (``space()``, ``evaluate(config)``,
``optimum``, ``best_config``); ``list_problems()`` names them. The raw test
functions are in :mod:`jbo.benchmarks.functions`, the problems and their conventions in
:mod:`jbo.benchmarks.registry`.
"""

from jbo.benchmarks import functions
from jbo.benchmarks.registry import PROBLEMS, ConditionalProblem, Problem, get_problem, list_problems

__all__ = ["PROBLEMS", "ConditionalProblem", "Problem", "functions", "get_problem", "list_problems"]
