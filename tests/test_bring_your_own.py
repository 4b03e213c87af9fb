"""Pieces of one's own as values in every driver: kernels, acquisitions, surrogates and model classes, their
records in the journal, their errors, and the contract every model meets (issue: bring your own blocks)."""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.special import log_ndtr

import jbo
from jbo import acquisition, cli, kernels, loop, models, records, studies
from jbo.benchmarks import get_problem
from jbo.data import pad_data
from jbo.optimize import MaximizeConfig
from jbo.types import Inputs, Pending

PROBLEM = get_problem("branin")
SPACE = PROBLEM.space()
# The whole box: these runs compare pieces of one's own with the built-in ones, not the search's region (the GP's
# trust region is tested in test_trust.py).
LOOP = dict(n_init=4, maximize=dict(num_anchors=64, num_local=8, top_k=2, num_steps=10), trust_region=False)
FAST = dict(inference="map", **LOOP)
MATERN_LINEAR = jbo.models.GP(kernel=kernels.Matern52() + kernels.Linear(), inference="map")


def lower_confidence_bound(mean, var, best):
    return -(mean - 2.0 * jnp.sqrt(var))


def log_improvement_probability(mean, var, best):
    return log_ndtr((best - mean) / jnp.sqrt(var))


def ask_tell(budget: int = 7, **options):
    """A short ask/tell run on Branin, padded as ``jbo.minimize`` pads it (the same programs); MAP inference
    unless ``options`` name a model object."""
    defaults = LOOP if isinstance(options.get("model"), jbo.models.ModelConfig) else FAST
    opt = jbo.Optimizer(SPACE, seed=1, **{**defaults, **options})
    for _ in range(budget):
        config = opt.ask(size=8)
        opt.tell(config, PROBLEM.evaluate(config))
    return opt


def points(opt):
    return [h["config"] for h in opt.history]


def assert_same_points(a, b):
    """Two runs of different programs whose maths agree (a mixture of one option and that option, say) suggest the
    same points to rounding: how XLA compiles each program (fusion, the host CPU's vector units) may move the last
    digits, and a BO run carries them along."""
    assert [config.keys() for config in a] == [config.keys() for config in b]
    np.testing.assert_allclose([list(c.values()) for c in a], [list(c.values()) for c in b], rtol=1e-9, atol=1e-12)


def assert_same_suggestion(a: dict, b: dict, rtol: float = 1e-5):
    """A resumed run's next suggestion is the one the uninterrupted run makes, to the precision of a fit (MAP's
    L-BFGS stops at a relative 1e-5), in units of the box (SPACE's): the journal holds the observations, not the
    last fit's hyperparameters, so the resumed fit starts cold."""
    assert a.keys() == b.keys()
    unit = lambda c: SPACE.encode(c)
    np.testing.assert_allclose(unit(a), unit(b), rtol=0, atol=rtol)


# ----------------------------------------------------------------------------- kernels


def test_a_kernel_object_equal_to_a_name_suggests_the_same_points():
    by_name = points(ask_tell(model=jbo.models.GP(kernel="matern52", inference="map")))
    by_object = points(ask_tell(model=jbo.models.GP(kernel=kernels.Matern52(), inference="map")))
    assert by_object == by_name


@pytest.fixture(scope="module")
def pieces_run(tmp_path_factory):
    """A composed kernel and an acquisition function of one's own in one run, in every driver (their
    programs compile once for the tests below): ask/tell with a journal, the resumed run's next suggestion
    beside the uninterrupted run's, ``jbo.minimize`` and ``jbo.minimize_many``."""
    path = tmp_path_factory.mktemp("pieces") / "run.jsonl"
    pieces = dict(model=MATERN_LINEAR, acquisition=lower_confidence_bound)
    opt = ask_tell(journal=path, **pieces)
    header = json.loads(path.read_text().splitlines()[0])
    resumed = jbo.Optimizer.resume(path)
    next_suggestions = resumed.ask(size=8), opt.ask(size=8)
    result = jbo.minimize(PROBLEM.evaluate, SPACE, budget=7, seed=1, **pieces, **LOOP)
    many = jbo.minimize_many(PROBLEM.evaluate, SPACE, budget=7, seeds=[1], **pieces, **LOOP)
    return dict(opt=opt, header=header, resumed=resumed, next=next_suggestions, result=result, many=many,
                values=[h["value"] for h in opt.history])


def test_a_composed_kernel_runs_in_every_driver_and_resumes(pieces_run):
    run = pieces_run
    assert len(run["opt"].history) == 7
    assert run["header"]["settings"]["model"]["kernel"]["$type"] == "jbo.kernels:Sum"
    assert run["resumed"].settings.model == MATERN_LINEAR
    assert_same_suggestion(*run["next"])
    assert run["result"].values.tolist() == run["values"]
    # the compiled run is the ask/tell run (values to round-off: the objective runs in JAX there)
    np.testing.assert_allclose(run["many"].values[0], run["result"].values, rtol=1e-9)


def test_kernel_objects_in_the_other_gp_type_models():
    tree_space = get_problem("jenatton_small").space()
    for model in (jbo.models.Arc(kernel=kernels.SquaredExponential()), jbo.models.Matern(kernel="se"),
                  jbo.models.Tree(kernel=kernels.Matern52() + kernels.Constant())):
        assert models.from_dict(json.loads(json.dumps(model.to_dict()))) == model
    assert jbo.models.Arc(kernel=kernels.Matern52()).surrogate_for(tree_space) is \
        jbo.models.Arc(kernel=kernels.Matern52()).surrogate_for(tree_space)
    with pytest.raises(ValueError, match="kernel"):
        jbo.models.Arc(kernel=kernels.Linear())  # the arc kernel takes a distance profile
    with pytest.raises(ValueError, match="ard"):
        jbo.models.GP(kernel=kernels.Matern52(), ard=False)


# ----------------------------------------------------------------------------- acquisitions


def test_an_acquisition_function_runs_in_every_driver_and_resumes(pieces_run):
    run = pieces_run
    opt = run["opt"]
    assert opt.settings.acquisition == acquisition.Pointwise(lower_confidence_bound)
    # its own maths: UCB's with the same weight (beta = 4) gives the same points (to round-off), another not
    ucb = np.array([list(c.values()) for c in points(ask_tell(model=MATERN_LINEAR, acquisition="ucb", ucb_beta=4.0))])
    np.testing.assert_allclose(np.array([list(c.values()) for c in points(opt)]), ucb, rtol=1e-6)
    assert points(opt) != points(ask_tell(model=MATERN_LINEAR, acquisition="ucb", ucb_beta=0.25))
    assert run["resumed"].settings.acquisition == opt.settings.acquisition
    assert_same_suggestion(*run["next"])
    np.testing.assert_allclose(run["many"].values[0], run["values"], rtol=1e-9)


def with_a_constraint(config):
    """Branin, feasible where x1 + x2 <= 12 (a constraint value known at evaluation)."""
    return PROBLEM.evaluate(config), [config["x1"] + config["x2"] - 12.0]


def test_a_log_acquisition_runs_with_pending_points_and_constraints_on_an_executor():
    log_pi = acquisition.Pointwise(log_improvement_probability, log=True)
    with cf.ThreadPoolExecutor(2) as pool:  # every model suggestion is made with the other point pending
        result = jbo.minimize(with_a_constraint, SPACE, budget=7, n_workers=2, executor=pool, acquisition=log_pi,
                              **FAST)
    assert len(result.history) == 7 and len({tuple(sorted(h["config"].items())) for h in result.history}) == 7
    assert all(h["constraints"] for h in result.history) and np.isfinite(result.best_value)


def test_a_score_that_is_not_a_log_cannot_be_constrained():
    opt = ask_tell(model=MATERN_LINEAR, acquisition=lower_confidence_bound, budget=5)  # pieces_run's program
    opt.tell(opt.ask(size=8), None, feasible=False)
    with pytest.raises(ValueError, match="log"):
        opt.ask(size=8)


@pytest.mark.parametrize("bad", ["lcb", 3, lambda: None.__class__, [1]])
def test_a_bad_acquisition_names_the_field(bad):
    with pytest.raises(ValueError, match="acquisition"):
        jbo.Optimizer(SPACE, acquisition=bad)


def test_an_unimportable_acquisition_is_passed_again_on_resume(tmp_path):
    scale = 2.0
    path = tmp_path / "run.jsonl"
    # The initial design only (n_init = 4: a lambda is a program of its own to compile): what is tested is the
    # journal's record of the acquisition; test_an_acquisition_function_runs_in_every_driver_and_resumes runs one.
    opt = ask_tell(acquisition=lambda mean, var, best: -(mean - scale * jnp.sqrt(var)), budget=4, journal=path)
    with pytest.raises(ValueError, match="pass it again"):
        jbo.Optimizer.resume(path)
    again = jbo.Optimizer.resume(path, acquisition=opt.settings.acquisition.fn)
    assert again.n_observed == 4
    with pytest.raises(ValueError, match="acquisition"):
        jbo.Optimizer.resume(path, acquisition=lower_confidence_bound)


def test_a_mixture_draws_its_options_with_their_weights():
    mixture = acquisition.Mixture(("ei", "ucb", "pi"), weights=(2, 1, 1))
    assert mixture.probabilities == (0.5, 0.25, 0.25) and mixture.name == "mixture(ei|ucb|pi)"
    draws = np.asarray(jax.vmap(mixture.draw)(jax.random.split(jax.random.key(0), 4000)))
    frequencies = np.bincount(draws, minlength=3) / draws.size
    np.testing.assert_allclose(frequencies, mixture.probabilities, atol=0.03)  # 4 standard errors at 4 000 draws
    assert not acquisition.is_pointwise(mixture)  # it picks its option itself: no arm of a Choice
    for bad in (dict(options=("ei", "thompson")), dict(options=("ei", "ucb"), weights=(1.0,)),
                dict(options=("ei", "ucb"), weights=(1.0, 0.0)), dict(options=("ei", "ucb"), weights=(1.0, "a"))):
        with pytest.raises(ValueError, match="acquisition"):
            acquisition.Mixture(**bad)
    with pytest.raises(ValueError, match="acquisition"):
        acquisition.Choice(("ei", mixture))


def test_a_mixture_runs_its_drawn_option_in_every_driver_and_resumes(tmp_path):
    # A mixture of one option is that option; weights that all but exclude UCB are EI (the draws of a
    # 1e-12 weight come up once in 10^12 suggestions).
    assert_same_points(points(ask_tell(acquisition=acquisition.Mixture(("ucb",)), budget=6)),
                       points(ask_tell(acquisition="ucb", budget=6)))
    path = tmp_path / "run.jsonl"
    almost_ei = acquisition.Mixture(("ei", "ucb"), weights=(1.0, 1e-12))
    opt = ask_tell(acquisition=almost_ei, budget=6, journal=path)
    assert_same_points(points(opt), points(ask_tell(acquisition="ei", budget=6)))
    resumed = jbo.Optimizer.resume(path)
    assert resumed.settings.acquisition == almost_ei
    assert_same_suggestion(resumed.ask(size=8), opt.ask(size=8))
    # in a study: its own program beside the arms of a Choice; each model step reports the option it drew
    mixture = acquisition.Mixture(("ei", "ucb"))
    result = jbo.study(PROBLEM.evaluate, SPACE, 7, [1],
                       {"ei": dict(FAST, acquisition="ei"), "mixture": dict(FAST, acquisition=mixture)})
    option = result.info["acquisition_option"]
    assert np.all(np.isnan(option[0])) and set(option[1, 0, 4:].tolist()) <= {0, 1}
    assert np.all(option[1, 0, :4] == -1)  # the initial design: no model step
    np.testing.assert_allclose(result.values[0, 0], [h["value"] for h in ask_tell(acquisition="ei", budget=7).history],
                               rtol=1e-9)


def test_a_model_names_the_acquisition_its_runs_default_to():
    @dataclasses.dataclass(frozen=True)
    class Exploring(jbo.models.GP):
        def default_acquisition(self):
            return acquisition.Mixture(("ei", "ucb"))

    assert loop.Settings(Exploring()).acquisition == acquisition.Mixture(("ei", "ucb"))
    assert loop.Settings(Exploring(), acquisition="pi").acquisition == "pi"
    gp = acquisition.ConstraintAware("ucb", "ei")
    assert loop.Settings("gp").acquisition == gp == jbo.Optimizer(SPACE).settings.acquisition
    assert loop.Settings("tree").acquisition == "ei" == loop.Settings("matern").acquisition


def test_the_gp_default_is_ucb_and_ei_once_the_run_models_feasibility():
    default, ucb = ask_tell(budget=6), ask_tell(budget=6, acquisition="ucb")
    assert points(default) == points(ucb) != points(ask_tell(budget=6, acquisition="ei"))
    told = [(h["config"], h["value"]) for h in default.history]
    runs = [jbo.Optimizer(SPACE, seed=1, **FAST), jbo.Optimizer(SPACE, seed=1, acquisition="ei", **FAST)]
    for opt in runs:
        for config, value in told:
            opt.tell(config, value)
        opt.tell(told[0][0] | {"x1": 0.0}, None, feasible=False)  # from now on the runs model feasibility
    for _ in range(2):  # the default's suggestions are constrained EI's (UCB would raise: no product with P)
        a, b = (opt.ask(size=8) for opt in runs)
        assert_same_suggestion(a, b)
        for opt in runs:
            opt.tell(a, PROBLEM.evaluate(a))


def test_a_constraint_aware_acquisition_is_checked_recorded_and_resumed(tmp_path):
    with pytest.raises(ValueError, match="acquisition: ConstraintAware.*log"):
        acquisition.ConstraintAware("ei", "ucb")
    with pytest.raises(ValueError, match="acquisition"):
        acquisition.ConstraintAware(acquisition.ConstraintAware("ucb"), "ei")
    with pytest.raises(ValueError, match="acquisition"):
        acquisition.Choice(("ei", acquisition.ConstraintAware("ucb")))
    assert acquisition.ConstraintAware("ucb", acquisition.Mixture(("ucb", "pi"))).constrained.log_options() == (1,)
    chosen = acquisition.ConstraintAware(lower_confidence_bound, "pi")
    path = str(tmp_path / "journal.jsonl")
    opt = ask_tell(budget=6, acquisition=chosen, journal=path)
    assert_same_points(points(opt), points(ask_tell(budget=6, acquisition=lower_confidence_bound)))
    resumed = jbo.Optimizer.resume(path)
    assert resumed.settings.acquisition == chosen
    assert cli._acquisition_name(records.to_record(acquisition.ConstraintAware("ucb"))) == "ucb (ei under constraints)"
    # UCB's maximum moves more than EI's with the last digits of a cold and a warm fit
    assert_same_suggestion(resumed.ask(size=8), opt.ask(size=8), rtol=1e-4)


def test_a_study_runs_default_and_named_acquisitions_in_one_program():
    groups = studies.plan(SPACE, 10, {"default": dict(FAST), "ei": dict(FAST, acquisition="ei"),
                                      "constraint": dict(FAST, failures="constraint")})
    assert [g.names for g in groups] == [("default", "ei"), ("constraint",)]
    assert groups[0].settings.acquisition == acquisition.Choice(("ucb", "ei"))
    assert groups[1].settings.acquisition == "ei"  # its runs model feasibility: the default's EI


def test_a_constrained_mixture_draws_among_its_log_scored_options():
    opt = ask_tell(acquisition=acquisition.Mixture(("ucb", "ei")), budget=5)
    opt.tell(opt.ask(size=8), None, feasible=False)  # from now on the run models feasibility
    for _ in range(3):
        opt.tell(config := opt.ask(size=8), PROBLEM.evaluate(config))
        assert opt.last_info["acquisition_option"] == 1  # EI: UCB has no product with P[feasible]
    only_ucb = ask_tell(acquisition=acquisition.Mixture(("ucb",)), budget=5)
    only_ucb.tell(only_ucb.ask(size=8), None, feasible=False)
    with pytest.raises(ValueError, match="log"):
        only_ucb.ask(size=8)


# ----------------------------------------------------------------------------- surrogates


def test_any_surrogate_is_a_model():
    exact = jbo.surrogates.exact_gp(kernels.Matern52())
    model = jbo.models.SurrogateModel(surrogate=exact)
    # the exact GP as a surrogate of one's own is the GP model (MAP: the same maths and search; a surrogate's
    # targets are unwarped and its acquisition EI unless the run says otherwise, the GP's Yeo-Johnson and UCB)
    assert (points(ask_tell(model=model.replace(inference="map")))
            == points(ask_tell(model="gp", output_warping="none", acquisition="ei")))
    assert (points(ask_tell(model=model.replace(inference="map"), output_warping="yeo-johnson", acquisition="ucb"))
            == points(ask_tell(model="gp")))
    with pytest.raises(ValueError, match="surrogate"):
        jbo.models.SurrogateModel()
    with pytest.raises(ValueError, match="predict"):
        jbo.models.SurrogateModel(surrogate=object())
    with pytest.raises(ValueError, match="hashable"):
        jbo.models.SurrogateModel(surrogate=exact._replace(name=["unhashable"]))


def test_a_surrogate_without_fantasize_refuses_pending_points():
    exact = jbo.surrogates.exact_gp(kernels.Matern52())
    model = jbo.models.SurrogateModel(surrogate=exact._replace(fantasize=None), inference="map")
    data = pad_data(np.random.default_rng(0).random((5, 2)), np.arange(5.0), size=8)
    inputs = Inputs(data, Pending(data.x[:1], jnp.ones(1, bool)), data.x, jnp.zeros(()), jnp.asarray(True),
                    jnp.asarray(2.0))
    step = functools.partial(model.step, SPACE, loop.Settings(model).acquisition_config)
    state = jax.eval_shape(lambda key: model.init(SPACE, jnp.float64, key), jax.random.key(0))  # (no compiling)
    with pytest.raises(ValueError, match="cannot condition on pending points"):  # raised while tracing
        jax.eval_shape(step, state, inputs, jax.random.key(1))


# ----------------------------------------------------------------------------- models


@dataclasses.dataclass(frozen=True)
class Centroid(jbo.models.ModelConfig):
    """Suggests the mean of the best observations, jittered (a model of one's own for the tests).

    Attributes:
      keep: how many of the best observations to average.
      jitter: standard deviation of the jitter.
    """

    keep: int = 3
    jitter: float = 0.05

    def init(self, space, dtype, key):
        return jnp.zeros((), dtype)

    def step(self, space, acquisition, state, inputs, key):
        data = inputs.data
        order = jnp.argsort(jnp.where(data.mask, data.y, jnp.inf))[: self.keep]
        x = jnp.mean(data.x[order], axis=0) + self.jitter * jax.random.normal(key, data.x.shape[-1:], data.x.dtype)
        return jnp.clip(x, 0.0, 1.0), state + 1, {"steps": state + 1}


def test_a_batch_never_repeats_a_pending_point():
    """A model that ignores pending points (the centroid of the best, no jitter) would suggest one point for the
    whole batch; the loop replaces each repeat by a uniform point of the box."""
    opt = jbo.Optimizer(SPACE, seed=2, model=Centroid(keep=3, jitter=0.0), **LOOP)
    for _ in range(LOOP["n_init"]):
        config = opt.ask()
        opt.tell(config, PROBLEM.evaluate(config))
    batch = opt.ask(n=3)
    points = np.asarray(SPACE.encode_many(batch))
    assert len({tuple(p) for p in np.round(points, 12)}) == 3
    assert opt.last_info["repeated_pending"] == 1
    assert np.all((points >= 0) & (points <= 1))


def test_a_model_class_runs_in_every_driver_and_resumes(tmp_path):
    path = tmp_path / "run.jsonl"
    opt = ask_tell(model=Centroid(keep=2), journal=path)  # (the loop's options only: Centroid has no inference)
    assert opt.last_info["steps"] == 3.0  # its state went through the loop
    header = json.loads(path.read_text().splitlines()[0])
    assert header["settings"]["model"][records.TYPE] == "test_bring_your_own:Centroid"
    resumed = jbo.Optimizer.resume(path)
    assert resumed.settings.model == Centroid(keep=2)
    assert_same_suggestion(resumed.ask(), opt.ask())
    many = jbo.minimize_many(PROBLEM.evaluate, SPACE, budget=7, seeds=[1], model=Centroid(keep=2), **LOOP)
    np.testing.assert_allclose(many.values[0], [h["value"] for h in ask_tell(model=Centroid(keep=2)).history], rtol=1e-9)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['kernel'\]"):
        jbo.Optimizer(SPACE, model=Centroid(), kernel="se")


def test_the_contract_has_a_default_for_every_hook():
    @dataclasses.dataclass(frozen=True)
    class Bare(jbo.models.ModelConfig):
        size: int = 2

    bare = Bare()
    assert bare.name == "bare" and bare.default_design() == "sobol" and bare.uses_initial_design
    assert bare.default_maximize() == MaximizeConfig()
    assert bare.init(SPACE, jnp.float64, None) == () and bare.prepare((), None, None, True) == (bare, ())
    assert bare.members == 1 and [o.flag for o in Bare.cli_options()] == ["--size"]
    with pytest.raises(TypeError, match="has no step"):
        bare.step(SPACE, None, (), None, None)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['sizes'\]"):
        bare.replace(sizes=3)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['sizes'\]"):
        models.create(bare, sizes=3)


def test_register_adds_a_name_and_nothing_else():
    try:
        models.register("centroid", Centroid, keep=4)
        assert models.create("centroid") == Centroid(keep=4)
        assert "centroid" in models.names() and "centroid" not in models.NAMES
        with pytest.raises(ValueError, match="jbo's"):
            models.register("gp", Centroid)
        with pytest.raises(ValueError, match="option"):
            models.register("centroid2", Centroid, kernel="se")
    finally:
        models.SHORTCUTS.pop("centroid", None)


def test_a_model_defined_where_it_cannot_be_imported_is_passed_again(tmp_path):
    @dataclasses.dataclass(frozen=True)
    class Local(Centroid):
        pass

    path = tmp_path / "run.jsonl"
    ask_tell(model=Local(), journal=path, budget=5)
    with pytest.raises(ValueError, match="pass model"):
        jbo.Optimizer.resume(path)
    assert jbo.Optimizer.resume(path, model=Local()).n_observed == 5


def test_options_a_config_lacks_are_named_for_names_and_objects():
    for model in ("gp", jbo.models.GP(), jbo.models.GP):
        with pytest.raises(ValueError, match=r"unknown option\(s\) \['units'\]"):
            loop.Settings.create(model, units="objective")


def test_records_round_trip_jbo_and_user_pieces():
    pieces = [kernels.Matern52() * kernels.Periodic() + 2.0 * kernels.Linear(ard=False),
              acquisition.Pointwise(lower_confidence_bound), Centroid(keep=5), lower_confidence_bound]
    for piece in pieces:
        assert records.from_record(json.loads(json.dumps(records.to_record(piece)))) == piece
