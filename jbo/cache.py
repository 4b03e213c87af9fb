"""jbo's compiled programs: held in a bounded number per process, and stored on disk whole.

Every program jbo compiles for a run (a suggestion per padded data size, the initial design, ...) goes
through a :class:`Program`: a ``jax.jit`` function whose executables jbo holds itself, keyed by what
the computation depends on (its static arguments, the structure, shapes and dtypes of the others, the
configuration flags that change tracing). Two consequences:

* **Bounded.** An XLA:CPU executable keeps hundreds of memory mappings for its code, and the kernel
  allows a process ~65 000 (``vm.max_map_count``): without a bound a long-lived process meeting many spaces
  runs out of them. The programs of every :class:`Program` share one least-recently-used
  list of at most :func:`max_programs` entries; one that falls off is released with its mappings, and
  compiled (or loaded) again when it is needed again.
* **Stored.** On a CPU, a program whose static arguments :func:`describe` can describe is also written
  to ``programs/`` in jbo's cache directory and, in a later process, loaded without tracing or
  compiling. The key covers jbo's source, the library versions, the CPU and the flags
  (:func:`fingerprint`), so an edited jbo never loads an old program.

``import jbo`` changes nothing in JAX's configuration: JAX's own persistent compilation cache (keyed by
the lowered program; it also serves programs jbo cannot store, such as whole runs holding a user's
objective) is the user's to turn on, or :func:`enable_jax_cache`'s (``jbo run`` and the experiments do).
While it is on, jbo stores nothing whole: an executable JAX's cache deserialised serialises incompletely
on the CPU (its fused kernels are missing in another process), and JAX's cache serves jbo's programs too.

Environment:
  ``JBO_NO_CACHE``: set (non-empty) to store and load nothing.
  ``JBO_CACHE_DIR``: jbo's cache directory (default ``~/.cache/jbo``).
  ``JBO_MAX_PROGRAMS``: the bound of :func:`max_programs`.
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
import threading

import jax
import jax.numpy as jnp
from jax.experimental import serialize_executable

from jbo import _xla_cpu

PROGRAMS = "programs"  # subdirectory of jbo's cache directory holding stored programs
FINGERPRINT_CHARS = 16  # a stored program's file name: <fingerprint prefix>-<program digest>
PARTIAL = ".partial"  # suffix of a file being written
STALE_DAYS = 7.0  # unused programs of another fingerprint are deleted after this long (prune)
DEFAULT_MAX_PROGRAMS = 32
# Storing serialises a whole executable; with the process's memory mappings near the kernel's limit that
# is where it failed (allocations inside XLA abort the process rather than raise). Stores stop well before.
MAPPINGS_HEADROOM = 0.5


def directory() -> str | None:
    """jbo's cache directory (``JBO_CACHE_DIR``, default ``~/.cache/jbo``), or ``None`` under ``JBO_NO_CACHE``."""
    if os.environ.get("JBO_NO_CACHE"):
        return None
    return os.environ.get("JBO_CACHE_DIR") or os.path.expanduser(os.path.join("~", ".cache", "jbo"))


def jax_cache_enabled() -> bool:
    """Whether JAX's persistent compilation cache is on in this process (the user's or :func:`enable_jax_cache`)."""
    return bool(jax.config.jax_compilation_cache_dir) and bool(jax.config.jax_enable_compilation_cache)


def enable_jax_cache(path: str | None = None) -> str | None:
    """Turn on JAX's persistent compilation cache for every program of the process (opt-in).

    Whole runs (:func:`jbo.minimize_many`, :func:`jbo.study`) hold the objective and cannot be stored by
    jbo; with this on, a later process loads them instead of compiling them. A directory the user set for
    JAX already wins.

    Args:
      path: the directory (default ``jax/`` in :func:`directory`).
    Returns:
      the directory in use, or ``None`` (``JBO_NO_CACHE``, or a directory that cannot be created).
    """
    if jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir
    base = directory()
    path = path or (None if base is None else os.path.join(base, "jax"))
    if path is None:
        return None
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None  # a read-only home: run without the cache
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return path


def programs_directory() -> str | None:
    """Where stored programs live (``programs/`` in :func:`directory`); ``None`` while nothing is stored:
    ``JBO_NO_CACHE``, or JAX's persistent cache on (see the module's docstring)."""
    base = directory()
    if base is None or jax_cache_enabled():
        return None
    return os.path.join(base, PROGRAMS)


# --- the bound --------------------------------------------------------------------------------------------

_LOCK = threading.RLock()  # guards the list below and every Program's dict
_COMPILE_LOCK = threading.Lock()  # one compilation (or load, or store) at a time
_HELD: collections.OrderedDict = collections.OrderedDict()  # (program, signature) -> None, oldest first
_MAX = [int(os.environ.get("JBO_MAX_PROGRAMS") or DEFAULT_MAX_PROGRAMS)]


def max_programs() -> int:
    """The most compiled programs jbo holds at once (``JBO_MAX_PROGRAMS``, default 32)."""
    return _MAX[0]


def set_max_programs(count: int) -> None:
    """Hold at most ``count`` compiled programs (at least 1); the least recently used beyond are released."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"max_programs must be an integer >= 1, got {count!r}")
    with _LOCK:
        _MAX[0] = count
        _evict()


def held_programs() -> int:
    """How many compiled programs jbo holds now."""
    return len(_HELD)


def release_programs() -> None:
    """Release every compiled program jbo holds (they are compiled or loaded again when needed)."""
    with _LOCK:
        while _HELD:
            _release_oldest()


def _touch(program: "Program", signature) -> None:
    _HELD.move_to_end((program, signature))


def _hold(program: "Program", signature, executable) -> None:
    program._programs[signature] = executable
    _HELD[(program, signature)] = None
    _evict()


def _evict() -> None:
    while len(_HELD) > _MAX[0]:
        _release_oldest()


def _release_oldest() -> None:
    (program, signature), _ = _HELD.popitem(last=False)
    program._programs.pop(signature, None)
    # JAX's caches of this jitted function keep what it compiled alive (and mapped); the executables still
    # held are referenced here and survive.
    clear = getattr(program.jitted, "clear_cache", None)
    if clear is not None:
        clear()
    program.stats["released"] += 1


def mappings() -> int | None:
    """The process's memory mappings now (Linux), or ``None`` where they cannot be counted."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def mapping_limit() -> int | None:
    """The kernel's limit on a process's memory mappings (``vm.max_map_count``), or ``None``."""
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def _room_to_store() -> bool:
    count, limit = mappings(), mapping_limit()
    return count is None or limit is None or count < MAPPINGS_HEADROOM * limit


# --- keys --------------------------------------------------------------------------------------------------

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

    digest = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
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
    text = str(jax.typeof(leaf))
    sharding = getattr(leaf, "sharding", None)
    return text if sharding is None else f"{text}@{sharding}"


@functools.lru_cache(maxsize=1)
def _lapack_ready() -> bool:
    """Register jaxlib's CPU LAPACK kernels, as lowering a program that uses one does.

    jaxlib registers them when the first program using them is *lowered*; a program loaded without
    lowering would call null kernels (a segmentation fault), so a small Cholesky is lowered first.
    """
    jax.jit(jnp.linalg.cholesky).lower(jnp.eye(2, dtype=jnp.float32))
    return True


# --- programs ---------------------------------------------------------------------------------------------

class Program:
    """A ``jax.jit``-ed function whose executables jbo holds (bounded) and, where it can, stores on disk.

    Calling it is calling the jitted function. Each distinct program (the static arguments, the structure,
    shapes, dtypes and placement of the others, the configuration flags that change tracing) is compiled
    once and held in the process-wide list of :func:`max_programs`. With ``store=True``, on a CPU backend,
    while :func:`programs_directory` is set, it is also serialised to ``programs/<fingerprint>-<digest>``
    and, in a later process, loaded from there without tracing; a loaded program's first call is checked,
    and one that fails is deleted and compiled again. Under tracing or ``jax.disable_jit`` the call goes to
    the jitted function unchanged (it is then part of another program).

    Attributes:
      jitted: the ``jax.jit`` function.
      stats: counts of ``compiled`` (traced and compiled here), ``loaded`` (from disk), ``reused``
        (already held), ``direct`` (passed to ``jitted``) calls and ``released`` programs.
    """

    def __init__(self, jitted, static_argnames: tuple[str, ...] = (), store: bool = True):
        import inspect

        self.jitted = jitted
        self.store = store
        self._names = tuple(inspect.signature(jitted).parameters)
        self._static = frozenset(static_argnames)
        self._programs: dict = {}
        self._static_digests: dict = {}
        self.stats = collections.Counter()
        functools.update_wrapper(self, jitted)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

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
            if len(self._static_digests) > 4 * _MAX[0]:
                self._static_digests.pop(next(iter(self._static_digests)))
        return self._static_digests[static]

    def __call__(self, *args, **kwargs):
        static, dynamic = self._split(args, kwargs)
        leaves, structure = jax.tree_util.tree_flatten(dynamic)
        if jax.config.jax_disable_jit or any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            self.stats["direct"] += 1
            return self.jitted(*args, **kwargs)
        config = tuple(str(getattr(jax.config, name, None)) for name in _CONFIG)
        signature = (static, config, structure, tuple(_leaf_type(x) for x in leaves))
        with _LOCK:
            executable = self._programs.get(signature)
            if executable is not None:
                _touch(self, signature)
                self.stats["reused"] += 1
        if executable is None:
            with _COMPILE_LOCK:  # another thread may have made it meanwhile
                with _LOCK:
                    executable = self._programs.get(signature)
                if executable is None:
                    executable, out = self._make(args, kwargs, static, signature, dynamic)
                    with _LOCK:
                        _hold(self, signature, executable)
                    if out is not None:
                        return out
        return executable(*dynamic[0], **dynamic[1])

    def _make(self, args, kwargs, static, signature, dynamic):
        """``(executable, output or None)``: loaded from disk (and run once to check it) or compiled here."""
        path = self._path(static, signature)
        if path is not None:
            _lapack_ready()
            executable = _load(path)
            if executable is not None:
                try:
                    out = jax.block_until_ready(executable(*dynamic[0], **dynamic[1]))
                    self.stats["loaded"] += 1
                    return executable, out
                except Exception:  # a stored program that does not run: forget it, compile afresh
                    with contextlib.suppress(OSError):
                        os.remove(path)
        with _xla_cpu.serial_lapack():
            lowered = self.jitted.lower(*args, **kwargs)
        executable = lowered.compile(compiler_options=_xla_cpu.compiler_options(jax.default_backend()))
        self.stats["compiled"] += 1
        if path is not None and _room_to_store():
            _store(executable, path)
        return executable, None

    def _path(self, static, signature) -> str | None:
        """Where this program is stored, or ``None`` where it is not (see the class docstring)."""
        folder = programs_directory() if self.store else None
        if folder is None or jax.default_backend() != "cpu":
            return None
        digest = self._static_digest(static)
        if digest is None:
            return None
        key = hashlib.sha256(repr((fingerprint(), digest) + signature[1:]).encode()).hexdigest()
        return os.path.join(folder, f"{fingerprint()[:FINGERPRINT_CHARS]}-{key}")


def _load(path):
    try:
        with open(path, "rb") as f:
            executable = serialize_executable.deserialize_and_load(*pickle.load(f))
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: see prune
        return executable
    except FileNotFoundError:
        return None
    except Exception:  # cut short, or another format: compile afresh
        with contextlib.suppress(OSError):
            os.remove(path)
        return None


def _store(executable, path) -> None:
    """Write ``executable`` to ``path`` whole or not at all (several processes may write it at once)."""
    temporary = None
    try:
        blob = pickle.dumps(serialize_executable.serialize(executable))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), prefix=".", suffix=PARTIAL, delete=False) as f:
            temporary = f.name
            f.write(blob)
        os.replace(temporary, path)
    except Exception:  # a read-only or full disk, a program that cannot be serialised: run unstored
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.remove(temporary)
        return
    prune(os.path.dirname(path))


def prune(folder: str, max_age_days: float = STALE_DAYS) -> list[str]:
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
        names = os.listdir(folder)
    except OSError:
        return deleted
    for name in names:
        if name.startswith(current) and not name.endswith(PARTIAL):
            continue
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            if os.path.getmtime(path) < deadline:
                os.remove(path)
                deleted.append(name)
    return deleted


def stored(jitted, static_argnames=()) -> Program:
    """``jitted`` (a ``jax.jit`` function with these ``static_argnames``) as a :class:`Program` stored on disk."""
    return Program(jitted, tuple(static_argnames), store=True)


def held(jitted, static_argnames=()) -> Program:
    """``jitted`` as a :class:`Program` held in the bounded list only (never written to disk)."""
    return Program(jitted, tuple(static_argnames), store=False)
