"""jbo's compiled programs (:class:`jbo.cache.Program`): held in a bounded number per process, shared by spaces of
one structure, and stored whole: a fresh process loads a suggestion without tracing it, and gets the suggestion an
uncached process computes."""

import dataclasses
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import jbo
from jbo import cache
from jbo.loop import Settings
from jbo.spaces import Real, Space

MAXIMIZE = dict(num_anchors=64, num_local=8, top_k=2, num_steps=5)
# Programs are stored on a CPU backend only; on another they are compiled and held, never written
# (test_another_backend_stores_nothing).
STORES_PROGRAMS = pytest.mark.skipif(jax.default_backend() != "cpu",
                                     reason="jbo stores compiled programs on a CPU backend only")

RUN = r"""
import json, os, sys
import jbo
from jbo import loop
from jbo.benchmarks import get_problem
problem = get_problem("branin")
opt = jbo.Optimizer(problem.space(), seed=3, n_init=4, inference="map", maximize=%r)
points = []
for _ in range(7):
    config = opt.ask(size=8)
    points.append(config)
    opt.tell(config, float(problem.evaluate(config)))
print(json.dumps({"points": points, "stats": dict(loop.compiled_suggestion.__wrapped__.stats)}))
""" % (MAXIMIZE,)


MODELS = r"""
import json, sys
import jbo
from jbo import loop
from jbo.benchmarks import get_problem
model, name = sys.argv[1], sys.argv[2]
problem = get_problem(name)
options = dict(maximize=dict(num_anchors=128, num_local=8, top_k=2, num_steps=10))
if model not in ("random", "dngo", "ensemble"):
    options.update(num_samples=2, num_burnin=3)
opt = jbo.Optimizer(problem.space(), model=model, seed=1, n_init=3, **options)
points = []
for i in range(8):
    config = opt.ask(size=16)
    points.append(config)
    if i == 5 and model not in ("tree", "independent"):
        opt.tell(config, None, feasible=False)  # the constraint classifier enters the program
    else:
        opt.tell(config, float(problem.evaluate(config)) if i != 5 else None)
points += [opt.ask(size=16), opt.ask(size=16)]  # with pending points
print(json.dumps({"points": points, "stats": dict(loop.compiled_suggestion.__wrapped__.stats)}))
"""


def _run(cache_dir=None, script: str = RUN, *args) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(jbo.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    env.pop("JBO_NO_CACHE", None)
    if cache_dir is None:
        env["JBO_NO_CACHE"] = "1"
    else:
        env["JBO_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@STORES_PROGRAMS
@pytest.mark.slow
def test_a_fresh_process_loads_the_stored_suggestion(tmp_path):
    reference = _run()  # no cache at all: compiled and held in the process
    assert reference["stats"] == {"compiled": 1, "reused": 2}
    first = _run(tmp_path)
    assert first["stats"] == {"compiled": 1, "reused": 2}
    assert len(os.listdir(tmp_path / cache.PROGRAMS)) == 1
    second = _run(tmp_path)
    assert second["stats"] == {"loaded": 1, "reused": 2}  # no tracing, no compilation
    assert first["points"] == reference["points"] == second["points"]
    # A damaged program is deleted and compiled again, and the run is the same.
    (stored,) = os.listdir(tmp_path / cache.PROGRAMS)
    with open(tmp_path / cache.PROGRAMS / stored, "wb") as f:
        f.write(b"not a program")
    third = _run(tmp_path)
    assert third["stats"] == {"compiled": 1, "reused": 2}
    assert third["points"] == reference["points"]


def test_describe_is_canonical_and_refuses_what_it_cannot_describe():
    space = Space({"a": Real(0.0, 1.0), "b": Real(1e-3, 1.0, log=True)})
    same = Space({"a": Real(0.0, 1.0), "b": Real(1e-3, 1.0, log=True)})
    other = Space({"a": Real(0.0, 2.0), "b": Real(1e-3, 1.0, log=True)})
    settings = Settings.create("gp", inference="map").program()
    assert cache.describe([settings, space]) == cache.describe([Settings.create("gp", inference="map").program(), same])
    assert cache.describe(space) != cache.describe(other)
    assert cache.describe(settings) != cache.describe(Settings.create("gp").program())
    with_pi = Settings.create("gp", inference="map", acquisition="pi").program()
    assert cache.describe(settings) != cache.describe(with_pi)

    class Outside:
        pass

    for value in (lambda x: x, Outside(), [1, Outside()]):
        with pytest.raises(cache._Opaque):
            cache.describe(value)

    @dataclasses.dataclass(frozen=True)
    class Mine(jbo.kernels.Stationary):
        def profile(self, params, r2):
            return jnp.exp(-r2)

    # Pieces of one's own are never described (their maths is not jbo's source): a run with them is not
    # stored whole. jbo's own pieces, a kernel expression included, are described by what they are.
    for own in (Settings.create(jbo.models.GP(kernel=Mine())), Settings.create(acquisition=lambda m, v, b: -m),
                Settings.create(jbo.models.SurrogateModel(surrogate=jbo.surrogates.exact_gp(jbo.kernels.Matern52())))):
        with pytest.raises(cache._Opaque):
            cache.describe(own.program())
    sum_kernel = Settings.create(jbo.models.GP(kernel=jbo.kernels.Matern52() + jbo.kernels.Linear())).program()
    assert "jbo.kernels.base.Sum(k1=jbo.kernels.stationary.Matern52" in cache.describe(sum_kernel)
    assert cache.describe(sum_kernel) != cache.describe(Settings.create(jbo.models.GP(
        kernel=jbo.kernels.SquaredExponential() + jbo.kernels.Linear())).program())


@STORES_PROGRAMS
def test_programs_are_keyed_by_shapes_and_static_arguments(monkeypatch, tmp_path):
    """In one process: a new shape or a new static value is a new program, the same ones are reused;
    a static argument that cannot be described is compiled and held, not stored."""
    monkeypatch.setattr(cache, "programs_directory", lambda: str(tmp_path / cache.PROGRAMS))

    def scaled(x, power, factor):
        return jnp.sum(x ** power) * factor

    program = cache.stored(jax.jit(scaled, static_argnames=("power",)), ("power",))
    x = jnp.arange(3.0)
    assert float(program(x, 2, 1.0)) == 5.0
    assert float(program(x, 2, 2.0)) == 10.0  # same shapes: the same program
    assert float(program(jnp.arange(4.0), 2, 1.0)) == 14.0
    assert float(program(x, 3, 1.0)) == 9.0
    assert dict(program.stats) == {"compiled": 3, "reused": 1}
    assert len(os.listdir(tmp_path / cache.PROGRAMS)) == 3
    traced = jax.jit(lambda v: program(v, 2, 1.0))(x)  # under tracing: the jitted function
    assert float(traced) == 5.0 and program.stats["direct"] == 1

    def applied(x, fn):
        return fn(x)

    opaque = cache.stored(jax.jit(applied, static_argnames=("fn",)), ("fn",))
    assert float(opaque(x, jnp.sum)) == 3.0  # a function: no faithful description, not stored
    assert float(opaque(x, jnp.sum)) == 3.0
    assert dict(opaque.stats) == {"compiled": 1, "reused": 1}
    assert len(os.listdir(tmp_path / cache.PROGRAMS)) == 3


def test_another_backend_stores_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(cache, "programs_directory", lambda: str(tmp_path / cache.PROGRAMS))
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    program = cache.stored(jax.jit(lambda x: jnp.sum(x ** 2)))
    assert float(program(jnp.arange(3.0))) == 5.0
    assert dict(program.stats) == {"compiled": 1} and not (tmp_path / cache.PROGRAMS).exists()


def test_programs_held_are_bounded_and_released_ones_come_back(monkeypatch):
    """Past the bound the least recently used program is released (JAX's caches of its function cleared, so
    its executable and memory mappings go); a released program is compiled again when it is needed again."""
    monkeypatch.setattr(cache, "programs_directory", lambda: None)
    before = cache.max_programs()
    cache.release_programs()
    try:
        cache.set_max_programs(2)
        program = cache.held(jax.jit(lambda x, power: jnp.sum(x ** power), static_argnames=("power",)), ("power",))
        x = jnp.arange(3.0)
        assert [float(program(x, p)) for p in (1, 2, 3)] == [3.0, 5.0, 9.0]
        assert cache.held_programs() == 2 and program.stats["released"] == 1
        assert float(program(x, 3)) == 9.0 and program.stats["reused"] == 1  # still held
        assert float(program(x, 1)) == 3.0 and program.stats["compiled"] == 4  # released before: compiled again
        assert cache.held_programs() == 2 and program.stats["released"] == 2
        with pytest.raises(ValueError, match="max_programs"):
            cache.set_max_programs(0)
    finally:
        cache.set_max_programs(before)


def test_the_mapping_guard_reads_the_process():
    count, limit = cache.mappings(), cache.mapping_limit()
    if count is None:
        pytest.skip("no /proc/self/maps on this system")
    assert count > 0 and (limit is None or limit > count)


def test_spaces_of_one_structure_share_every_program(monkeypatch):
    """Runs on spaces that differ in bounds, names, log scales and integer ranges compile nothing after the first,
    and suggest where the first would in the cube."""
    monkeypatch.setattr(cache, "programs_directory", lambda: None)
    from jbo import loop
    from jbo.spaces import Categorical, Integer

    def run(space):
        opt = jbo.Optimizer(space, inference="map", n_init=3, seed=0, maximize=MAXIMIZE)
        rows = []
        for _ in range(5):
            config = opt.ask(size=8)
            rows.append(space.encode(config).tolist())
            opt.tell(config, float(sum(space.encode(config) ** 2)))
        return rows

    first = run(Space({"a": Real(0.0, 1.0), "n": Integer(1, 9), "c": Categorical(["x", "y"])}))
    compiled = loop.compiled_suggestion.__wrapped__.stats["compiled"]
    designs = loop._design.stats["compiled"]
    second = run(Space({"lr": Real(1e-4, 1e-1, log=True), "width": Integer(11, 19), "c": Categorical([3, 5])}))
    run(Space({"x": Real(-5.0, 5.0), "width": Integer(10, 500), "kind": Categorical([True, False])}))
    assert loop.compiled_suggestion.__wrapped__.stats["compiled"] == compiled
    assert loop._design.stats["compiled"] == designs
    import numpy as np

    np.testing.assert_allclose(first, second, rtol=0, atol=1e-12)  # the same cube (log scale: round-off)


def test_prune_deletes_old_programs_of_other_fingerprints_and_unfinished_writes(tmp_path):
    import time

    current = cache.fingerprint()[: cache.FINGERPRINT_CHARS]
    old = time.time() - 8 * 86400
    files = {"mine-old": f"{current}-aaa", "other-recent": "0123456789abcdef-bbb", "other-old": "fedcba9876543210-ccc",
             "partial-old": f".tmp1{cache.PARTIAL}", "partial-recent": f".tmp2{cache.PARTIAL}"}
    for label, name in files.items():
        (tmp_path / name).write_bytes(b"x")
        if label.endswith("old"):
            os.utime(tmp_path / name, (old, old))
    assert sorted(cache.prune(str(tmp_path))) == sorted([files["other-old"], files["partial-old"]])
    assert sorted(os.listdir(tmp_path)) == sorted([files["mine-old"], files["other-recent"], files["partial-recent"]])
    assert cache.prune(str(tmp_path / "missing")) == []


@STORES_PROGRAMS
@pytest.mark.slow
@pytest.mark.parametrize("model, problem", [("gp", "branin"), ("arc", "jenatton_small"), ("tree", "jenatton_small"),
                                            ("independent", "nonlinear_optimizers2"), ("dngo", "branin"),
                                            ("ensemble", "branin"), ("bock", "branin"), ("matern", "branin"),
                                            ("random", "branin")])
def test_every_model_suggests_the_same_points_from_a_stored_program(tmp_path, model, problem):
    """Uncached, compiled and stored, loaded: the same suggestions, with an infeasible evaluation (or a
    failure) and two pending points in the run."""
    reference = _run(None, MODELS, model, problem)
    first = _run(tmp_path, MODELS, model, problem)
    second = _run(tmp_path, MODELS, model, problem)
    assert "loaded" not in first["stats"] and first["stats"]["compiled"] >= 1
    assert "compiled" not in second["stats"] and second["stats"]["loaded"] == first["stats"]["compiled"]
    assert reference["points"] == first["points"] == second["points"]


PIECES = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import jbo
from jbo import loop
import pieces
from jbo.benchmarks import get_problem
problem = get_problem("branin")
opt = jbo.Optimizer(problem.space(), seed=2, n_init=3, inference="map", maximize=%r, **pieces.OPTIONS)
points = []
for _ in range(5):
    config = opt.ask(size=8)
    points.append(config)
    opt.tell(config, float(problem.evaluate(config)))
print(json.dumps({"points": points, "stats": dict(loop.compiled_suggestion.__wrapped__.stats)}))
""" % (MAXIMIZE,)

# The same names in a user's module, two versions of their maths: a composition of jbo's kernels, whose
# programs are stored whole, keyed by the kernel expression. (Pieces defined outside jbo are never stored
# whole: test_describe_is_canonical_and_refuses_what_it_cannot_describe.)
TEMPLATE = "import jbo\nOPTIONS = dict(model=jbo.models.GP(kernel=jbo.kernels.{} + jbo.kernels.Linear()))\n"


@STORES_PROGRAMS
def test_a_stored_program_is_never_served_for_edited_maths(tmp_path):
    """Two processes share a cache and the names of a user's pieces, but not their maths: the second compiles
    its own program (suggesting what its maths suggest, not what the first stored). A process with unchanged
    maths loads the stored program without tracing, and suggests the same points."""
    module = tmp_path / "user"
    module.mkdir()
    (module / "pieces.py").write_text(TEMPLATE.format("SquaredExponential()"))
    first = _run(tmp_path / "cache", PIECES, str(module))  # an empty cache
    assert first["stats"] == {"compiled": 1, "reused": 1}
    (module / "pieces.py").write_text(TEMPLATE.format("Matern52()"))
    second = _run(tmp_path / "cache", PIECES, str(module))
    assert second["stats"] == {"compiled": 1, "reused": 1}  # the stored program is not loaded
    # The edit changes the suggestions (the first process's program would have made the first's): the test can fail.
    assert second["points"][:3] == first["points"][:3] and second["points"][3:] != first["points"][3:]
    warm = _run(tmp_path / "cache", PIECES, str(module))
    assert warm["stats"] == {"loaded": 1, "reused": 1} and warm["points"] == second["points"]


def test_jax_cache_is_opt_in_and_then_jbo_stores_nothing_whole(monkeypatch, tmp_path):
    """``enable_jax_cache`` turns JAX's persistent cache on (off with JBO_NO_CACHE; a directory the user set wins);
    while it is on, jbo stores no program whole (an executable JAX's cache loaded serialises incompletely)."""
    before = (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs)
    try:
        jax.config.update("jax_compilation_cache_dir", None)
        assert cache.enable_jax_cache() is None  # JBO_NO_CACHE is set by the suite
        assert jax.config.jax_compilation_cache_dir is None and cache.programs_directory() is None
        monkeypatch.delenv("JBO_NO_CACHE")
        monkeypatch.setenv("JBO_CACHE_DIR", str(tmp_path / "jbo"))
        assert cache.programs_directory() == str(tmp_path / "jbo" / cache.PROGRAMS)
        assert cache.enable_jax_cache() == str(tmp_path / "jbo" / "jax")
        assert cache.jax_cache_enabled() and cache.programs_directory() is None
        monkeypatch.setenv("JBO_CACHE_DIR", str(tmp_path / "other"))
        assert cache.enable_jax_cache() == str(tmp_path / "jbo" / "jax")  # the configured directory wins
    finally:
        jax.config.update("jax_compilation_cache_dir", before[0])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", before[1])
