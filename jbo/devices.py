"""Splitting a stacked batch of models (ensemble members) over the local JAX devices.

XLA:CPU runs one device's computation on one core, so an ensemble ``vmap``-ped on the default device
uses one core whatever the machine has. Splitting the host into several CPU devices
(``jax.config.update("jax_num_cpu_devices", n)`` right after ``import jax``, or ``jbo run
--cpu-devices n``) and the member axis over them runs the members in parallel; on a machine with
several GPUs the same code puts members on each GPU.

The split is one single-device call per block of members, each issued from its own host thread (JAX
releases the GIL while a program runs), not one multi-device ``shard_map``-ped program: on CPU devices
both train the networks equally fast, while calls dispatched from a single thread run one after the other. jbo splits only network training (a ``scan`` of dense layers): two
programs with ``while`` loops (the BLR's samplers and MAP fit, then around a Cholesky) running at once
on two CPU devices deadlocked XLA's CPU runtime, split either way, so those stay on one device, where
they now cost a few hundredths of a second (:mod:`jbo.surrogates.blr` needs no factorisation per step).
"""

from __future__ import annotations

import concurrent.futures
import functools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np


def num_devices() -> int:
    """Number of local JAX devices the member axis can be split over."""
    return len(jax.local_devices())


def over_devices(program: Callable, members, *shared, **static):
    """Run the jitted ``program(members, *shared, **static)`` on blocks of the member axis, one block
    per local device, concurrently.

    The blocks split the leading axis of every leaf of ``members`` as ``numpy.array_split`` does
    (sizes differ by at most one, nothing is padded); block ``i`` and a copy of ``shared`` are
    committed to device ``i`` and ``program`` runs there, called from its own thread. The cost is one
    compilation per device and block size. With one device this is ``program(members, *shared, **static)``.

    Args:
      program: a jitted function whose outputs all have the member axis leading.
      members: PyTree with a leading member axis.
      shared: arguments every block gets whole.
      static: keyword arguments passed as they are (static arguments of ``program``).
    Returns:
      The outputs of the blocks concatenated along the member axis, on the default device.
    """
    devices = jax.local_devices()
    num = jax.tree_util.tree_leaves(members)[0].shape[0]
    sizes = tuple(int(block.size) for block in np.array_split(np.arange(num), len(devices)) if block.size)
    if len(sizes) == 1:
        return program(members, *shared, **static)

    def run(device, block):
        return jax.block_until_ready(program(*jax.device_put((block, *shared), device), **static))

    outs = list(_pool(len(sizes)).map(run, devices, _split(members, sizes)))
    return _concatenate(jax.device_put(outs, devices[0]))


# Slicing and concatenating a PyTree leaf by leaf would dispatch one small program per leaf; one
# jitted program each does it in a single dispatch.
@functools.partial(jax.jit, static_argnums=1)
def _split(tree, sizes: tuple[int, ...]):
    starts = np.cumsum((0,) + sizes)
    return [jax.tree_util.tree_map(lambda a: a[start:start + size], tree) for start, size in zip(starts, sizes)]


@jax.jit
def _concatenate(parts):
    return jax.tree_util.tree_map(lambda *leaves: jnp.concatenate(leaves), *parts)


@functools.lru_cache(maxsize=None)
def _pool(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="jbo-device")
