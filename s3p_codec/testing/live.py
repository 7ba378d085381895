"""Drive generated valid and malformed traffic at a running server and check every answer.

::

    from s3p_codec.testing import live, s3p as s3p_cases

    report = live.fuzz(s3p_cases.Target(), "127.0.0.1", 7500, seconds=10, seed=1)
    print(report.summary())              # readable; report.to_json() for the JSON document

Scheduling is by rule, so that a short run (a CI budget of seconds) is systematic rather than
lucky. A target's ``rules()`` names its rule families (each strategy of the protocol's cases:
every group of malformed cases, every request type, the edge cases). Every rule runs once, in
an order fixed by the seed, before any runs twice; the rest of the budget goes to fresh draws,
weighted toward rules whose cases failed. Within a rule, a case whose label has not run yet is
preferred, so the labels of a rule are visited before any is repeated. A target without
``rules()`` has two: its ``malformed()`` and its ``valid()``.

Each case goes on a fresh TCP connection. For a malformed case the server must answer the
error its ``Malformed`` names (right code), end the conversation when the error is fatal or
keep serving when it is not, and do so within the case time-out. Every ``probe_every`` cases a
fresh connection sends the target's probe, which must be answered normally: valid traffic is
still served after the malformed one. Valid cases must get a well-formed answer.

Waiting is what makes a run slow, so it is cut two ways. The case time-out adapts to the
server: ``ANSWER_FACTOR`` times the slow end (95th percentile) of its measured answer times,
never under ``timeout_floor`` and never over ``case_timeout`` (which also holds until enough
answers are measured), plus a second per MB of the case. A case is judged to hang at that
time-out only when a case sent after it has been answered (the server serves newer
connections and not this one); otherwise it waits up to ``case_timeout``, since the server
may be slow rather than hanging, and a short time-out would blame the case for its load.
And up to ``parallel`` cases are in flight at once, each on its own connection, so a server
that hangs on some cases holds a slot each, not the whole run. The first hang of each rule
is sent again with ``case_timeout`` and believed only if it hangs there too.

The driver defends itself: every read has a time-out, at most ``max_reply`` bytes of an answer
are read (a reply announcing a gigabyte is refused by the client-role codec from its header, or
cut at the cap), resets and garbage are findings, not crashes. Cases come from the target's
hypothesis strategies with a fixed seed, so the same seed against the same server sends the
same cases (the order they finish in, and so the weighting after the first round, follows the
server). Failures are grouped by check and label, keeping the smallest failing byte sequence
of each group. The report lists every rule with its runs, the labels it reached and what it
found, and names the rules the run did not reach.
"""

from __future__ import annotations

import itertools
import json
import random
import socket
import threading
import time
import zlib
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from s3p_codec.testing._strategies import Answer, Malformed, Valid
from s3p_codec.testing.target import Target

__all__ = ["ANSWER_FACTOR", "Finding", "Report", "RuleStats", "draw", "fuzz", "rules_of"]

T = TypeVar("T")
BATCH = 24
#: A case times out at this many times the server's slow end (95th percentile) of answer times:
#: generous enough that a busy but healthy server is not reported as hanging.
ANSWER_FACTOR = 10.0
SAMPLES = 64  # answer times kept for the adaptive time-out
MIN_SAMPLES = 5  # answers measured before the time-out adapts
BYTES_PER_SECOND = 1_000_000  # added to a case's time-out for its size
Case = Malformed | Valid
STOPPED = "the server stopped serving valid traffic (3 probes failed)"


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


def rules_of(target: Target) -> dict[str, st.SearchStrategy[Any]]:
    """The rule families of ``target``: its ``rules()``, or ``malformed`` and ``valid`` for a
    target written without one."""
    rules = getattr(target, "rules", None)
    if callable(rules):
        named: dict[str, st.SearchStrategy[Any]] = dict(rules())
        return named
    return {"malformed": target.malformed(), "valid": target.valid()}


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
    rule: str = ""

    def to_json(self) -> dict[str, Any]:
        """This finding as a JSON-ready dict (the smallest input in hex and repr)."""
        return {
            "check": self.check,
            "label": self.label,
            "rule": self.rule,
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
class RuleStats:
    """What one rule family did in a run: cases run, labels reached, cases that failed and the
    checks they failed."""

    runs: int = 0
    failed: int = 0
    labels: Counter[str] = attrs.field(factory=Counter)
    checks: Counter[str] = attrs.field(factory=Counter)
    note: str | None = None  # why the rule could not run (no case could be drawn)

    def to_json(self) -> dict[str, Any]:
        """This rule's figures as a JSON-ready dict."""
        return {
            "runs": self.runs,
            "failed": self.failed,
            "labels": dict(sorted(self.labels.items())),
            "checks_failed": dict(sorted(self.checks.items())),
            "note": self.note,
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
    rules: dict[str, RuleStats] = attrs.field(factory=dict)
    timeouts: list[float] = attrs.field(factory=list)  # the case time-out, first and last

    @property
    def ok(self) -> bool:
        """True when the run had no finding and was not aborted."""
        return not self.findings and self.aborted is None

    @property
    def not_reached(self) -> list[str]:
        """The rules that did not run once in this run."""
        return [name for name, stats in self.rules.items() if not stats.runs]

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
            "case_timeout_seconds": [round(t, 3) for t in self.timeouts],
            "rules": {name: stats.to_json() for name, stats in self.rules.items()},
            "rules_reached": len(self.rules) - len(self.not_reached),
            "rules_not_reached": self.not_reached,
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
        """The human-readable report: counts, every rule, then each finding with its smallest
        input."""
        missing = self.not_reached
        lines = [
            f"fuzz {self.protocol} at {self.address} (seed {self.seed}): "
            f"{self.malformed} malformed, {self.valid} valid, {self.probes} probes "
            f"in {self.elapsed:.1f} s",
            f"rules reached: {len(self.rules) - len(missing)} of {len(self.rules)}"
            f" ({len(self.labels)} malformed labels)",
        ]
        if self.timeouts:
            first, last = self.timeouts[0], self.timeouts[-1]
            lines.append(f"case time-out: {first:.2f} s at the start, {last:.2f} s at the end")
        lines.append("   runs  labels  failed  rule")
        for name, stats in self.rules.items():
            checks = ", ".join(f"{check} x{n}" for check, n in stats.checks.most_common())
            tail = f"  ({checks})" if checks else ""
            if stats.note:
                tail += f"  [{stats.note}]"
            lines.append(
                f"  {stats.runs:5d}  {len(stats.labels):6d}  {stats.failed:6d}  {name}{tail}"
            )
        if missing:
            lines.append(f"NOT REACHED ({len(missing)}): " + "; ".join(missing))
        elif self.rules:
            lines.append("every rule ran at least once")
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
    took: float | None = None  # seconds from the last byte sent to the answer (or close)
    waited: float = 0.0  # seconds from the last byte sent to the verdict


@attrs.define
class _Result:
    """What one case did, handed from its worker thread to the scheduler."""

    rule: str
    case: Case
    probe: bool
    answer_key: str
    findings: list[Finding]
    good: bool
    took: list[float]


class _Clock:
    """The adaptive case time-out: ``ANSWER_FACTOR`` times the 95th percentile of the last
    answer times, between the floor and the ceiling (the ceiling until enough are measured)."""

    def __init__(self, floor: float, ceiling: float) -> None:
        self.floor = min(floor, ceiling)
        self.ceiling = ceiling
        self.samples: deque[float] = deque(maxlen=SAMPLES)

    def add(self, took: float) -> None:
        self.samples.append(took)

    def timeout(self) -> float:
        if len(self.samples) < MIN_SAMPLES:
            return self.ceiling
        ordered = sorted(self.samples)
        slow = ordered[int(0.95 * (len(ordered) - 1))]
        return min(self.ceiling, max(self.floor, ANSWER_FACTOR * slow))


class _Driver:
    """Runs one case on its own connection; thread-safe (the cases share only ``newest``,
    under a lock)."""

    def __init__(
        self, target: Target, address: tuple[str, int], max_reply: int, ceiling: float
    ) -> None:
        self.target = target
        self.address = address
        self.max_reply = max_reply
        self.ceiling = ceiling
        self.newest = 0.0  # when the newest case that got an answer was sent (monotonic)
        self.confirmed: set[str] = set()  # rules with a hang confirmed at the ceiling
        self.lock = threading.Lock()

    def judged(
        self, rule: str, sent: Case, *, wait_close: bool, timeout: float, splits: tuple[int, ...]
    ) -> _Outcome:
        """``exchange``, but the first hang of each rule under a time-out shorter than the
        ceiling is sent again with the ceiling: only a hang seen there too is believed (later
        hangs of that rule are believed at once), so a loaded server is not blamed."""
        out = self.exchange(sent, wait_close=wait_close, timeout=timeout, splits=splits)
        if out.status != "timeout" or timeout >= self.ceiling or rule in self.confirmed:
            return out
        if out.sock is not None:
            out.sock.close()
        again = self.exchange(sent, wait_close=wait_close, timeout=self.ceiling, splits=splits)
        if again.status == "timeout":
            with self.lock:
                self.confirmed.add(rule)
        return again

    def _stalled(self, sent_at: float) -> bool:
        """No case sent after this one has been answered: the server may be slow rather than
        hanging on this case, so the short time-out would blame the case for its load."""
        return self.newest <= sent_at

    def exchange(
        self,
        sent: Case,
        *,
        wait_close: bool,
        timeout: float,
        splits: tuple[int, ...] = (),
        sock: socket.socket | None = None,
    ) -> _Outcome:
        """Send ``sent`` (on ``sock`` or a fresh connection) and read the answer."""
        reader = self.target.reader(sent)
        answer = Answer()
        if sock is None:
            try:
                sock = socket.create_connection(self.address, timeout=timeout)
            except OSError as exc:
                return _Outcome(answer, f"refused ({exc.__class__.__name__})")
        half_close = isinstance(sent, Malformed) and sent.half_close
        sent_at = time.monotonic()
        # A big case may take its time to be read: one second per MB on top.
        timeout = min(self.ceiling, timeout + len(sent.data) / BYTES_PER_SECOND)
        end = sent_at + timeout
        extended = False
        took: float | None = None
        try:
            sock.settimeout(timeout)
            try:
                _send(sock, sent.data, splits)
                if half_close:
                    sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may close before reading everything: read what it said
            sent_at = time.monotonic()
            total = 0
            while True:
                left = end - time.monotonic()
                if left <= 0 and not extended and self._stalled(sent_at):
                    extended, end = True, sent_at + self.ceiling  # wait as long as allowed
                    left = end - time.monotonic()
                if left <= 0:
                    status = "timeout"
                    break
                sock.settimeout(left)
                try:
                    data = sock.recv(65536)
                except TimeoutError:
                    continue  # the time left decides
                except OSError:
                    status = "reset"
                    break
                if not data:
                    answer = reader.feed(b"")
                    status = "garbage" if answer.problem else "closed"
                    took = self._answered(sent_at)
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
                    took = self._answered(sent_at)
                    break
                if answer.complete and not wait_close:
                    return _Outcome(answer, "answered", sock, self._answered(sent_at))
        except OSError:
            status = "reset"
        sock.close()
        return _Outcome(answer, status, None, took, time.monotonic() - sent_at)

    def _answered(self, sent_at: float) -> float:
        """Note an answer now; return how long it took."""
        with self.lock:
            self.newest = max(self.newest, sent_at)
        return time.monotonic() - sent_at

    def check_malformed(
        self, rule: str, case: Malformed, timeout: float, splits: tuple[int, ...]
    ) -> _Result:
        """Send a malformed case and judge the answer (and the follow-up when recoverable)."""
        out = self.judged(rule, case, wait_close=case.fatal, timeout=timeout, splits=splits)
        answer = out.answer
        result = _Result(rule, case, False, f"{out.status}:{answer.code}", [], True, [])
        if out.took is not None:
            result.took.append(out.took)

        def find(check: str, expected: str, observed: str) -> None:
            result.findings.append(
                Finding(
                    check, case.label, expected, observed, case.data, case.half_close, splits,
                    rule=rule,
                )
            )  # fmt: skip

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
            find("error reply sent", f"error {case.code}", f"{what} within {out.waited:.2f} s")
        elif case.fatal and out.status == "timeout":
            find("connection closed after a fatal error", "end of stream",
                 f"{seen} (still open {out.waited:.2f} s after)")  # fmt: skip
        if not case.fatal:
            if out.sock is None:
                if not answer.problem and out.status != "too_large":
                    find("connection kept after a recoverable error", "open", out.status)
                return result
            follow = self.target.follow_up(case)
            if follow is None:
                out.sock.close()
                return result
            again = self.exchange(follow, wait_close=False, timeout=timeout, sock=out.sock)
            if again.sock is not None:
                again.sock.close()
            if not again.answer.complete or again.answer.code is not None:
                find(
                    "served after a recoverable error",
                    f"an answer to {follow.label}",
                    f"{again.status}; {again.answer.summary or 'no reply'}",
                )
        result.good = not result.findings
        return result

    def check_valid(
        self, rule: str, case: Valid, timeout: float, splits: tuple[int, ...], *, probe: bool
    ) -> _Result:
        """Send a valid case (or the probe) and judge the answer."""
        out = self.judged(rule, case, wait_close=False, timeout=timeout, splits=splits)
        if out.sock is not None:
            out.sock.close()
        answer = out.answer
        key = f"{'probe' if probe else 'valid'}:{out.status}:{answer.code}"
        result = _Result(rule, case, probe, key, [], True, [])
        if out.took is not None:
            result.took.append(out.took)
        good = answer.complete and not answer.problem and (answer.code is None or not probe)
        if good and answer.code is not None and answer.code in case.forbidden:
            result.findings.append(
                Finding(
                    "edge case accepted",
                    case.label,
                    f"a reply other than {answer.code}",
                    answer.summary,
                    case.data,
                    splits=splits,
                    rule=rule,
                )
            )
        elif not good:
            check = "valid traffic still served" if probe else "valid request answered"
            result.findings.append(
                Finding(
                    check,
                    case.label,
                    "a well-formed answer" + (" (no error)" if probe else ""),
                    f"{out.status}; {answer.problem or answer.summary or 'no reply'}",
                    case.data,
                    rule=rule,
                )
            )
        result.good = good
        return result


def _send(sock: socket.socket, data: bytes, splits: tuple[int, ...]) -> None:
    """Send ``data``, cut at ``splits`` (inside headers) with a short pause at each cut."""
    if splits:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    edges = (0, *splits, len(data))
    for start, end in itertools.pairwise(edges):
        if start:
            time.sleep(0.002)
        sock.sendall(data[start:end])


class _Scheduler:
    """Picks the next case: every rule once (in a seeded order), then fresh draws weighted
    toward rules with failed cases; within a rule, a label not run yet first."""

    def __init__(self, rules: dict[str, st.SearchStrategy[Any]], seed: int) -> None:
        self.rules = rules
        self.seed = seed
        self.random = random.Random(seed)
        self.first = list(rules)
        self.random.shuffle(self.first)
        self.batches: dict[str, list[Case]] = {name: [] for name in rules}
        self.drawn: Counter[str] = Counter()
        self.seen: dict[str, set[str]] = {name: set() for name in rules}
        self.failed: Counter[str] = Counter()
        self.dry: set[str] = set()  # rules of which no case could be drawn

    def next(self) -> tuple[str, Case] | None:
        """The next (rule, case), or None when no rule can give one."""
        while self.first:
            name = self.first.pop(0)
            case = self._take(name)
            if case is not None:
                return name, case
        while True:
            live = [name for name in self.rules if name not in self.dry]
            if not live:
                return None
            weights = [1 + 3 * min(self.failed[name], 3) for name in live]
            name = self.random.choices(live, weights)[0]
            case = self._take(name)
            if case is not None:
                return name, case

    def _take(self, name: str) -> Case | None:
        batch = self.batches[name]
        if not batch:
            mix = zlib.crc32(name.encode()) ^ (self.seed * 1_000_003)
            batch.extend(draw(self.rules[name], BATCH, mix + self.drawn[name]))
            self.drawn[name] += 1
            if not batch:
                self.dry.add(name)
                return None
        seen = self.seen[name]
        index = next((i for i, case in enumerate(batch) if case.label not in seen), 0)
        case = batch.pop(index)
        seen.add(case.label)
        return case

    def splits(self, data: bytes) -> tuple[int, ...]:
        """Half of the time, one to three cut points inside the first 64 bytes."""
        if len(data) > 2 and self.random.random() < 0.5:
            count = self.random.randint(1, 3)
            limit = min(len(data), 64)
            return tuple(sorted({self.random.randrange(1, limit) for _ in range(count)}))
        return ()


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
    timeout_floor: float = 0.5,
    parallel: int = 8,
) -> Report:
    """Fuzz the server at ``host:port`` for ``seconds`` (plus at most the cases in flight and
    the final probe, each bounded by ``case_timeout``).

    ``case_timeout`` is the ceiling of the adaptive case time-out, ``timeout_floor`` its floor;
    ``parallel`` bounds the cases in flight at once.
    """
    began = time.monotonic()
    deadline = began + seconds
    report = Report(target.name, f"{host}:{port}", seed, seconds)
    driver = _Driver(target, (host, port), max_reply, case_timeout)
    clock = _Clock(timeout_floor, case_timeout)
    rules = rules_of(target)
    report.rules = {name: RuleStats() for name in rules}
    scheduler = _Scheduler(rules, seed)
    for request in target.setup():
        _merge(report, clock, scheduler,
               driver.check_valid("setup", request, case_timeout, (), probe=False))  # fmt: skip
    probe = target.probe()
    report.timeouts.append(clock.timeout())
    failures = 0
    done = 0
    in_flight: set[Future[_Result]] = set()
    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="fuzz") as pool:
        while time.monotonic() < deadline and report.aborted is None:
            while len(in_flight) < max(1, parallel) and time.monotonic() < deadline:
                timeout = clock.timeout()
                if done and done % probe_every == 0:
                    in_flight.add(pool.submit(
                        driver.check_valid, "probe", probe, timeout, (), probe=True))  # fmt: skip
                    report.probes += 1
                    done += 1
                    continue
                picked = scheduler.next()
                if picked is None:
                    break
                name, case = picked
                splits = scheduler.splits(case.data)
                if isinstance(case, Malformed):
                    in_flight.add(pool.submit(driver.check_malformed, name, case, timeout, splits))
                else:
                    in_flight.add(pool.submit(
                        driver.check_valid, name, case, timeout, splits, probe=False))  # fmt: skip
                done += 1
            if not in_flight:
                break
            finished, in_flight = wait(
                in_flight, timeout=max(0.0, deadline - time.monotonic()),
                return_when=FIRST_COMPLETED,
            )  # fmt: skip
            for future in finished:
                result = future.result()
                _merge(report, clock, scheduler, result)
                if result.probe:
                    failures = 0 if result.good else failures + 1
                    if failures >= 3:
                        report.aborted = STOPPED
        for future in in_flight:  # each ends within its own time-out
            _merge(report, clock, scheduler, future.result())
    if report.aborted is None:
        report.probes += 1
        _merge(report, clock, scheduler,
               driver.check_valid("probe", probe, clock.timeout(), (), probe=True))  # fmt: skip
    report.timeouts.append(clock.timeout())
    report.elapsed = time.monotonic() - began
    return report


def _merge(report: Report, clock: _Clock, scheduler: _Scheduler, result: _Result) -> None:
    """Fold one case's result into the report, the time-out and the rule weights."""
    for took in result.took:
        clock.add(took)
    case = result.case
    if result.rule in report.rules:
        stats = report.rules[result.rule]
        stats.runs += 1
        stats.labels[case.label] += 1
        if result.findings:
            stats.failed += 1
            scheduler.failed[result.rule] += 1
        for finding in result.findings:
            stats.checks[finding.check] += 1
        if isinstance(case, Malformed):
            report.malformed += 1
            report.labels[case.label] += 1
        else:
            report.valid += 1
    report.answers[result.answer_key] += 1
    for finding in result.findings:
        report.add(finding)
    for name in scheduler.dry:
        dry = report.rules.get(name)
        if dry is not None and dry.note is None:
            dry.note = "no case could be drawn"
