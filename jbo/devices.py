"""Splitting a stacked batch of models (ensemble members) over the local JAX devices.

XLA:CPU runs one device's computation on one core, so an ensemble ``vmap``-ped on the default device
uses one core whatever the machine has. Splitting the host into several CPU devices
(``jax.config.update("jax_num_cpu_devices", n)`` right after ``import jax``, or ``jbo run
--cpu-devices n``) and the member axis over them runs the members in parallel; on a machine with
several GPUs the same code puts members on each GPU.

jbo splits only network training this way (a ``scan`` of dense layers). Split over two CPU devices,
a program with ``while`` loops around a LAPACK call (the BLR's MAP fit: L-BFGS around a Cholesky)
deadlocked XLA's CPU runtime (jax 0.10.2); such programs stay on one device.
"""

from __future__ import annotations

import functools
from typing import Callable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def member_mesh() -> Mesh | None:
    """A one-axis (``"member"``) mesh over the local devices, or ``None`` with a single device."""
    devices = jax.local_devices()
    return Mesh(np.asarray(devices), ("member",)) if len(devices) > 1 else None


@functools.lru_cache(maxsize=64)
def _shard_mapped(program: Callable, mesh: Mesh, num_shared: int, static: tuple):
    specs = (PartitionSpec("member"),) + (PartitionSpec(),) * num_shared
    body = lambda members, *shared: program(members, *shared, **dict(static))
    # shard_map, not sharding annotations: each device runs its block of members as its own program,
    # with no collective between the devices.
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=PartitionSpec("member"), check_vma=False))


def over_members(program: Callable, mesh: Mesh, members, *shared, **static):
    """Run ``program(members, *shared, **static)`` with the member axis split over ``mesh``'s devices.

    The leading (member) axis of every leaf of ``members`` is padded to a multiple of the mesh size
    with copies of the first members, whose results are dropped; ``shared`` is replicated. Each device
    runs ``program`` on its block of members (XLA:CPU gives each device its own core), and the
    outputs, whose leading axis must be the member axis, come back unpadded on the default device.
    ``program`` and the ``static`` values must be hashable (the compiled program is cached on them).
    """
    num = jax.tree_util.tree_leaves(members)[0].shape[0]
    take = np.arange(num + (-num) % mesh.size) % num
    members = jax.device_put(jax.tree_util.tree_map(lambda a: a[take], members),
                             NamedSharding(mesh, PartitionSpec("member")))
    shared = jax.device_put(shared, NamedSharding(mesh, PartitionSpec()))
    out = _shard_mapped(program, mesh, len(shared), tuple(sorted(static.items())))(members, *shared)
    return jax.device_put(jax.tree_util.tree_map(lambda a: a[:num], out), jax.local_devices()[0])
