"""JAX's persistent compilation cache, on by default for every entry point of jbo.

The programs jbo compiles (a suggestion per padded data size, a whole run for
:func:`jbo.minimize_many`) take seconds to compile; with the cache a fresh process loads them from
disk instead. ``import jbo`` calls :func:`configure`. JAX's cache is keyed by the lowered program,
so a process still traces each program before the cache answers; :class:`StoredProgram` (the
ask/tell suggestion) keys the executable itself by what it is a function of and skips tracing too.

Environment:
  ``JBO_NO_CACHE``: set (non-empty) to leave the cache off.
  ``JBO_CACHE_DIR``: where the cache lives (default ``~/.cache/jbo/jax``).
A cache directory the user configured for JAX (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)`` before importing jbo) wins.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import pickle
import tempfile

# Every program is cached: a fresh process then loads even the small ones (the cold start's prior
# draws, the initial design) in milliseconds instead of compiling them again.
MIN_COMPILE_SECONDS = 0.0


def configure() -> str | None:
    """Turn on the persistent compilation cache (unless ``JBO_NO_CACHE`` is set).

    Returns:
      the cache directory in use, or ``None``.
    """
    import jax

    if os.environ.get("JBO_NO_CACHE"):
        return None
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    directory = os.environ.get("JBO_CACHE_DIR") or os.path.expanduser(os.path.join("~", ".cache", "jbo", "jax"))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None  # read-only home: run without the cache
    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    return directory


# --- Compiled programs stored whole --------------------------------------------------------------------
#
# JAX's cache above is keyed by the lowered program, so a fresh process still traces and lowers every
# suggestion program before the cache can answer (BENCHMARKS.md, bench_compiled: a warm process).
# A :class:`StoredProgram` keys the *executable* by everything the
# program is a function of, known before tracing, and loads it without tracing at all.

PROGRAMS = "jbo-programs"  # subdirectory of the compilation cache directory
FINGERPRINT_CHARS = 16  # a stored program's file name: <fingerprint prefix>-<program digest>
PARTIAL = ".partial"  # suffix of a file being written
STALE_DAYS = 7.0  # unused programs of another fingerprint are deleted after this long (prune)


def programs_directory() -> str | None:
    """Where stored programs live: ``jbo-programs/`` inside JAX's compilation cache directory
    (``None`` while the cache is off, e.g. under ``JBO_NO_CACHE``)."""
    import jax

    base = jax.config.jax_compilation_cache_dir
    return os.path.join(base, PROGRAMS) if base else None


def _cpu_description() -> str:
    """The processor's model and instruction-set flags (an executable compiled for one CPU may use
    instructions another lacks, when a cache directory is shared between machines)."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            lines = [line for line in f if line.startswith(("model name", "flags"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


@functools.lru_cache(maxsize=None)
def fingerprint() -> str:
    """Digest of what every compiled program depends on besides its arguments: jbo's source files,
    the versions of the libraries that build the programs, the backend and its devices, the CPU,
    ``XLA_FLAGS`` and ``JBO_SERIAL_LAPACK`` (:mod:`jbo._xla_cpu`). A change to any of them makes every
    stored program a miss."""
    import sys

    import jax

    digest = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    for distribution in ("jax", "jaxlib", "numpyro", "optax", "flax", "numpy"):
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = None
        digest.update(f"{distribution}={version};".encode())
    devices = ",".join(f"{d.platform}:{d.device_kind}" for d in jax.devices())
    digest.update(f"{sys.version};{devices};{jax.process_count()};{os.environ.get('XLA_FLAGS', '')};"
                  f"{os.environ.get('JBO_SERIAL_LAPACK', '')};".encode())
    digest.update(_cpu_description().encode())
    return digest.hexdigest()


class _Opaque(Exception):
    """A static argument has no faithful description (a function, a type defined outside jbo)."""


def describe(value) -> str:
    """A canonical text of a static argument, equal for equal programs across processes.

    Plain values, tuples, lists and dicts of them, and jbo's own configuration types (dataclasses,
    named tuples, :class:`jbo.spaces.Space`) are described field by field. Anything else (a function,
    an instance of a class defined outside jbo, whose code the fingerprint does not cover) raises
    :class:`_Opaque`: such a program is not stored.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__}:{value!r}"
    if type(value) in (tuple, list):
        return "[" + ",".join(describe(v) for v in value) + "]"
    if type(value) is dict:
        return "{" + ",".join(sorted(f"{describe(k)}={describe(v)}" for k, v in value.items())) + "}"
    kind = type(value)
    if kind.__module__ != "jbo" and not kind.__module__.startswith("jbo."):
        raise _Opaque(kind)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if dataclasses.is_dataclass(value):
        fields = ",".join(f"{f.name}={describe(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{name}({fields})"
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return f"{name}(" + ",".join(f"{k}={describe(getattr(value, k))}" for k in kind._fields) + ")"
    if hasattr(value, "to_dict"):  # spaces and parameters: their JSON form is complete (the journal's)
        try:
            return f"{name}:" + json.dumps(value.to_dict(), sort_keys=True)
        except TypeError:
            raise _Opaque(kind) from None
    raise _Opaque(kind)


_CONFIG = ("jax_enable_x64", "jax_default_matmul_precision", "jax_default_prng_impl", "jax_threefry_partitionable",
           "jax_numpy_dtype_promotion", "jax_numpy_rank_promotion", "jax_debug_nans", "jax_debug_infs")


def _leaf_type(leaf) -> str:
    import jax

    text = str(jax.typeof(leaf))
    sharding = getattr(leaf, "sharding", None)
    return text if sharding is None else f"{text}@{sharding}"


@functools.lru_cache(maxsize=None)
def _jax_internals():
    """The two internals of jax 0.10 a stored program relies on, or ``None`` where they are missing.

    ``initialize_lapack``: jaxlib registers its CPU LAPACK kernels (Cholesky, triangular solves) when
    a program using them is first *lowered*; a program loaded without lowering would call null
    kernels (a segmentation fault), so it runs before every load. ``compilation_cache``: an
    executable that JAX's own cache deserialised serialises *incompletely* on the CPU (its fused
    kernels are missing: "Function ... not found" when another process runs it), so a program to
    be stored is compiled with JAX's cache out of the way.
    """
    try:
        from jax._src import compilation_cache
        from jax._src.lax.linalg import initialize_lapack
    except ImportError:
        return None
    if not all(hasattr(compilation_cache, name) for name in ("_cache_used", "_cache_checked",
                                                              "_cache_initialized_mutex")):
        return None
    return initialize_lapack, compilation_cache


@contextlib.contextmanager
def _jax_cache_bypassed(compilation_cache):
    with compilation_cache._cache_initialized_mutex:
        saved = compilation_cache._cache_checked, compilation_cache._cache_used
        compilation_cache._cache_checked, compilation_cache._cache_used = True, False
    try:
        yield
    finally:
        with compilation_cache._cache_initialized_mutex:
            compilation_cache._cache_checked, compilation_cache._cache_used = saved


class StoredProgram:
    """A ``jax.jit``-ed function whose executables are also written to disk and loaded from there.

    Calling it is calling the jitted function. On a CPU backend, while a compilation cache
    directory is configured (:func:`configure`), each distinct program (the static arguments, the
    structure, shapes, dtypes and placement of the others, the configuration flags that change
    tracing, and :func:`fingerprint`) is compiled once, serialised to ``jbo-programs/<fingerprint>-<digest>``
    and, in a later process, loaded from there without tracing or lowering. A loaded program's first
    call is checked; one that fails is deleted and compiled again. Elsewhere (no directory, another
    backend, static arguments :func:`describe` cannot describe, under tracing or ``jax.disable_jit``,
    a jax without the internals it needs) the call goes to the jitted function unchanged.

    Attributes:
      jitted: the ``jax.jit`` function.
      stats: counts of ``compiled`` (traced and compiled here, then stored), ``loaded`` (from disk),
        ``reused`` (already in this process) and ``direct`` (passed to ``jitted``) calls.
    """

    def __init__(self, jitted, static_argnames: tuple[str, ...]):
        import inspect

        self.jitted = jitted
        self._names = tuple(inspect.signature(jitted).parameters)
        self._static = frozenset(static_argnames)
        self._programs: dict = {}
        self._static_digests: dict = {}
        self.stats = collections.Counter()
        functools.update_wrapper(self, jitted)

    def _split(self, args, kwargs):
        static = tuple((n, a) for n, a in zip(self._names, args) if n in self._static)
        static += tuple(sorted((n, v) for n, v in kwargs.items() if n in self._static))
        dynamic = (tuple(a for n, a in zip(self._names, args) if n not in self._static),
                   {n: v for n, v in kwargs.items() if n not in self._static})
        return static, dynamic

    def _static_digest(self, static) -> str | None:
        if static not in self._static_digests:
            try:
                text = f"{self.jitted.__module__}.{self.jitted.__qualname__}|" + describe(list(static))
                self._static_digests[static] = hashlib.sha256(text.encode()).hexdigest()
            except _Opaque:
                self._static_digests[static] = None
        return self._static_digests[static]

    def __call__(self, *args, **kwargs):
        import jax

        directory = programs_directory()
        static, dynamic = self._split(args, kwargs)
        leaves, structure = jax.tree_util.tree_flatten(dynamic)
        internals = _jax_internals()
        if (directory is None or internals is None or jax.default_backend() != "cpu" or jax.config.jax_disable_jit
                or any(isinstance(leaf, jax.core.Tracer) for leaf in leaves)
                or self._static_digest(static) is None):
            self.stats["direct"] += 1
            return self.jitted(*args, **kwargs)
        config = tuple(str(getattr(jax.config, name, None)) for name in _CONFIG)
        signature = (self._static_digest(static), config, str(structure), tuple(_leaf_type(x) for x in leaves))
        program = self._programs.get(signature)
        if program is not None:
            self.stats["reused"] += 1
            return program(*dynamic[0], **dynamic[1])
        key = hashlib.sha256(repr((fingerprint(),) + signature).encode()).hexdigest()
        path = os.path.join(directory, f"{fingerprint()[:FINGERPRINT_CHARS]}-{key}")
        initialize_lapack, compilation_cache = internals
        initialize_lapack()
        program = self._load(path)
        if program is not None:
            try:
                out = jax.block_until_ready(program(*dynamic[0], **dynamic[1]))
                self.stats["loaded"] += 1
                self._programs[signature] = program
                return out
            except Exception:  # a stored program that does not run: forget it, compile afresh
                with contextlib.suppress(OSError):
                    os.remove(path)
        with _jax_cache_bypassed(compilation_cache):
            program = self.jitted.lower(*args, **kwargs).compile()
        self.stats["compiled"] += 1
        self._store(program, path)
        self._programs[signature] = program
        return program(*dynamic[0], **dynamic[1])

    @staticmethod
    def _load(path):
        from jax.experimental import serialize_executable

        try:
            with open(path, "rb") as f:
                program = serialize_executable.deserialize_and_load(*pickle.load(f))
            with contextlib.suppress(OSError):
                os.utime(path)  # in use: see prune
            return program
        except FileNotFoundError:
            return None
        except Exception:  # cut short, or another format: compile afresh
            with contextlib.suppress(OSError):
                os.remove(path)
            return None

    @staticmethod
    def _store(program, path) -> None:
        """Write ``program`` to ``path`` whole or not at all (several processes may write it at once)."""
        from jax.experimental import serialize_executable

        temporary = None
        try:
            blob = pickle.dumps(serialize_executable.serialize(program))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), prefix=".", suffix=PARTIAL,
                                             delete=False) as f:
                temporary = f.name
                f.write(blob)
            os.replace(temporary, path)
        except Exception:  # a read-only or full disk, a program that cannot be serialised: run unstored
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.remove(temporary)
            return
        prune(os.path.dirname(path))


def prune(directory: str, max_age_days: float = STALE_DAYS) -> list[str]:
    """Delete the stored programs of other fingerprints (another jbo source, other library versions)
    not used for ``max_age_days``, and writes left unfinished (a killed process) as old.

    Each load refreshes a file's modification time, so several installations sharing a cache keep
    what they use; a developer editing jbo does not accumulate a directory of dead programs.

    Returns:
      the names deleted.
    """
    import time

    current = fingerprint()[:FINGERPRINT_CHARS] + "-"
    deadline = time.time() - max_age_days * 86400.0
    deleted = []
    try:
        names = os.listdir(directory)
    except OSError:
        return deleted
    for name in names:
        if name.startswith(current) and not name.endswith(PARTIAL):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            if os.path.getmtime(path) < deadline:
                os.remove(path)
                deleted.append(name)
    return deleted


def stored(jitted, static_argnames=()) -> StoredProgram:
    """``jitted`` (a ``jax.jit`` function with these ``static_argnames``) as a :class:`StoredProgram`."""
    return StoredProgram(jitted, tuple(static_argnames))
