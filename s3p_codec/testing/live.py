"""Drive generated valid and malformed traffic at a running server and check every answer.

::

    from s3p_codec.testing import live, s3p as s3p_cases

    report = live.fuzz(s3p_cases.Target(), "127.0.0.1", 7500, seconds=10, seed=1)
    print(report.summary())              # readable; report.to_json() for the JSON document

Each case goes on a fresh TCP connection. For a malformed case the server must answer the
error its ``Malformed`` names (right code), end the conversation when the error is fatal or
keep serving when it is not, and do so within ``case_timeout`` seconds. Every
``probe_every`` cases a fresh connection sends the target's probe, which must be answered
normally: valid traffic is still served after the malformed one. Valid cases must get a
well-formed answer.

The driver defends itself: every read has a time-out clamped to the budget, at most
``max_reply`` bytes of an answer are read (a reply announcing a gigabyte is refused by the
client-role codec from its header, or cut at the cap), resets and garbage are findings, not
crashes. Cases come from the target's hypothesis strategies with a fixed seed, so the same
seed against the same server replays the same traffic. Failures are grouped by check and label,
keeping the smallest failing byte sequence of each group.
"""

from __future__ import annotations

import itertools
import json
import random
import socket
import time
from collections import Counter
from typing import Any, TypeVar

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from s3p_codec.testing.strategies import Answer, Malformed, Valid
from s3p_codec.testing.target import Target

__all__ = ["Finding", "Report", "draw", "fuzz"]

T = TypeVar("T")
BATCH = 200


def draw(strategy: st.SearchStrategy[T], count: int, seed: int) -> list[T]:
    """Up to ``count`` examples of ``strategy``, the same ones for the same ``seed``."""
    found: list[T] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example: T) -> None:
        found.append(example)

    collect()
    return found


@attrs.define
class Finding:
    """One kind of failure: a check that failed for cases of one label."""

    check: str
    label: str
    expected: str
    observed: str
    data: bytes
    half_close: bool = False
    splits: tuple[int, ...] = ()
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        """This finding as a JSON-ready dict (the smallest input in hex and repr)."""
        return {
            "check": self.check,
            "label": self.label,
            "count": self.count,
            "expected": self.expected,
            "observed": self.observed,
            "smallest": {
                "length": len(self.data),
                "hex": self.data.hex(),
                "repr": repr(self.data[:300]),
                "half_close": self.half_close,
                "sent_in_pieces_at": list(self.splits),
            },
        }


@attrs.define
class Report:
    """What one run did and found (``to_json``, ``summary``)."""

    protocol: str
    address: str
    seed: int
    seconds: float
    elapsed: float = 0.0
    malformed: int = 0
    valid: int = 0
    probes: int = 0
    labels: Counter[str] = attrs.field(factory=Counter)
    answers: Counter[str] = attrs.field(factory=Counter)
    findings: dict[tuple[str, str], Finding] = attrs.field(factory=dict)
    aborted: str | None = None

    @property
    def ok(self) -> bool:
        """True when the run had no finding and was not aborted."""
        return not self.findings and self.aborted is None

    def add(self, finding: Finding) -> None:
        """Count ``finding``; keep the smallest input seen for its (check, label)."""
        key = (finding.check, finding.label)
        old = self.findings.get(key)
        if old is None:
            self.findings[key] = finding
            return
        old.count += 1
        if len(finding.data) < len(old.data):
            old.data, old.observed, old.half_close, old.splits = (
                finding.data,
                finding.observed,
                finding.half_close,
                finding.splits,
            )

    def to_json(self) -> dict[str, Any]:
        """The whole report as a JSON-ready dict."""
        return {
            "protocol": self.protocol,
            "address": self.address,
            "seed": self.seed,
            "budget_seconds": self.seconds,
            "elapsed_seconds": round(self.elapsed, 3),
            "cases": {"malformed": self.malformed, "valid": self.valid, "probes": self.probes},
            "labels": dict(sorted(self.labels.items())),
            "answers": dict(sorted(self.answers.items())),
            "aborted": self.aborted,
            "ok": self.ok,
            "findings": [f.to_json() for f in self.findings.values()],
        }

    def write_json(self, path: str) -> None:
        """Write ``to_json()`` to ``path``; raises ``OSError`` if the file cannot be written."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, indent=2)
            out.write("\n")

    def summary(self) -> str:
        """The human-readable report: counts, then each finding with its smallest input."""
        lines = [
            f"fuzz {self.protocol} at {self.address} (seed {self.seed}): "
            f"{self.malformed} malformed, {self.valid} valid, {self.probes} probes "
            f"in {self.elapsed:.1f} s",
            f"rules exercised: {len(self.labels)}",
        ]
        if self.aborted:
            lines.append(f"ABORTED: {self.aborted}")
        if not self.findings:
            lines.append("no findings")
        for finding in self.findings.values():
            lines.append(
                f"FINDING {finding.check} [{finding.label}] x{finding.count}: expected "
                f"{finding.expected}; observed {finding.observed}"
            )
            suffix = " (then end of stream)" if finding.half_close else ""
            if finding.splits:
                suffix += f" (sent in pieces at {list(finding.splits)})"
            lines.append(f"    smallest input ({len(finding.data)} bytes){suffix}: "
                         f"{finding.data[:120]!r}")  # fmt: skip
        return "\n".join(lines)


@attrs.define
class _Outcome:
    answer: Answer
    status: str  # answered | closed | reset | timeout | too_large | garbage | refused
    sock: socket.socket | None = None


class _Driver:
    def __init__(
        self,
        target: Target,
        address: tuple[str, int],
        deadline: float,
        case_timeout: float,
        max_reply: int,
    ) -> None:
        self.target = target
        self.address = address
        self.deadline = deadline
        self.case_timeout = case_timeout
        self.max_reply = max_reply
        self.random = random.Random(0)
        self.splits: tuple[int, ...] = ()

    def _limit(self) -> float:
        # Never past the budget by more than one case time-out.
        return time.monotonic() + self.case_timeout

    def exchange(
        self,
        sent: Malformed | Valid,
        *,
        wait_close: bool,
        sock: socket.socket | None = None,
    ) -> _Outcome:
        """Send ``sent`` (on ``sock`` or a fresh connection) and read the answer."""
        reader = self.target.reader(sent)
        answer = Answer()
        end = self._limit()
        if sock is None:
            try:
                sock = socket.create_connection(self.address, timeout=self.case_timeout)
            except OSError as exc:
                return _Outcome(answer, f"refused ({exc.__class__.__name__})")
        half_close = isinstance(sent, Malformed) and sent.half_close
        try:
            sock.settimeout(self.case_timeout)
            try:
                self._send(sock, sent.data)
                if half_close:
                    sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may close before reading everything: read what it said
            total = 0
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    status = "timeout"
                    break
                sock.settimeout(left)
                try:
                    data = sock.recv(65536)
                except TimeoutError:
                    status = "timeout"
                    break
                except OSError:
                    status = "reset"
                    break
                if not data:
                    answer = reader.feed(b"")
                    status = "garbage" if answer.problem else "closed"
                    break
                total += len(data)
                if total > self.max_reply:
                    status = "too_large"
                    break
                answer = reader.feed(data)
                if answer.problem:
                    status = "garbage"
                    break
                if answer.finished:
                    status = "closed" if answer.complete else "answered"
                    break
                if answer.complete and not wait_close:
                    return _Outcome(answer, "answered", sock)
        except OSError:
            status = "reset"
        sock.close()
        return _Outcome(answer, status)

    def _send(self, sock: socket.socket, data: bytes) -> None:
        """Send ``data``, half of the time in pieces cut inside headers (a short pause each)."""
        self.splits = ()
        if len(data) > 2 and self.random.random() < 0.5:
            count = self.random.randint(1, 3)
            self.splits = tuple(
                sorted({self.random.randrange(1, min(len(data), 64)) for _ in range(count)})
            )
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        edges = (0, *self.splits, len(data))
        for start, end in itertools.pairwise(edges):
            if start:
                time.sleep(0.002)
            sock.sendall(data[start:end])

    def check_malformed(self, case: Malformed, report: Report) -> None:
        out = self.exchange(case, wait_close=case.fatal)
        splits = self.splits
        answer = out.answer
        report.answers[f"{out.status}:{answer.code}"] += 1

        def find(check: str, expected: str, observed: str) -> None:
            report.add(
                Finding(check, case.label, expected, observed, case.data, case.half_close, splits)
            )

        seen = f"{out.status}; {answer.summary or 'no reply'}"
        if answer.problem:
            find("well-formed reply", "a reply our codec can read", f"{answer.problem}")
        elif out.status == "too_large":
            find("bounded reply", f"at most {self.max_reply} bytes", "more")
        elif out.status.startswith("refused"):
            find("connect", "the server accepts connections", out.status)
        elif answer.complete and answer.code is None:
            find("malformed input refused", f"error {case.code}", seen)
        elif answer.complete and answer.code != case.code:
            find("right error code", f"error {case.code}", seen)
        elif case.reply and not answer.complete:
            what = "hang: no answer" if out.status == "timeout" else out.status
            find("error reply sent", f"error {case.code}", f"{what} within {self.case_timeout} s")
        elif case.fatal and out.status == "timeout":
            find("connection closed after a fatal error", "end of stream", seen)
        if not case.fatal:
            if out.sock is None:
                if not answer.problem and out.status != "too_large":
                    find("connection kept after a recoverable error", "open", out.status)
                return
            follow = self.target.follow_up(case)
            if follow is None:
                out.sock.close()
                return
            again = self.exchange(follow, wait_close=False, sock=out.sock)
            if again.sock is not None:
                again.sock.close()
            if not again.answer.complete or again.answer.code is not None:
                find(
                    "served after a recoverable error",
                    f"an answer to {follow.label}",
                    f"{again.status}; {again.answer.summary or 'no reply'}",
                )

    def check_valid(self, case: Valid, report: Report, *, probe: bool = False) -> bool:
        out = self.exchange(case, wait_close=False)
        if out.sock is not None:
            out.sock.close()
        answer = out.answer
        report.answers[f"{'probe' if probe else 'valid'}:{out.status}:{answer.code}"] += 1
        good = answer.complete and not answer.problem and (answer.code is None or not probe)
        if good and answer.code is not None and answer.code in case.forbidden:
            report.add(
                Finding(
                    "edge case accepted",
                    case.label,
                    f"a reply other than {answer.code}",
                    answer.summary,
                    case.data,
                    splits=self.splits,
                )
            )
            return True
        if not good:
            check = "valid traffic still served" if probe else "valid request answered"
            report.add(
                Finding(
                    check,
                    case.label,
                    "a well-formed answer" + (" (no error)" if probe else ""),
                    f"{out.status}; {answer.problem or answer.summary or 'no reply'}",
                    case.data,
                )
            )
        return good


def fuzz(
    target: Target,
    host: str,
    port: int,
    *,
    seconds: float = 10.0,
    seed: int = 0,
    case_timeout: float = 2.0,
    max_reply: int = 1 << 20,
    probe_every: int = 10,
) -> Report:
    """Fuzz the server at ``host:port`` for ``seconds`` (plus at most two case time-outs)."""
    began = time.monotonic()
    deadline = began + seconds
    report = Report(target.name, f"{host}:{port}", seed, seconds)
    driver = _Driver(target, (host, port), deadline, case_timeout, max_reply)
    driver.random.seed(seed)
    for request in target.setup():
        driver.check_valid(request, report)
    probe = target.probe()
    failures = 0
    batch = 0
    cases: list[Malformed | Valid] = []
    done = 0
    while time.monotonic() < deadline:
        if not cases:
            mixed = st.one_of(target.malformed(), target.malformed(), target.valid())
            cases = list(draw(mixed, BATCH, seed * 1_000_003 + batch))
            batch += 1
            if not cases:
                break
        case = cases.pop(0)
        if isinstance(case, Malformed):
            report.malformed += 1
            report.labels[case.label] += 1
            driver.check_malformed(case, report)
        else:
            report.valid += 1
            driver.check_valid(case, report)
        done += 1
        if done % probe_every == 0 and time.monotonic() < deadline:
            report.probes += 1
            failures = 0 if driver.check_valid(probe, report, probe=True) else failures + 1
            if failures >= 3:
                report.aborted = "the server stopped serving valid traffic (3 probes failed)"
                break
    if report.aborted is None:
        report.probes += 1
        driver.check_valid(probe, report, probe=True)
    report.elapsed = time.monotonic() - began
    return report
