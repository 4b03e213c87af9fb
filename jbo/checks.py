"""Checks of user input at the public edge: each returns the value normalised (``int``, ``float``, ``bool``)
or raises a ``ValueError`` that names the field."""

from __future__ import annotations

import math
import numbers


def boolean(field: str, value) -> bool:
    """``value`` if it is ``True`` or ``False`` (NumPy's bools included)."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise ValueError(f"{field} must be true or false, got {value!r}")
    return bool(value)


def integer(field: str, value, low: int | None = None, integral_floats: bool = False) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) ``>= low``; with ``integral_floats`` a float
    of integral value (``30.0``) counts too."""
    kind = "a positive integer" if low == 1 else "an integer" + ("" if low is None else f" >= {low}")
    number = numbers.Real if integral_floats else numbers.Integral
    if (isinstance(value, bool) or not isinstance(value, number) or not math.isfinite(value)
            or int(value) != value or low is not None and value < low):
        raise ValueError(f"{field} must be {kind}, got {value!r}")
    return int(value)


def positive(field: str, value) -> float:
    """``value`` as a ``float`` if it is a finite number ``> 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{field} must be a positive number, got {value!r}")
    return float(value)


def known_options(kind: str, given, valid) -> None:
    """Raise a ``ValueError`` naming the options in ``given`` that are not in ``valid`` (e.g. a config's
    ``_fields``); ``kind`` names the setting they belong to."""
    unknown = sorted(set(given) - set(valid))
    if unknown:
        raise ValueError(f"unknown {kind} option(s) {unknown}; valid: {list(valid)}")
