"""The first stage of :func:`checks.certify.certify`: compiled interval search, then an arb re-check.

:func:`compiled_search` runs :func:`numerics.intervals.branch_and_bound` (double-precision
interval arithmetic, outward rounded, one numba kernel for every expression) over the starting
boxes, then proves every box it closed again in arb ball arithmetic (:mod:`checks._arb_tape`),
with the same test. What it returns:

* a confirmed counterexample (a box centre where the margin is certainly on the wrong side,
  confirmed by the caller's arb point evaluation), or
* the volume proven (every closing box confirmed in arb), the volume excluded by constraints,
  the boxes to hand to the arb search (too small for doubles, undefined, a re-check that did
  not confirm, a candidate that arb did not confirm) and the boxes the budget left unvisited.

Budgets are counted in boxes, so the same call gives the same result on any machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb

from checks._arb_tape import ball_function, box_balls
from numerics import intervals as I


@dataclass
class CompiledResult:
    """What the compiled stage proved and what it hands on (boxes as tuples of (lo, hi) Fractions).

    ``handed_on`` holds (box, why) pairs; ``open_region`` holds the boxes left open that are not
    returned (the whole queue the budget left, and the boxes handed on beyond ``keep_handed_on``).
    """

    counterexample: tuple[Fraction, ...] | None = None
    n_boxes: int = 0
    certified_volume: float = 0.0
    excluded_volume: float = 0.0
    min_lower: float | None = None
    handed_on: list = field(default_factory=list)
    open_region: OpenRegion | None = None
    unvisited: list = field(default_factory=list)
    n_handed_on: int = 0
    leaves: int = 0
    recheck_failed: int = 0
    #: the volume the compiled search closed but did not re-prove (it ran out of boxes or time)
    unconfirmed_volume: float = 0.0
    timed_out: bool = False
    kinds: set = field(default_factory=set)


class CompiledProblem:
    """The margin and constraints of a problem on one tape, with its arb re-check functions."""

    def __init__(self, margin_expr, constraint_exprs, constraint_strict, symbols, strict: bool):
        self.tape = I.compile_tape([margin_expr, *constraint_exprs], symbols)
        self.strict = strict
        self.con_slots = np.array(self.tape.outputs[1:], dtype=np.int64)
        self.con_strict = np.array(constraint_strict, dtype=np.bool_)
        self._value = None
        self._grad = None

    # the arb functions are built on first use, under the caller's working precision
    def value(self, balls):
        if self._value is None:
            self._value = ball_function(self.tape, with_grad=False)
        return self._value(balls)[0]

    def gradient(self, balls):
        if self._grad is None:
            self._grad = ball_function(self.tape, with_grad=True)
        return self._grad(balls)[1][0]

    def ok(self, ball: arb) -> bool:
        return bool(ball > 0) if self.strict else bool(ball >= 0)

    def centre_margins(self, points: np.ndarray) -> np.ndarray:
        """The margin's float value at each row of ``points`` (NaN where it is undefined or a constraint
        certainly fails)."""
        t = self.tape
        points = np.ascontiguousarray(points, dtype=float)
        return I.centre_values(t.ops, t.const_lo, t.const_hi, points, points, t.outputs[0], self.con_slots,
                               self.con_strict)


def _outward(box) -> tuple[np.ndarray, np.ndarray]:
    lo = np.array([I.float_enclosure(a)[0] for a, _ in box])
    hi = np.array([I.float_enclosure(b)[1] for _, b in box])
    return lo, hi


def _fractions(lo, hi) -> tuple:
    return tuple((Fraction(float(a)), Fraction(float(b))) for a, b in zip(lo, hi, strict=True))


def _volume(lo, hi, widths):
    """The volume of a box (or of each row of ``lo``, ``hi``) as a fraction of the region's (``widths``)."""
    return np.prod(np.where(hi > lo, (hi - lo) / widths, 1.0), axis=-1)


class OpenRegion:
    """Where a search left boxes uncertified: the hull of the boxes (per variable, the least lower
    and the greatest upper end, doubles rounded outward), their number by why, their volume (a
    fraction of the region's) and, given ``margin`` (a function of an array of points, one per
    row, returning the margin's float value at each), the smallest margin at the boxes' centres
    and where it is: close to 0 there, the boxes touch a set where the inequality is tight."""

    #: rows taken at a time, so that a queue of millions of boxes is summed without large copies
    BLOCK = 65_536

    def __init__(self, region: tuple, margin: Callable[[np.ndarray], np.ndarray] | None = None):
        region_lo, region_hi = _outward(region)
        self.widths = np.where(region_hi > region_lo, region_hi - region_lo, 1.0)
        self.lo = np.full(len(region), np.inf)
        self.hi = np.full(len(region), -np.inf)
        self.why: Counter = Counter()
        self.volume = 0.0
        self.margin = margin
        #: the smallest finite margin at an open box's centre, and that centre
        self.smallest: float | None = None
        self.smallest_at: np.ndarray | None = None

    def add(self, lo: np.ndarray, hi: np.ndarray, why: str) -> None:
        """Add the boxes given as rows of ``lo`` and ``hi`` (doubles), all open for the same reason."""
        for k in range(0, len(lo), self.BLOCK):
            a, b = lo[k:k + self.BLOCK], hi[k:k + self.BLOCK]
            self.lo = np.minimum(self.lo, a.min(axis=0))
            self.hi = np.maximum(self.hi, b.max(axis=0))
            self.volume += float(_volume(a, b, self.widths).sum())
            if self.margin is not None and len(a):
                centres = 0.5 * a + 0.5 * b
                with np.errstate(all="ignore"):
                    values = np.asarray(self.margin(centres), dtype=float)
                values = np.where(np.isfinite(values), values, np.inf)
                i = int(np.argmin(values))
                if np.isfinite(values[i]) and (self.smallest is None or values[i] < self.smallest):
                    self.smallest, self.smallest_at = float(values[i]), centres[i].copy()
        if len(lo):
            self.why[why] += len(lo)

    def add_box(self, box: tuple, why: str) -> None:
        """Add one box of exact (lo, hi) pairs."""
        lo, hi = _outward(box)
        self.add(lo[None, :], hi[None, :], why)


def _recheck(problem: CompiledProblem, kind: int, lo, hi, aux, interval_margin=None) -> float | None:
    """The arb lower bound that re-proves a closed leaf (0.0 for an excluded one), or None.

    A leaf the natural extension closed that the balls do not confirm is tried once more with
    ``interval_margin(lo, hi)`` (arb intervals with exact ends, when given): a ball cannot hold an
    end at exactly 0 (python-flint rounds its radius up), so a product of factors whose intervals
    end at 0, closed exactly by the doubles, needs exact ends to be confirmed."""
    balls = box_balls(lo, hi)
    if kind == I.INTERVAL:
        m = problem.value(balls)[0]
        if problem.ok(m):
            return float(m.lower())
        if interval_margin is not None:
            lower = interval_margin(lo, hi)
            if lower is not None and problem.ok(lower):
                return float(lower)
        return None
    if kind == I.EXCLUDED:
        values = problem.value(balls)[1:]
        for v, strict in zip(values, problem.con_strict, strict=True):
            if (v <= 0) if strict else (v < 0):
                return 0.0
        return None
    grads = problem.gradient(balls)
    if kind == I.MEAN_VALUE:
        centre = [float(c) for c in aux]
        total = problem.value([arb(c) for c in centre])[0]
        for g, a, b, c in zip(grads, lo, hi, centre, strict=True):
            if b > a:
                total += g * (arb(float(a)) - arb(c)).union(arb(float(b)) - arb(c))
        return float(total.lower()) if problem.ok(total) else None
    face_lo, face_hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    for j, (g, pin) in enumerate(zip(grads, aux, strict=True)):
        if pin < 0:
            if not g >= 0:
                return None
            face_hi[j] = lo[j]
        elif pin > 0:
            if not g <= 0:
                return None
            face_lo[j] = hi[j]
    m = problem.value(box_balls(face_lo, face_hi))[0]
    return float(m.lower()) if problem.ok(m) else None


#: boxes per call of the compiled kernel between two looks at the clock
CHUNK = 10_000
#: rows of the compiled search's queue at most: 3·10⁶ boxes of 6 variables take 288 MB (two arrays of
#: doubles). A budget that could fill more gets this many, and the search falls back to depth-first
#: when the queue is nearly full (see :func:`numerics.intervals.branch_and_bound`)
QUEUE_BOXES = 3_000_000

_KIND_NAMES = {I.INTERVAL: "compiled", I.MEAN_VALUE: "compiled mean-value", I.MONOTONE: "compiled monotonicity",
               I.EXCLUDED: "compiled"}
#: why a box is open: the codes of branch_and_bound, and the boxes the budget left in the queue
WHY_NAMES = {I.TOO_SMALL: "too small", I.UNDEFINED: "undefined", I.CANDIDATE: "unconfirmed candidate",
             I.UNRESOLVED_CENTRE: "unresolved centre", I.PRECISION_LIMIT: "precision limit", I.FACE: "face"}
UNVISITED = "unvisited"
RECHECK_FAILED = "arb re-check failed"
NOT_RECHECKED = "not re-checked (time)"


def compiled_search(
    problem: CompiledProblem, boxes: list, region: tuple, *, min_width: float, max_boxes: int,
    confirm: Callable[[tuple[Fraction, ...]], bool], keep_handed_on: int, keep_unvisited: int,
    expired: Callable[[], bool] = lambda: False, interval_margin: Callable | None = None,
) -> CompiledResult:
    """Search ``boxes`` (exact (lo, hi) pairs) with at most ``max_boxes`` boxes, re-check, and report.

    ``region`` gives the widths that ``min_width`` is relative to; ``confirm(point)`` decides a
    candidate counterexample in arb (True: a confirmed violation). Of the boxes handed on and
    of those left unvisited, only the first ``keep_handed_on`` and ``keep_unvisited`` are
    returned (the arb search could not take more within its budget); ``n_handed_on`` counts
    all the boxes handed on, and ``open_region`` takes in those not returned. ``expired()`` is
    the caller's safety cap on time, asked every :data:`CHUNK` boxes of the search and every 256
    re-checks of closed boxes. ``interval_margin(lo, hi)``, when given, is the arb lower end of the
    margin on the box with exact ends (or None), the second try of a re-check (see :func:`_recheck`).
    """
    result = CompiledResult(open_region=OpenRegion(region, problem.centre_margins))
    nv = len(region)
    region_lo, region_hi = _outward(region)
    widths = np.where(region_hi > region_lo, region_hi - region_lo, 1.0)
    # one row of leaves or open boxes per box searched; the queue at most QUEUE_BOXES rows (and
    # room to spare for the depth-first fallback when the budget alone could fill it)
    rows = max_boxes + len(boxes) + 1
    queue_rows = min(rows + I.DEPTH_RESERVE * nv, QUEUE_BOXES)
    queue_lo = np.empty((queue_rows, nv))
    queue_hi = np.empty((queue_rows, nv))
    for i, box in enumerate(boxes):
        queue_lo[i], queue_hi[i] = _outward(box)
    leaf_lo, leaf_hi = np.empty((rows, nv)), np.empty((rows, nv))
    leaf_kind = np.zeros(rows, dtype=np.int64)
    leaf_aux = np.zeros((rows, nv))
    open_lo, open_hi = np.empty((rows, nv)), np.empty((rows, nv))
    open_why = np.zeros(rows, dtype=np.int64)
    state = np.array([len(boxes), 0, 0, 0, 0, 0], dtype=np.int64)
    candidate = np.empty(nv)
    t = problem.tape
    while True:
        # in chunks of boxes, so that the caller's safety cap on time is looked at in between
        limit = min(max_boxes, int(state[3]) + CHUNK)
        I.branch_and_bound(t.ops, t.const_lo, t.const_hi, t.outputs[0], problem.con_slots, problem.con_strict,
                           problem.strict, queue_lo, queue_hi, region_lo, region_hi, min_width, limit,
                           leaf_lo, leaf_hi, leaf_kind, leaf_aux, open_lo, open_hi, open_why, state, candidate)
        if state[4] == I.BUDGET and limit < max_boxes:
            if expired():
                result.timed_out = True
                break
            continue
        if state[4] != I.FOUND:
            break
        point = tuple(Fraction(float(c)) for c in candidate)
        if all(lo <= p <= hi for p, (lo, hi) in zip(point, region, strict=True)) and confirm(point):
            result.counterexample = point
            result.n_boxes = int(state[3])
            return result
    n_queue, n_leaf, n_open, n_boxes, _, head = (int(v) for v in state)
    result.n_boxes = n_boxes
    result.leaves = n_leaf
    result.unvisited = [_fractions(queue_lo[i % queue_rows], queue_hi[i % queue_rows])
                        for i in range(head, head + min(n_queue, keep_unvisited))]
    # the queue's rows head … head + n_queue − 1, wrapping around
    for a, b in ((head, min(head + n_queue, queue_rows)), (0, max(0, head + n_queue - queue_rows))):
        result.open_region.add(queue_lo[a:b], queue_hi[a:b], UNVISITED)
    if n_queue:
        # the budget ran out: the search cannot end in a certificate, so its closed boxes are
        # not re-proven in arb (that costs more than the search) and count for nothing
        result.unconfirmed_volume = sum(_volume(leaf_lo[i], leaf_hi[i], widths) for i in range(n_leaf)
                                        if leaf_kind[i] != I.EXCLUDED)
        n_leaf = 0
    for i in range(n_leaf):
        if i % 256 == 0 and expired():
            result.timed_out = True
            result.unconfirmed_volume += sum(_volume(leaf_lo[k], leaf_hi[k], widths) for k in range(i, n_leaf))
            result.handed_on += [(_fractions(leaf_lo[k], leaf_hi[k]), NOT_RECHECKED)
                                 for k in range(i, min(n_leaf, i + keep_handed_on))]
            break
        kind = int(leaf_kind[i])
        lower = _recheck(problem, kind, leaf_lo[i], leaf_hi[i], leaf_aux[i], interval_margin)
        if lower is None:
            result.recheck_failed += 1
            result.handed_on.append((_fractions(leaf_lo[i], leaf_hi[i]), RECHECK_FAILED))
            continue
        volume = _volume(leaf_lo[i], leaf_hi[i], widths)
        if kind == I.EXCLUDED:
            result.excluded_volume += volume
            continue
        result.kinds.add(_KIND_NAMES[kind])
        result.certified_volume += volume
        if result.min_lower is None or lower < result.min_lower:
            result.min_lower = lower
    result.handed_on += [(_fractions(open_lo[i], open_hi[i]), WHY_NAMES[int(open_why[i])])
                         for i in range(min(n_open, keep_handed_on))]
    for code in np.unique(open_why[keep_handed_on:n_open]):
        beyond = keep_handed_on + np.flatnonzero(open_why[keep_handed_on:n_open] == code)
        result.open_region.add(open_lo[beyond], open_hi[beyond], WHY_NAMES[int(code)])
    result.n_handed_on = len(result.handed_on) + max(0, n_open - keep_handed_on)
    return result
