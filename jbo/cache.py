"""JAX's persistent compilation cache, on by default for every entry point of jbo.

The programs jbo compiles (a suggestion per padded data size, a whole run for
:func:`jbo.minimize_many`) take seconds to compile; with the cache a fresh process loads them from
disk instead. ``import jbo`` calls :func:`configure`.

Environment:
  ``JBO_NO_CACHE``: set (non-empty) to leave the cache off.
  ``JBO_CACHE_DIR``: where the cache lives (default ``~/.cache/jbo/jax``).
A cache directory the user configured for JAX (``JAX_COMPILATION_CACHE_DIR`` or
``jax.config.update("jax_compilation_cache_dir", ...)`` before importing jbo) wins.
"""

from __future__ import annotations

import os

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
