"""The ask/tell loop end to end: compilation per bucket, determinism, robustness, batches, journal.

Everything uses the GP with MAP inference, a 2-d Branin space and a small acquisition search, with
the same settings everywhere so the compiled programs are shared between tests (and with
tests/test_core_inference.py, which calls ``infer`` on the loop's surrogate the same way). Runs of
``jbo.minimize`` have budgets of 9 to 16, which it pads to 16 observations, as the Optimizer pads up to
16: one program for most of the module.
"""

from __future__ import annotations

import json
import math
import os
import signal
import textwrap

import numpy as np
import pytest

import jbo
from jbo import journal as journal_io
from jbo import cache, loop
from jbo.data import bucket_size

MAXIMIZE = dict(num_anchors=128, num_local=16, top_k=4, num_steps=20)
COMMON = dict(model="gp", inference="map", n_init=4, maximize=MAXIMIZE)


def branin(config):
    x1, x2 = config["x1"], config["x2"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


@pytest.fixture(scope="module")
def space():
    return jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 15.0)})


def assert_valid(space, config):
    assert space.validate(config) == config
    assert -5.0 <= config["x1"] <= 10.0 and 0.0 <= config["x2"] <= 15.0
    assert all(math.isfinite(v) for v in config.values())


def random_configs(n, seed):
    rng = np.random.default_rng(seed)
    return [{"x1": float(rng.uniform(-5, 10)), "x2": float(rng.uniform(0, 15))} for _ in range(n)]


# ============================================================================ compilation per bucket


def test_suggestion_traced_once_per_bucket(space, monkeypatch):
    from jbo.models import sampled

    traces = []
    original = sampled.maximize

    def counting_maximize(score_fn, anchors, *args, **kwargs):  # runs only while the step is traced
        traces.append(anchors.shape)
        return original(score_fn, anchors, *args, **kwargs)

    monkeypatch.setattr(sampled, "maximize", counting_maximize)
    # Every bucket a fresh trace, whatever ran before: no compiled program is kept. The settings are the
    # module's, so the programs compiled here serve the tests after this one.
    cache.release_programs()
    opt = jbo.Optimizer(space, seed=3, **COMMON)
    compiled_before = loop.compiled_suggestion.__wrapped__.stats["compiled"]
    for _ in range(4):  # the Sobol design
        c = opt.ask()
        opt.tell(c, branin(c))
    extra = iter(random_configs(40, seed=0))
    buckets = []
    for target in (4, 5, 17, 18):  # observation counts at which to ask: buckets 16 and 24
        while opt.n_observed < target:
            c = next(extra)
            opt.tell(c, branin(c))
        c = opt.ask()
        assert opt.last_info["phase"] == "model"
        assert_valid(space, c)
        buckets.append(opt.last_info["n_pad"])
        opt.tell(c, branin(c))
    assert buckets == [bucket_size(n) for n in (4, 5, 17, 18)]
    assert len(set(buckets)) == 2
    assert len(traces) == len(set(buckets)), (traces, buckets)
    assert loop.compiled_suggestion.__wrapped__.stats["compiled"] - compiled_before == len(set(buckets))


def test_bucket_count_for_a_200_iteration_run():
    assert len({bucket_size(n) for n in range(200)}) <= 10
    assert len({bucket_size(n) for n in range(2, 201)}) <= 10


# ============================================================================ determinism


def _run_ask_tell(space, seed, steps=6):
    opt = jbo.Optimizer(space, seed=seed, **COMMON)
    configs = []
    for _ in range(steps):
        c = opt.ask()
        configs.append(c)
        opt.tell(c, branin(c))
    return configs, opt


def test_same_seed_same_suggestions_different_seed_differs(space):
    a, opt_a = _run_ask_tell(space, seed=0)
    b, _ = _run_ask_tell(space, seed=0)
    assert opt_a.last_info["phase"] == "model"  # the comparison covers model-based suggestions
    assert a == b  # exact equality, floats included
    c, _ = _run_ask_tell(space, seed=1, steps=2)
    assert c[0] != a[0] and c[1] != a[1]


# ============================================================================ robustness


def test_failures_are_recorded_and_minimize_reaches_budget(space):
    calls = []

    def flaky(config):
        calls.append(config)
        i = len(calls)
        if i == 2:
            return float("nan")
        if i == 5:
            return float("inf")
        if i == 6:
            raise RuntimeError("boom")
        return branin(config)

    res = jbo.minimize(flaky, space, budget=9, seed=2, **COMMON)
    assert len(res.history) == 9 and len(calls) == 9
    statuses = [h["status"] for h in res.history]
    assert statuses == ["ok", "failed", "ok", "ok", "failed", "failed", "ok", "ok", "ok"]
    for i in (1, 4, 5):
        assert res.history[i]["value"] is None
        assert isinstance(res.history[i]["error"], str) and res.history[i]["error"]
    assert "nan" in res.history[1]["error"]
    assert "inf" in res.history[4]["error"]
    assert "RuntimeError" in res.history[5]["error"] and "boom" in res.history[5]["error"]
    for h in res.history:
        if h["status"] == "ok":
            assert h["error"] is None and math.isfinite(h["value"])
        assert_valid(space, h["config"])
    ok_values = [h["value"] for h in res.history if h["status"] == "ok"]
    assert res.best_value == min(ok_values)
    assert np.isnan(res.values[1]) and np.isnan(res.values[5])


def test_tell_non_finite_and_none_are_failures(space):
    opt = jbo.Optimizer(space, seed=0, **COMMON)
    c = {"x1": 1.0, "x2": 2.0}
    opt.tell(c, float("nan"))
    opt.tell(c, float("-inf"))
    opt.tell(c, None, error="crashed")
    assert [h["status"] for h in opt.history] == ["failed"] * 3
    assert opt.history[2]["error"] == "crashed"
    assert all(h["error"] for h in opt.history)
    assert opt.best is None


@pytest.mark.parametrize(
    "config, name",
    [
        ({"x1": 11.0, "x2": 1.0}, "x1"),
        ({"x1": 1.0, "x2": -0.5}, "x2"),
        ({"x1": 1.0, "x3": 1.0}, "x3"),
        ({"x1": 1.0, "xx2": 1.0}, "xx2"),
        ({"x1": 1.0}, "x2"),
        ({"x1": float("nan"), "x2": 1.0}, "x1"),
    ],
)
def test_tell_invalid_config_raises_naming_parameter(space, config, name):
    opt = jbo.Optimizer(space, seed=0, **COMMON)
    with pytest.raises(ValueError, match=repr(name)):
        opt.tell(config, 1.0)
    assert opt.n_observed == 0


def test_invalid_spaces_raise():
    with pytest.raises(ValueError):
        jbo.Space({})
    with pytest.raises(ValueError):
        jbo.Real(1.0, 1.0)
    with pytest.raises(ValueError):
        jbo.Real(2.0, 1.0)
    with pytest.raises(ValueError):
        jbo.Integer(5, 2)


@pytest.mark.parametrize(
    "field, bad, valid",
    [
        ("model", "gpp", ["gp", "random"]),
        ("inference", "mcmc", ["slice", "nuts", "map"]),
        ("acquisition", "eii", ["ei", "logei", "pi", "ucb", "thompson"]),
    ],
)
def test_unknown_names_raise_listing_choices(space, field, bad, valid):
    options = dict(COMMON, **{field: bad})
    with pytest.raises(ValueError) as err:
        jbo.Optimizer(space, **options)
    message = str(err.value)
    assert repr(bad) in message
    for choice in valid:
        assert repr(choice) in message, (choice, message)
    calls = []
    with pytest.raises(ValueError):
        jbo.minimize(lambda c: calls.append(c) or 0.0, space, budget=3, **options)
    assert calls == []


def _ask_told_design(space, opt, value_fn):
    for _ in range(opt.settings.n_init):
        c = opt.ask()
        opt.tell(c, value_fn(c))


def test_duplicates_and_constant_values_do_not_break_the_fit(space):
    opt = jbo.Optimizer(space, seed=4, **COMMON)
    _ask_told_design(space, opt, lambda c: 1.0)
    dup = opt.history[0]["config"]
    for _ in range(4):  # the same config told 5 times in all, every value the same
        opt.tell(dup, 1.0)
    c = opt.ask()
    assert opt.last_info["phase"] == "model"
    assert_valid(space, c)
    assert np.isfinite(opt.last_info["score"])
    # duplicates with different values (pure noise)
    for v in (0.0, 2.0, 5.0, -1.0, 3.0):
        opt.tell(dup, v)
    c = opt.ask()
    assert_valid(space, c)
    assert np.isfinite(opt.last_info["score"])


def test_constant_objective_minimize(space):
    res = jbo.minimize(lambda c: 7.0, space, budget=9, seed=5, **COMMON)
    assert len(res.history) == 9 and all(h["status"] == "ok" for h in res.history)
    assert res.best_value == 7.0
    for h in res.history:
        assert_valid(space, h["config"])


# ============================================================================ batches


def test_batch_of_four_distinct_valid_configs(space):
    opt = jbo.Optimizer(space, seed=6, **COMMON)
    _ask_told_design(space, opt, branin)
    batch = opt.ask(n=4)
    assert isinstance(batch, list) and len(batch) == 4
    assert opt.last_info["phase"] == "model"
    for c in batch:
        assert_valid(space, c)
    assert len({(c["x1"], c["x2"]) for c in batch}) == 4
    # the points are spread out, not numerically the same point
    u = np.array([[(c["x1"] + 5) / 15, c["x2"] / 15] for c in batch])
    dist = np.sqrt(((u[:, None] - u[None]) ** 2).sum(-1))
    assert np.min(dist[np.triu_indices(4, 1)]) > 1e-3
    assert len(opt.state.pending) == 4
    for c in batch:
        opt.tell(c, branin(c))
    assert opt.n_observed == 8 and len(opt.state.pending) == 0
    with pytest.raises(ValueError):
        opt.ask(n=0)


# ============================================================================ journal


def _read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines() if line.strip()]


def test_journal_records_every_observation(space, tmp_path):
    path = tmp_path / "run.jsonl"
    res = jbo.minimize(lambda c: branin(c) if c["x1"] < 9 else float("nan"), space, budget=9, seed=7,
                       journal=path, **COMMON)
    lines = _read_lines(path)
    assert lines[0]["type"] == "settings"
    obs = [r for r in lines if r.get("type") == "observation"]
    assert len(obs) == 9 == len(lines) - 1
    for record, h in zip(obs, res.history):
        for key in ("config", "value", "status", "error"):
            assert key in record, (key, record)
        assert record["config"] == h["config"] and record["value"] == h["value"]
        assert record["status"] in ("ok", "failed")
        assert (record["status"] == "ok") == (record["value"] is not None) == (record["error"] is None)
    with pytest.raises(FileExistsError):  # an existing journal is never silently overwritten
        jbo.Optimizer(space, journal=path, **COMMON)


def test_resume_ignores_half_written_line_and_continues_to_budget(space, tmp_path):
    path = tmp_path / "run.jsonl"
    calls = []

    def f(c):
        calls.append(c)
        return branin(c)

    first = jbo.minimize(f, space, budget=3, seed=8, journal=path, **COMMON)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type": "observation", "config": {"x1": 0.5, "x2"')  # a crash mid-write
    header, observations = journal_io.read(path)
    assert len(observations) == 3
    calls.clear()
    resumed = jbo.minimize(f, space, budget=9, journal=path, resume=True)
    assert len(resumed.history) == 9 and len(calls) == 6  # nothing repeated, nothing lost
    assert resumed.history[:3] == first.history
    lines = _read_lines(path)  # every line parses: the partial one was dropped
    assert [r["type"] for r in lines] == ["settings"] + ["observation"] * 9
    assert [r["config"] for r in lines[1:]] == [h["config"] for h in resumed.history]
    # The interruption fell inside the initial design, where the loop state is fully determined by
    # the observations: the resumed run makes exactly the uninterrupted run's suggestions.
    straight = jbo.minimize(branin, space, budget=9, seed=8, **COMMON)
    assert [h["config"] for h in straight.history] == [h["config"] for h in resumed.history]
    assert [h["value"] for h in straight.history] == [h["value"] for h in resumed.history]


def test_resume_keeps_a_complete_last_line_without_newline(space, tmp_path):
    """A crash between a record's text and its newline: ``journal.read`` keeps that record (it
    parses), so resuming must keep it in the file too, or the next resume loses an evaluation."""
    path = tmp_path / "run.jsonl"
    jbo.minimize(branin, space, budget=3, seed=9, journal=path, **COMMON)
    data = path.read_bytes()
    assert data.endswith(b"\n")
    path.write_bytes(data[:-1])
    opt = jbo.Optimizer.resume(path)
    assert opt.n_observed == 3
    opt.close()
    _, observations = journal_io.read(path)
    assert len(observations) == opt.n_observed, "the resumed optimizer dropped a replayed record from its journal"


SIGKILL_SCRIPT = textwrap.dedent(
    """
    import math, sys, time
    import jbo

    def branin(config):
        x1, x2 = config["x1"], config["x2"]
        b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
        return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10

    def slow(config):
        time.sleep(0.2)
        return branin(config)

    space = jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 15.0)})
    jbo.minimize(slow, space, budget=12, seed=11, journal=sys.argv[1], model="gp", inference="map",
                 n_init=4, maximize=%r)
    """
) % (MAXIMIZE,)


def _observation_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for line in text.split("\n")[:-1]:  # complete lines only
        record = json.loads(line)
        if record.get("type") == "observation":
            out.append(record)
    return out


def test_sigkill_then_resume_loses_nothing(space, tmp_path, sigkill_when):
    path = str(tmp_path / "killed.jsonl")
    status = sigkill_when(SIGKILL_SCRIPT, path, ready=lambda: len(_observation_lines(path)) >= 4, timeout=120)
    assert status == -signal.SIGKILL
    before = _observation_lines(path)
    assert 4 <= len(before) < 12
    calls = []

    def f(c):
        calls.append(c)
        return branin(c)

    res = jbo.minimize(f, space, journal=path, resume=True, budget=12)
    assert len(res.history) == 12
    assert len(calls) == 12 - len(before)
    for record, h in zip(before, res.history):
        assert h["config"] == record["config"] and h["value"] == record["value"]
        assert h["status"] == record["status"] == "ok"
    assert [r["config"] for r in _observation_lines(path)] == [h["config"] for h in res.history]
    # the resumed evaluations are new points, not repeats of the earlier ones
    seen = {tuple(r["config"].values()) for r in before}
    assert all(tuple(c.values()) not in seen for c in calls)


# ============================================================================ warm starts and resuming


def test_told_observations_count_towards_the_initial_design(space):
    """Data told before the first ask shorten the initial design; a dozen of them (n_init = 4) skip it."""
    warm = jbo.Optimizer(space, seed=0, **COMMON)
    for config in random_configs(12, seed=1):
        warm.tell(config, branin(config))
    assert_valid(space, warm.ask())
    assert warm.last_info["phase"] == "model"
    opt = jbo.Optimizer(space, seed=0, **COMMON)  # n_init = 4
    for config in random_configs(2, seed=1):
        opt.tell(config, float("nan") if config["x1"] > 100 else branin(config))
    phases = []
    for _ in range(3):  # pending points count too
        opt.ask()
        phases.append(opt.last_info["phase"])
    assert phases == ["initial", "initial", "model"]


def test_centre_design_starts_at_the_centre_in_both_drivers(space):
    """design="centre": the first evaluation is the box's centre, the others the Sobol design's first
    points; minimize_many evaluates the same design."""
    from jbo.benchmarks import get_problem

    sobol = jbo.Optimizer(space, seed=3, **COMMON).ask(n=4)
    centred = jbo.Optimizer(space, seed=3, design="centre", **COMMON).ask(n=4)
    assert centred[0] == {"x1": 2.5, "x2": 7.5}
    assert centred[1:] == sobol[:3]
    many = jbo.minimize_many(get_problem("branin").evaluate, space, budget=4, seeds=[3], design="centre", **COMMON)
    np.testing.assert_allclose(many.values[0], [branin(c) for c in centred], rtol=1e-9)
    with pytest.raises(ValueError, match="design"):
        jbo.Optimizer(space, design="middle", **COMMON)


def test_resume_with_another_space_or_settings_names_them(space, tmp_path):
    path = tmp_path / "run.jsonl"
    jbo.minimize(branin, space, budget=9, journal=path, seed=1, **COMMON)
    renamed = jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x3": jbo.Real(0.0, 15.0)})
    with pytest.raises(ValueError, match=r"\['x2', 'x3'\]"):
        jbo.minimize(branin, renamed, budget=10, journal=path, resume=True)
    wider = jbo.Space({"x1": jbo.Real(-5.0, 10.0), "x2": jbo.Real(0.0, 20.0)})
    with pytest.raises(ValueError, match=r"\['x2'\]"):
        jbo.minimize(branin, wider, budget=10, journal=path, resume=True)
    with pytest.raises(ValueError, match=r"\['inference'\].*'slice' \(journal: 'map'\)"):
        jbo.minimize(branin, space, budget=10, journal=path, resume=True, inference="slice")
    with pytest.raises(ValueError, match=r"\['seed'\]"):
        jbo.minimize(branin, space, budget=10, journal=path, resume=True, seed=2)
    with pytest.raises(ValueError, match=r"\['model'\]"):
        jbo.minimize(branin, space, budget=10, journal=path, resume=True, model="random")
    with pytest.raises(ValueError, match="n_init"):
        jbo.Optimizer.resume(path, n_init=7)
    assert len(journal_io.read(path)[1]) == 9  # nothing was appended by the refused resumes
    # The journal's own space and settings, or none, keep working.
    res = jbo.minimize(branin, space, budget=10, journal=path, resume=True, seed=1, **COMMON)
    assert len(res.history) == 10
    res = jbo.minimize(branin, None, budget=11, journal=path, resume=True)
    assert len(res.history) == 11


@pytest.mark.parametrize("name, model, n_networks", [("gp", "gp", None),
                                                      pytest.param("ensemble", "ensemble", 2, marks=pytest.mark.slow)])
def test_journals_written_before_model_configs_resume(tmp_path, name, model, n_networks):
    """Journals of the flat settings format (written by jbo before models had configs) still resume."""
    import shutil

    path = tmp_path / "old.jsonl"
    shutil.copy(os.path.join(os.path.dirname(__file__), "data", f"journal-v0-{name}.jsonl"), path)
    header, observations = journal_io.read(path)
    opt = jbo.Optimizer.resume(path)
    assert opt.settings.model.name == model and opt.settings.model.inference == "map"
    assert opt.settings.seed == header["settings"]["seed"] and opt.settings.n_init == 4
    if n_networks:
        assert opt.settings.model.n_networks == n_networks and opt.settings.model.aggregator == "median"
        assert opt.settings.model.network.hidden == (8, 8) and opt.settings.maximize.num_steps == 0
    assert opt.n_observed == len(observations)
    config = opt.ask()
    assert opt.last_info["phase"] == "model"
    opt.tell(config, branin(config))
    opt.close()
    again = jbo.Optimizer.resume(path)  # now a journal with old settings and new observation records
    assert again.n_observed == len(observations) + 1


def test_a_padded_size_smaller_than_the_data_is_refused(space):
    opt = jbo.Optimizer(space, seed=0, **COMMON)
    for config in random_configs(6, seed=2):
        opt.tell(config, branin(config))
    with pytest.raises(ValueError, match=r"size must be an integer >= the number of observations \(6\)"):
        opt.ask(size=4)
    assert opt.n_observed == 6 and len(opt.state.pending) == 0  # nothing changed


def test_observe_takes_the_pending_row_it_is_told():
    """Two pending rows equal on the active column (the inactive one holds fill values): a caller
    that knows which returned (a parallel run, by id) names its row, and that row leaves pending."""
    state = loop.LoopState(np.zeros((0, 2)), np.zeros(0), np.array([[0.3, 0.1], [0.3, 0.9]]), None, False, 2)
    active = np.array([1.0, 0.0])
    first = loop.observe(state, np.array([0.3, 0.5]), 1.0, active=active)
    assert first.x.tolist() == [[0.3, 0.1]] and first.pending.tolist() == [[0.3, 0.9]]
    second = loop.observe(state, np.array([0.3, 0.9]), 2.0, active=active, index=1)
    assert second.x.tolist() == [[0.3, 0.9]] and second.pending.tolist() == [[0.3, 0.1]]
    assert second.y.tolist() == [2.0]
    with pytest.raises(IndexError, match="pending index 2"):
        loop.observe(state, np.array([0.3, 0.9]), 2.0, index=2)
