"""jbo.metrics against hand-computed values."""

import math

import numpy as np
import pytest

from jbo import metrics

NAN, INF = float("nan"), float("inf")


def test_best_so_far_ignores_failures():
    got = metrics.best_so_far([NAN, 5.0, 7.0, NAN, 3.0, 4.0])
    np.testing.assert_array_equal(got, [INF, 5.0, 5.0, 5.0, 3.0, 3.0])


def test_best_so_far_treats_inf_as_failure_and_works_per_row():
    got = metrics.best_so_far([[2.0, INF, 1.0], [NAN, -1.0, 0.0]])
    np.testing.assert_array_equal(got, [[2.0, 2.0, 1.0], [INF, -1.0, -1.0]])


def test_simple_regret():
    got = metrics.simple_regret([3.0, NAN, 1.5, 2.0], optimum=1.0)
    np.testing.assert_allclose(got, [2.0, 2.0, 0.5, 0.5])


def test_cumulative_regret_charges_failures_the_worst_value_so_far():
    # y' = [2, 4, 4 (failure: worst so far), 1, 4 (failure)]; minus optimum 1 -> [1, 3, 3, 0, 3]
    got = metrics.cumulative_regret([2.0, 4.0, NAN, 1.0, NAN], optimum=1.0)
    np.testing.assert_allclose(got, [1.0, 4.0, 7.0, 7.0, 10.0])


def test_cumulative_regret_leading_failure_uses_worst_of_run():
    # The leading failure is charged the worst success of the run (6): y' = [6, 3, 6] - 0.
    got = metrics.cumulative_regret([NAN, 3.0, 6.0], optimum=0.0)
    np.testing.assert_allclose(got, [6.0, 9.0, 15.0])
    assert np.isnan(metrics.cumulative_regret([NAN, NAN], optimum=0.0)).all()


def test_cumulative_regret_rows_are_independent():
    got = metrics.cumulative_regret([[1.0, 2.0], [NAN, 5.0]], optimum=0.0)
    np.testing.assert_allclose(got, [[1.0, 3.0], [5.0, 10.0]])


def test_log10_distance_with_floor():
    got = metrics.log10_distance([1.1, 1.001, 1.0], optimum=1.0, floor=1e-12)
    np.testing.assert_allclose(got, [-1.0, -3.0, -12.0], atol=1e-9)
    assert metrics.log10_distance([NAN, 11.0], optimum=1.0)[0] == INF
    with pytest.raises(ValueError):
        metrics.log10_distance([1.0], 0.0, floor=0.0)


def test_nmse():
    # var([1, 2, 3, 4]) = 1.25; squared errors [0, 0, 1, 1] -> mse 0.5 -> nmse 0.4
    assert metrics.nmse([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(0.4)
    # predicting the mean gives exactly 1
    assert metrics.nmse([1, 2, 3, 4], [2.5] * 4) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="constant"):
        metrics.nmse([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="differ"):
        metrics.nmse([1, 2, 3], [1, 2])


def test_ranks_average_ties_and_nan():
    m = [[0.1, 0.2, 0.3],
         [0.5, 0.5, 0.1],   # ties share ranks 2 and 3 -> 2.5 each
         [NAN, 1.0, 2.0]]   # nan is worst
    per_row = metrics.ranks(m, average=False)
    np.testing.assert_allclose(per_row, [[1, 2, 3], [2.5, 2.5, 1], [3, 1, 2]])
    np.testing.assert_allclose(metrics.ranks(m), [6.5 / 3, 5.5 / 3, 2.0])


def test_ranks_over_time_ranks_each_step():
    # two problems, three methods, two steps
    curves = np.array([[[3.0, 1.0], [2.0, 2.0], [1.0, 3.0]],
                       [[1.0, 1.0], [1.0, NAN], [2.0, 0.0]]])
    per_row = metrics.ranks_over_time(curves, average=False)
    np.testing.assert_allclose(per_row[0], [[3, 1], [2, 2], [1, 3]])
    np.testing.assert_allclose(per_row[1], [[1.5, 2], [1.5, 3], [3, 1]])
    np.testing.assert_allclose(metrics.ranks_over_time(curves), [[2.25, 1.5], [1.75, 2.5], [2.0, 2.0]])
    for t in range(2):
        np.testing.assert_allclose(per_row[:, :, t], metrics.ranks(curves[:, :, t], average=False))
    with pytest.raises(ValueError):
        metrics.ranks_over_time(np.zeros((2, 3)))


def test_mean_and_stderr():
    curves = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    mean, se = metrics.mean_and_stderr(curves)
    np.testing.assert_allclose(mean, [3.0, 2.0])
    # std(ddof=1) of [1, 3, 5] is 2 -> se = 2 / sqrt(3)
    np.testing.assert_allclose(se, [2.0 / math.sqrt(3.0), 0.0])
    mean1, se1 = metrics.mean_and_stderr([[1.0, 4.0]])
    np.testing.assert_allclose(mean1, [1.0, 4.0])
    np.testing.assert_allclose(se1, [0.0, 0.0])
