"""Optuna's own conformance suites for third-party samplers, run against :class:`jbo.integrations.optuna.JboSampler`.

``optuna.testing.pytest_samplers`` holds the cases Optuna's samplers pass: every distribution, conditional and
dynamic search spaces, NaN objectives, fixed parameters, relative sampling of each pair of numeric distributions,
threads asking at once, and a refusal of multi-objective studies. They run in one process with the stored-program
cache on (a directory of the test's own): each case is a new search space, so the process meets dozens of spaces,
which jbo serves from one program per structure (``jbo.spaces.Space.structure``).
"""

import pytest

from jbo import cache

pytest.importorskip("optuna")

from optuna.testing.pytest_samplers import (  # noqa: E402
    BasicSamplerTestCase,
    RelativeSamplerTestCase,
    SingleOnlySamplerTestCase,
)

from jbo.integrations.optuna import JboSampler  # noqa: E402

SMALL_SEARCH = dict(maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))


@pytest.fixture(autouse=True, scope="module")
def _stored_programs(tmp_path_factory):
    """The stored-program cache on, in a directory of this module's (the suite turns it off elsewhere)."""
    patch = pytest.MonkeyPatch()
    patch.delenv("JBO_NO_CACHE", raising=False)
    patch.setenv("JBO_CACHE_DIR", str(tmp_path_factory.mktemp("jbo-cache")))
    assert cache.programs_directory() is not None
    yield
    patch.undo()


class TestMapSampler(BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase):
    """The GP with MAP hyperparameters, its model from the first trial (``n_startup_trials=0``)."""

    @pytest.fixture
    def sampler(self):
        return lambda: JboSampler(inference="map", n_startup_trials=0, seed=0, **SMALL_SEARCH)


class TestDefaultSampler(BasicSamplerTestCase, RelativeSamplerTestCase, SingleOnlySamplerTestCase):
    """jbo's default GP (slice-sampled hyperparameters, UCB in a trust region) after a design of two trials."""

    @pytest.fixture
    def sampler(self):
        return lambda: JboSampler(n_startup_trials=2, seed=1, num_samples=2, num_burnin=4, **SMALL_SEARCH)
