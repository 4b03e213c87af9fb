"""Benchmark problems with known optima (vectorised ``jax.numpy``, user units).

``get_problem(name, dim=None)`` returns a :class:`Problem` (``fn``, ``bounds``, ``optimum``,
``argmins``, ``space()``, ``evaluate(config)``); ``list_problems()`` names them. The raw test
functions are in :mod:`jbo.benchmarks.functions`, the problems and their conventions in
:mod:`jbo.benchmarks.registry`.
"""

from jbo.benchmarks import functions
from jbo.benchmarks.registry import PROBLEMS, Problem, get_problem, list_problems

__all__ = ["PROBLEMS", "Problem", "functions", "get_problem", "list_problems"]
