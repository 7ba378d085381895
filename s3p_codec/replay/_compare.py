"""Compare a recorded answer with a live one, field by field.

Values the server assigns (timestamps, offsets, IDs, cursors, ETags) differ on every run, so
they are not compared: the first time a recorded value meets a live one they are paired, and
every later meeting must agree with that pairing in both directions. "The server returned the
same offset twice" therefore still holds on the live side, and two different recorded offsets
never collapse into one live one.

Events are walked generically (attrs classes, named tuples, tuples, mappings, enums and
scalars): no protocol needs its own comparison code, only the list of fields it assigns.
"""

from __future__ import annotations

import bisect
import enum
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import attrs

__all__ = ["CLOCKS", "Assigned", "Pairing", "first_difference", "translate"]

Assigned = Callable[[str, object], "str | None"]
"""``(field name, value) -> namespace`` of a server-assigned value, or None to compare it."""


CLOCKS = frozenset({"timestamp", "time"})
"""Namespaces of wall-clock values: two events of one recorded millisecond may fall in two
live ones, so these are held to the recorded order, not to one partner each."""


class Pairing:
    """Recorded-to-live pairs of server-assigned values, per namespace; safe across threads."""

    def __init__(self, clocks: frozenset[str] = CLOCKS) -> None:
        self._clocks = clocks
        self._lock = threading.Lock()
        self._live: dict[tuple[str, object], object] = {}
        self._recorded: dict[tuple[str, object], object] = {}
        self._times: dict[str, _Clock] = {}

    def meet(self, namespace: str, recorded: object, live: object) -> str | None:
        """Pair the two values, or say how an earlier pairing disagrees (None: they agree)."""
        if type(recorded) is not type(live):
            return f"{namespace} {recorded!r} met a {type(live).__name__} {live!r}"
        with self._lock:
            if namespace in self._clocks:
                self._live.setdefault((namespace, recorded), live)
                return self._times.setdefault(namespace, _Clock()).meet(namespace, recorded, live)
            paired = self._live.get((namespace, recorded), _NOTHING)
            back = self._recorded.get((namespace, live), _NOTHING)
            if paired is _NOTHING and back is _NOTHING:
                self._live[namespace, recorded] = live
                self._recorded[namespace, live] = recorded
                return None
        if paired is not _NOTHING and paired != live:
            return f"{namespace} {recorded!r} was paired with {paired!r} before, now {live!r}"
        if back is not _NOTHING and back != recorded:
            return f"{namespace} {live!r} already stands for {back!r}, not {recorded!r}"
        return None

    def live_for(self, namespace: str, recorded: object) -> object:
        """The live value paired with a recorded one, or the recorded one when none is yet."""
        with self._lock:
            return self._live.get((namespace, recorded), recorded)


class _Clock:
    """Recorded clock values met so far, sorted, each with the lowest and highest live value
    it met: a new meeting must fall between its recorded neighbours' live values."""

    def __init__(self) -> None:
        self._keys: list[Any] = []
        self._span: dict[Any, tuple[Any, Any]] = {}

    def meet(self, namespace: str, recorded: Any, live: Any) -> str | None:
        at = bisect.bisect_left(self._keys, recorded)
        if at > 0:
            before = self._keys[at - 1]
            if self._span[before][1] > live:
                return (
                    f"{namespace} {live!r} is earlier than {self._span[before][1]!r}, "
                    f"though {recorded!r} was later than {before!r}"
                )
        following = at + (at < len(self._keys) and self._keys[at] == recorded)
        if following < len(self._keys):
            after = self._keys[following]
            if self._span[after][0] < live:
                return (
                    f"{namespace} {live!r} is later than {self._span[after][0]!r}, "
                    f"though {recorded!r} was earlier than {after!r}"
                )
        if recorded in self._span:
            low, high = self._span[recorded]
            self._span[recorded] = (min(low, live), max(high, live))
        else:
            self._keys.insert(at, recorded)
            self._span[recorded] = (live, live)
        return None


_NOTHING = object()


def _fields(value: object) -> list[tuple[str, object]] | None:
    """Named parts of an attrs instance or a named tuple; None for anything else."""
    if attrs.has(type(value)):
        return [(f.name, getattr(value, f.name)) for f in attrs.fields(cast(Any, type(value)))]
    names = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and isinstance(names, tuple):
        return list(zip(names, value, strict=True))
    return None


def _short(value: object, width: int = 60) -> str:
    text = repr(value.value if isinstance(value, enum.Enum) else value)
    return text if len(text) <= width else text[: width - 3] + "..."


def first_difference(
    recorded: object,
    live: object,
    assigned: Assigned,
    pairing: Pairing,
    loose: frozenset[str] = frozenset(),
) -> str | None:
    """Where and how ``live`` differs from ``recorded`` (None: the same, up to pairings).

    Text fields named in ``loose`` are compared with their numbers masked: error messages that
    quote an assigned ID ("lower than the last ID 1700000001234-0") still compare.
    """
    return _Walk(assigned, pairing, loose).walk(recorded, live, "", "answer")


_NUMBER = re.compile(r"\d+")


@attrs.frozen
class _Walk:
    """One comparison: the protocol's assigned fields and the pairings they go through."""

    assigned: Assigned
    pairing: Pairing
    loose: frozenset[str]

    def walk(self, recorded: object, live: object, name: str, path: str) -> str | None:
        namespace = self.assigned(name, recorded) if recorded is not None else None
        if namespace is not None and live is not None:
            problem = self.pairing.meet(namespace, recorded, live)
            return None if problem is None else f"{path}: {problem}"
        if type(recorded) is not type(live):
            if attrs.has(type(recorded)) and attrs.has(type(live)):
                return f"{path}: {type(recorded).__name__} recorded, {type(live).__name__} live"
            return f"{path}: {_short(recorded)} recorded, {_short(live)} live"
        parts = _fields(recorded)
        if parts is not None:
            for (field, old), (_, new) in zip(parts, _fields(live) or [], strict=True):
                problem = self.walk(old, new, field, f"{path}.{field}")
                if problem is not None:
                    return problem
            return None
        if isinstance(recorded, Sequence) and not isinstance(recorded, str | bytes):
            assert isinstance(live, Sequence)
            for index, (old, new) in enumerate(zip(recorded, live, strict=False)):
                problem = self.walk(old, new, name, f"{path}[{index}]")
                if problem is not None:
                    return problem
            if len(recorded) != len(live):
                return f"{path}: {len(recorded)} items recorded, {len(live)} live"
            return None
        if isinstance(recorded, Mapping):
            assert isinstance(live, Mapping)
            if set(recorded) != set(live):
                return f"{path}: keys {sorted(recorded)} recorded, {sorted(live)} live"
            for key in recorded:
                problem = self.walk(recorded[key], live[key], str(key), f"{path}[{key!r}]")
                if problem is not None:
                    return problem
            return None
        if name in self.loose and isinstance(recorded, str) and isinstance(live, str):
            same = _NUMBER.sub("#", recorded) == _NUMBER.sub("#", live)
        else:
            same = recorded == live
        return None if same else f"{path}: {_short(recorded)} recorded, {_short(live)} live"


def translate(request: Any, assigned: Assigned, pairing: Pairing) -> Any:
    """The request with each server-assigned value it repeats replaced by its live partner
    (a READ from the timestamp an earlier APPEND was given asks from the live one)."""
    parts = _fields(request)
    if parts is None or not attrs.has(type(request)):
        return request
    changes: dict[str, object] = {}
    for field, value in parts:
        new = _translate_value(field, value, assigned, pairing)
        if new is not value:
            changes[field] = new
    return attrs.evolve(request, **changes) if changes else request


def _translate_value(name: str, value: object, assigned: Assigned, pairing: Pairing) -> object:
    if value is None:
        return value
    namespace = assigned(name, value)
    if namespace is not None:
        return pairing.live_for(namespace, value)
    if attrs.has(type(value)):
        return translate(value, assigned, pairing)
    return value
