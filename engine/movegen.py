# SPDX-License-Identifier: MIT
"""Legal plays: every distinct position a roll can lead to, each with its play.

Legality is a property of the resulting position: two plays that leave the same position are
the same play. :func:`legal_plays` finds all of them under the full rules (bar first, as many
dice as possible, the higher die when only one can be played, doubles four times, bearing off
with the higher-die exceptions, hits).

>>> from engine.position import Position
>>> from engine.dice import Dice
>>> plays = legal_plays(Position.STARTING, Dice(6, 5))
>>> len(plays)
7
>>> sorted(str(p) for p in plays)[:3]
['13/2', '13/7 8/3', '13/8 13/7']

Written plays are read against them: the text fixes where the mover's checkers end up.

>>> after, play = plays.parse("24/18 18/13")
>>> str(play)
'24/13'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import compress
from typing import Any, Final

from engine.dice import Dice
from engine.errors import IllegalPlayError, NoSuchPlayError
from engine.play import Play, RawSteps, Step, parse_steps, play_from_steps
from engine.position import BAR, OFF, Half, Position

_DOUBLES_FOUR: Final = 4


class LegalPlays:
    """The legal plays for one position and roll, keyed by the position each leads to.

    Supports ``len``, ``in`` (a resulting :class:`Position` or a :class:`Play`) and iteration over
    the canonical :class:`Play` of each result. A position with no legal play has none (a dance);
    then :attr:`dice_used` is 0. :meth:`parse` and :meth:`resolve` find the legal play that
    written text or steps stand for.
    """

    __slots__ = (
        "_by_mover",
        "_decode",
        "_index",
        "_keys",
        "_plays",
        "_shared",
        "_steps",
        "dice",
        "dice_used",
        "position",
    )

    def __init__(
        self,
        position: Position,
        dice: Dice,
        keys: list[tuple[Half, Half]],
        steps: list[Any],
        dice_used: int,
        decode: Callable[[Any], RawSteps] | None = None,
    ) -> None:
        self.position = position
        self.dice = dice
        #: How many dice every legal play uses (0 when nothing can be played).
        self.dice_used = dice_used
        # The generators guarantee the keys are distinct; Positions and Plays are made only
        # when asked for, since most callers need just one lookup or the count.
        self._keys = keys
        self._steps = steps
        self._decode = decode
        self._plays: dict[Position, Play] | None = None
        self._index: dict[tuple[Half, Half], int] | None = None
        # The mover's checkers after each result -> that result (see :meth:`resolve`); the
        # few layouts that several results share (they differ in the hits) are in _shared.
        self._by_mover: dict[Half, int] | None = None
        self._shared: dict[Half, list[int]] = {}

    @property
    def results(self) -> dict[Position, Play]:
        """Each distinct resulting position (still seen from the mover) with its canonical play."""
        if self._plays is None:
            make = tuple.__new__
            decode = self._decode
            raw = self._steps if decode is None else map(decode, self._steps)
            self._plays = {
                make(Position, key): play_from_steps(self.position, steps)
                for key, steps in zip(self._keys, raw, strict=True)
            }
        return self._plays

    def positions(self) -> frozenset[Position]:
        """The distinct resulting positions, still seen from the side that moved."""
        make = tuple.__new__
        return frozenset(make(Position, key) for key in self._keys)

    def position_list(self) -> list[Position]:
        """The distinct resulting positions in the order found (deterministic for a given input)."""
        make = tuple.__new__
        return [make(Position, key) for key in self._keys]

    def play_for(self, after: Position) -> Play | None:
        """The canonical play that leads to ``after``, or ``None`` when none does."""
        if self._plays is not None:
            return self._plays.get(after)
        if self._index is None:
            self._index = {key: i for i, key in enumerate(self._keys)}
        i = self._index.get(after)
        if i is None:
            return None
        return self._play_at(i)

    def _play_at(self, i: int) -> Play:
        """The canonical play of the ``i``-th result."""
        if self._plays is not None:
            return self._plays[tuple.__new__(Position, self._keys[i])]
        steps = self._steps[i]
        return play_from_steps(self.position, steps if self._decode is None else self._decode(steps))

    def parse(self, text: str) -> tuple[Position, Play]:
        """The resulting position and canonical play that play ``text`` stands for.

        Reads any notation :meth:`Play.parse <engine.play.Play.parse>` reads, then
        :meth:`resolve` finds the legal play it means.

        >>> from engine.position import Position
        >>> after, play = legal_plays(Position.STARTING, Dice(3, 1)).parse("6/5 8/5")
        >>> str(play)
        '8/5 6/5'

        :raises InvalidNotationError: the text is not a play.
        :raises IllegalPlayError: no legal play moves the checkers as written.
        """
        return self.resolve(parse_steps(text))

    def resolve(self, steps: Sequence[Step]) -> tuple[Position, Play]:
        """The resulting position and canonical play that written ``steps`` stand for.

        Notation leaves things out: one checker's moves may be joined (``24/13`` for 6-5),
        hits may be unmarked (some match files never write ``*``), ``(2)`` repeats a move.
        What the steps fix is where the mover's checkers end up. When several legal results
        leave them so (they differ in what was hit), the hits are read from the text: a step
        written as landing on a blot hit it, marked or not; a ``*`` on a point with no blot
        says the checker hit on its way there (``13/5*`` for ``13/7*/5``); where the text
        cannot tell (``13/5`` past a blot), the route without a hit is taken. The Position ID
        breaks any tie left, so the answer never depends on the generator's order.

        Empty ``steps`` stand for no play, which is legal only when nothing can be played.

        :raises IllegalPlayError: a step moves from off or to the bar, or moves a checker that
            is not there.
        :raises NoSuchPlayError: no legal play for the dice moves the checkers as written.
        """
        position = self.position
        mover = list(position[0])
        for s in steps:
            if s.source == OFF or s.dest == BAR:
                raise IllegalPlayError(f"{s}: a checker cannot move from off or to the bar")
            mover[s.source - 1] -= 1
            if s.dest != OFF:
                mover[s.dest - 1] += 1
        if min(mover) < 0:
            empty = sorted({s.source for s in steps if mover[s.source - 1] < 0}, reverse=True)
            where = ", ".join("the bar" if p == BAR else str(p) for p in empty)
            raise IllegalPlayError(f"{Play(steps)}: no checker to move from {where}")
        target = tuple(mover)
        if self._by_mover is None:
            self._index_by_mover()
            assert self._by_mover is not None
        i = self._by_mover.get(target)
        if i is None:
            if not self._keys and not steps:
                return position, Play()
            raise NoSuchPlayError(f"{Play(steps) or 'no play'} is not a legal play for {self.dice.spoken()}")
        shared = self._shared.get(target)
        if shared is not None:
            i = min(shared, key=partial(self._hit_preference, _written_hits(position, steps)))
        return tuple.__new__(Position, self._keys[i]), self._play_at(i)

    def _index_by_mover(self) -> None:
        keys = self._keys
        # Most layouts come from one result only: a dict built in one pass keeps those, and
        # the rare shared ones are collected only when the sizes say there are some.
        by_mover = {key[0]: i for i, key in enumerate(keys)}
        if len(by_mover) < len(keys):
            shared: dict[Half, list[int]] = {}
            for i, key in enumerate(keys):
                shared.setdefault(key[0], []).append(i)
            self._shared = {mover: found for mover, found in shared.items() if len(found) > 1}
        # Set last: a LegalPlays may be shared (the .mat reader caches them), and another
        # thread that sees the index must see the shared layouts too.
        self._by_mover = by_mover

    def _hit_preference(self, written: _WrittenHits, i: int) -> tuple[int, int, str]:
        """How well the ``i``-th result's hits fit the ``written`` ones: the smallest fits best."""
        landed, spans = written
        before, after = self.position[1], self._keys[i][1]
        hits = {24 - j for j in range(24) if after[j] < before[j]}
        unwritten = hits - landed
        # A starred step that passed over none of the unwritten hits claims a hit that did not
        # happen; an unwritten hit that no starred step passed over is one the text never made.
        unmet = sum(1 for low, high in spans if not any(low < p < high for p in unwritten))
        unclaimed = sum(1 for p in unwritten if not any(low < p < high for low, high in spans))
        # Every blot the text lands on hit first, then the fewest hits the text does not state.
        return (0 if landed <= hits else 1, unmet + unclaimed, tuple.__new__(Position, self._keys[i]).position_id())

    def __len__(self) -> int:
        return len(self._keys)

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Position):
            return self.play_for(item) is not None
        if isinstance(item, Play):
            return item in self.results.values()
        return False

    def __iter__(self) -> Iterator[Play]:
        return iter(self.results.values())

    def __repr__(self) -> str:
        return f"<LegalPlays {self.position.position_id()} {self.dice}: {len(self)} results>"


#: The hits a written play states: the blots it lands on, and the (dest, source) span of each
#: step starred where it lands on no blot (the hit was on the way).
_WrittenHits = tuple[set[int], list[tuple[int, int]]]


def _written_hits(position: Position, steps: Sequence[Step]) -> _WrittenHits:
    opponent = position[1]
    landed: set[int] = set()
    spans: list[tuple[int, int]] = []
    for s in steps:
        # The mover's point p is the opponent's index 24 - p.
        if s.dest != OFF and opponent[24 - s.dest] == 1:
            landed.add(s.dest)
        elif s.hit:
            spans.append((s.dest, s.source))
    return landed, spans


def legal_plays(position: Position, dice: Dice) -> LegalPlays:
    """All legal plays for the side on roll in ``position`` with ``dice``."""
    mover, opponent = position
    a, b = dice.first, dice.second
    outside = sum(mover[6:])
    if a == b:
        if mover[24] == 0 and outside >= _DOUBLES_FOUR:
            found = _doubles_no_bearoff(mover, opponent, a)
        else:
            found = _doubles(mover, opponent, a, outside)
    else:
        if a < b:
            a, b = b, a
        if mover[24] == 0 and outside >= 2:
            found = _mixed_no_bearoff(mover, opponent, a, b)
        else:
            found = _mixed_general(mover, opponent, a, b, outside)
    return LegalPlays(position, dice, *found)


#: What a generator finds: the distinct results, how each is played, the dice used, and
#: how to turn the generator's compact record of a play into steps (``None``: it is steps).
Found = tuple[list[tuple[Half, Half]], list[Any], int, "Callable[[Any], RawSteps] | None"]


class _HitCache:
    """The opponent's half after a set of hits (bitmask of the mover's point indexes)."""

    __slots__ = ("_cache", "_opponent")

    def __init__(self, opponent: Half) -> None:
        self._opponent = opponent
        self._cache: dict[int, Half] = {0: opponent}

    def __call__(self, hits: int) -> Half:
        o = self._cache.get(hits)
        if o is None:
            ol = list(self._opponent)
            mask, i = hits, 0
            while mask:
                if mask & 1:
                    ol[23 - i] = 0
                    ol[24] += 1
                mask >>= 1
                i += 1
            o = self._cache[hits] = tuple(ol)
        return o


def _board_masks(opponent: Half) -> tuple[list[bool], list[int]]:
    """For each mover point index: is it blocked, and the hit bit landing there sets.

    The hit bit is set wherever the opponent has checkers; only the open points (a blot at
    most) are ever landed on, so it is the bit of a hit exactly where one can happen.
    """
    # The mover's point index j is the opponent's index 23 - j.
    seen = opponent[23::-1]
    return [n > 1 for n in seen], [bit if n else 0 for n, bit in zip(seen, _BITS, strict=True)]


_BITS: Final = tuple(1 << j for j in range(24))


def _mixed_no_bearoff(mover: Half, opponent: Half, a: int, b: int) -> Found:
    """Two different dice, nothing on the bar, at least two checkers outside the home board.

    Nothing can be borne off during the play, and no step changes whether another is legal
    (a hit only opens a point), so a play is two independent single steps or one checker
    moving twice through an open point. Each result is produced once: a pair whose second
    checker starts where the first stopped is the same as that checker moving twice, so it is
    left to the two-step loop. ``a`` is the higher die.
    """
    hit_half = _HitCache(opponent)
    # The mover's point index j is the opponent's 23 - j; reading the opponent's counts
    # directly is cheaper here than building the masks the other paths use.
    seen = opponent[23::-1]
    sources = list(compress(range(24), mover))
    with_a = [i for i in sources if i >= a and seen[i - a] < 2]
    with_b = [i for i in sources if i >= b and seen[i - b] < 2]
    keys: list[tuple[Half, Half]] = []
    steps: list[int] = []
    add_key = keys.append
    add_steps = steps.append
    b_moves = [(y, y - b, _BITS[y - b] if seen[y - b] else 0) for y in with_b]
    m = list(mover)
    for x in with_a:
        xa = x - a
        hx = _BITS[xa] if seen[xa] else 0
        m[x] -= 1
        m[xa] += 1
        code = x << 5
        alone = m[x] == 0
        for y, yb, hy in b_moves:
            if y == xa or x == yb or (alone and y == x):
                continue
            m[y] -= 1
            m[yb] += 1
            h = hx | hy
            add_key((tuple(m), hit_half(h) if h else opponent))
            add_steps(code | y)
            m[yb] -= 1
            m[y] += 1
        m[xa] -= 1
        m[x] += 1
    ab = a + b
    for x in sources:
        # One checker moves twice, by either route through an open point.
        xab = x - ab
        if xab < 0 or seen[xab] > 1:
            continue
        xa, xb = x - a, x - b
        via_a = seen[xa] < 2
        via_b = seen[xb] < 2
        if not (via_a or via_b):
            continue
        m[x] -= 1
        m[xab] += 1
        mover_after = tuple(m)
        m[xab] -= 1
        m[x] += 1
        end_hit = _BITS[xab] if seen[xab] else 0
        hit_a = _BITS[xa] if seen[xa] == 1 else 0
        hit_b = _BITS[xb] if seen[xb] == 1 else 0
        if via_a:
            h = hit_a | end_hit
            add_key((mover_after, hit_half(h) if h else opponent))
            add_steps(x << 5 | _VIA_HIGH)
        if via_b and (not via_a or hit_a or hit_b):
            h = hit_b | end_hit
            add_key((mover_after, hit_half(h) if h else opponent))
            add_steps(x << 5 | _VIA_LOW)
    decode = partial(_decode_mixed, a, b)
    if keys:
        return keys, steps, 2, decode
    # Only one die can be played: the higher one if it can be.
    for die, movable in ((a, with_a), (b, with_b)):
        for x in movable:
            xd = x - die
            m[x] -= 1
            m[xd] += 1
            h = _BITS[xd] if seen[xd] else 0
            add_key((tuple(m), hit_half(h) if h else opponent))
            add_steps(x << 5 | (_ONLY_HIGH if die == a else _ONLY_LOW))
            m[xd] -= 1
            m[x] += 1
        if keys:
            return keys, steps, 1, decode
    return keys, steps, 0, None


# Codes for the plays of _mixed_no_bearoff: ``x << 5 | y`` for the high die from index x and
# the low die from index y, or ``x << 5 | k`` with one of these k for one checker's moves.
_VIA_HIGH, _VIA_LOW, _ONLY_HIGH, _ONLY_LOW = 24, 25, 26, 27


def _decode_mixed(a: int, b: int, code: int) -> RawSteps:
    x, y = code >> 5, code & 31
    p = x + 1
    if y < 24:
        return ((p, p - a), (y + 1, y + 1 - b))
    if y == _VIA_HIGH:
        return ((p, p - a), (p - a, p - a - b))
    if y == _VIA_LOW:
        return ((p, p - b), (p - b, p - a - b))
    return ((p, p - (a if y == _ONLY_HIGH else b)),)


def _mixed_general(mover: Half, opponent: Half, a: int, b: int, outside: int) -> Found:
    """Two different dice with checkers on the bar, or with bearing off in reach.

    Here one step can make the other possible (entering from the bar, bringing the last
    checker home before bearing off), so both orders of the dice are tried. ``a`` is the
    higher die. Plays of one die are worked out only when no play uses both.
    """
    # The mover's point index j is the opponent's 23 - j: a count there of 2 or more blocks;
    # any other count is open, and a checker there (a blot) is hit by landing (bit j).
    seen = opponent[23::-1]
    m = list(mover)
    # Results keyed by (mover, hit bitmask) until the end, where hits become a half.
    found2: dict[tuple[Half, int], RawSteps] = {}
    singles: list[tuple[int, int, int, int]] = []  # (die, source, landing, hit) of lone steps
    if m[24] >= 2:
        # Both dice enter, or what can enter does; nothing else moves.
        ea, eb = 24 - a, 24 - b
        if seen[ea] < 2 and seen[eb] < 2:
            m[24] -= 2
            m[ea] += 1
            m[eb] += 1
            hits = (_BITS[ea] if seen[ea] else 0) | (_BITS[eb] if seen[eb] else 0)
            found2[(tuple(m), hits)] = ((25, ea + 1), (25, eb + 1))
        else:
            singles = [(d, 24, 24 - d, _BITS[24 - d] if seen[24 - d] else 0) for d in (a, b) if seen[24 - d] < 2]
    elif m[24] == 1:
        # Enter with one die, then anything moves with the other. The entered checker is
        # outside the home board, so nothing is borne off.
        occupied = [s for s in range(23, -1, -1) if m[s]]
        for d1, d2 in ((a, b), (b, a)):
            e = 24 - d1
            if seen[e] > 1:
                continue
            h1 = _BITS[e] if seen[e] else 0
            singles.append((d1, 24, e, h1))
            m[24] = 0
            m[e] += 1
            enter = (25, e + 1)
            for s in occupied if m[e] > 1 else (*occupied, e):
                t = s - d2
                if t >= 0 and seen[t] < 2:
                    m[s] -= 1
                    m[t] += 1
                    found2.setdefault((tuple(m), h1 | (_BITS[t] if seen[t] else 0)), (enter, (s + 1, t + 1)))
                    m[t] -= 1
                    m[s] += 1
            m[e] -= 1
            m[24] = 1
    else:
        occupied = [s for s in range(23, -1, -1) if m[s]]
        for d1, d2 in ((a, b), (b, a)):
            for s in occupied:
                t = s - d1
                if t >= 0:
                    if seen[t] > 1:
                        continue
                    h1 = _BITS[t] if seen[t] else 0
                    m[t] += 1
                elif outside or (t < -1 and any(m[s + 1 : 6])):
                    # Bearing off needs all checkers home, and a die bigger than the point
                    # only bears off from the highest point.
                    continue
                else:
                    h1 = 0
                m[s] -= 1
                singles.append((d1, s, t, h1))
                out = outside - 1 if s >= 6 > t else outside
                first = (s + 1, t + 1 if t >= 0 else 0)
                for s2 in occupied if t < 0 or m[t] > 1 else (*occupied, t):
                    if not m[s2]:
                        continue
                    t2 = s2 - d2
                    if t2 >= 0:
                        if seen[t2] > 1:
                            continue
                        m[t2] += 1
                        m[s2] -= 1
                        found2.setdefault((tuple(m), h1 | (_BITS[t2] if seen[t2] else 0)), (first, (s2 + 1, t2 + 1)))
                        m[t2] -= 1
                        m[s2] += 1
                    elif not out and (t2 == -1 or not any(m[s2 + 1 : 6])):
                        m[s2] -= 1
                        found2.setdefault((tuple(m), h1), (first, (s2 + 1, 0)))
                        m[s2] += 1
                m[s] += 1
                if t >= 0:
                    m[t] -= 1
    hit_half = _HitCache(opponent)
    if found2:
        keys = [(mv, hit_half(h) if h else opponent) for mv, h in found2]
        return keys, list(found2.values()), 2, None
    # Only one die can be played: the higher one if it can be.
    for die in (a, b):
        found1: dict[tuple[Half, int], RawSteps] = {}
        for d, s, t, h in singles:
            if d == die:
                m[s] -= 1
                if t >= 0:
                    m[t] += 1
                found1.setdefault((tuple(m), h), ((s + 1, max(t + 1, 0)),))
                m[s] += 1
                if t >= 0:
                    m[t] -= 1
        if found1:
            keys = [(mv, hit_half(h) if h else opponent) for mv, h in found1]
            return keys, list(found1.values()), 1, None
    return [], [], 0, None


def _doubles_no_bearoff(mover: Half, opponent: Half, die: int) -> Found:
    """A double with nothing on the bar and at least four checkers outside the home board."""
    blocked, blot_bit = _board_masks(opponent)
    return _doubles_steps(list(mover), opponent, die, blocked, blot_bit, 4, 0, 0)


def _doubles_steps(
    m: list[int],
    opponent: Half,
    die: int,
    blocked: list[bool],
    blot_bit: list[int],
    levels: int,
    hits: int,
    entered: int,
) -> Found:
    """Up to ``levels`` steps of ``die`` where nothing can be borne off.

    Nothing is on the bar (any checkers that were have entered: ``entered`` of them, with
    ``hits``), and bearing off is out of reach, so only blocked points limit the steps. Steps
    are taken from non-increasing source points (see :func:`_doubles`), in nested loops; this
    is the hot spot of the generator, hence the flat code. Plays that use fewer steps than
    the most possible are dropped at the end.
    """
    # Only points holding a checker, or one a checker can reach within the steps, can be a
    # source; skipping the rest matters in the innermost loop.
    cand = [
        s
        for s in range(23, die - 1, -1)
        if not blocked[s - die] and any(m[s + k * die] for k in range(levels) if s + k * die < 24)
    ]
    # tails[i]: the candidate sources from the i-th on, with their index and landing point.
    tails = [[(j, cand[j], cand[j] - die) for j in range(i, len(cand))] for i in range(len(cand))]
    # Each leaf: (mover after, hit bitmask, sources...), with -1 for the steps not taken.
    leaves: list[tuple[tuple[int, ...], int, int, int, int, int]] = []
    add = leaves.append
    deepest = 0
    for i1, s1, t1 in tails[0] if tails else ():
        if not m[s1]:
            continue
        m[s1] -= 1
        m[t1] += 1
        h1 = hits | blot_bit[t1]
        end1 = True
        if levels > 1:
            for i2, s2, t2 in tails[i1]:
                if not m[s2]:
                    continue
                m[s2] -= 1
                m[t2] += 1
                h2 = h1 | blot_bit[t2]
                end1 = False
                end2 = True
                if levels > 2:
                    for i3, s3, t3 in tails[i2]:
                        if not m[s3]:
                            continue
                        m[s3] -= 1
                        m[t3] += 1
                        h3 = h2 | blot_bit[t3]
                        end2 = False
                        end3 = True
                        if levels > 3:
                            for _, s4, t4 in tails[i3]:
                                if not m[s4]:
                                    continue
                                end3 = False
                                m[s4] -= 1
                                m[t4] += 1
                                add((tuple(m), h3 | blot_bit[t4], s1, s2, s3, s4))
                                m[t4] -= 1
                                m[s4] += 1
                            deepest = 4 if not end3 else deepest
                        if end3 and deepest <= 3:
                            deepest = 3
                            add((tuple(m), h3, s1, s2, s3, -1))
                        m[t3] -= 1
                        m[s3] += 1
                if end2 and deepest <= 2:
                    deepest = 2
                    add((tuple(m), h2, s1, s2, -1, -1))
                m[t2] -= 1
                m[s2] += 1
        if end1 and deepest <= 1:
            deepest = 1
            add((tuple(m), h1, s1, -1, -1, -1))
        m[t1] -= 1
        m[s1] += 1
    if deepest == 0:
        if entered:
            return (
                [(tuple(m), _HitCache(opponent)(hits))],
                [(-1, -1, -1, -1, -1, -1)],
                entered,
                partial(_decode_doubles, die, entered),
            )
        return [], [], 0, None
    # Keep only the plays with the most steps (shorter ones were recorded before a longer
    # one turned up, or in other branches).
    short = _DOUBLES_FOUR - deepest
    leaves = [leaf for leaf in leaves if leaf[2:].count(-1) == short]
    hit_half = _HitCache(opponent)
    keys = [(leaf[0], opponent if not leaf[1] else hit_half(leaf[1])) for leaf in leaves]
    # The steps are worked out from the sources only when a play is asked for.
    return keys, leaves, entered + deepest, partial(_decode_doubles, die, entered)


def _decode_doubles(die: int, entered: int, leaf: tuple[Any, ...]) -> RawSteps:
    entry = 25 - die
    return ((25, entry),) * entered + tuple((s + 1, s + 1 - die) for s in leaf[2:] if s >= 0)


def _doubles(mover: Half, opponent: Half, die: int, outside: int) -> Found:
    """A double in any position: up to four steps of ``die``.

    Steps are taken from non-increasing source points. Every play can be put in that order
    (a checker reaches a point before it moves on from it, the back checkers come home first,
    and bearing off from below the highest point only gets easier), and in that order each
    multiset of steps, hence each result, is reached exactly once.
    """
    blocked, blot_bit = _board_masks(opponent)
    hit_half = _HitCache(opponent)
    m = list(mover)
    found: dict[tuple[Half, Half], RawSteps] = {}
    best = [0]
    steps: list[tuple[int, int]] = []

    def record(depth: int, hits: int) -> None:
        if depth < best[0]:
            return
        if depth > best[0]:
            best[0] = depth
            found.clear()
        found.setdefault((tuple(m), hit_half(hits)), tuple(steps))

    def search(top: int, depth: int, hits: int, outside: int) -> None:
        moved = False
        lowest = 0 if outside == 0 else die
        for s in range(top, lowest - 1, -1):
            if m[s] == 0:
                continue
            t = s - die
            if t >= 0:
                if blocked[t]:
                    continue
                h = hits | blot_bit[t]
                m[t] += 1
            else:
                if t < -1 and any(m[s + 1 : 6]):
                    continue
                h = hits
            m[s] -= 1
            steps.append((s + 1, t + 1 if t >= 0 else 0))
            if depth == 3:
                record(4, h)
            else:
                search(s, depth + 1, h, outside - 1 if s >= 6 > t else outside)
            steps.pop()
            m[s] += 1
            if t >= 0:
                m[t] -= 1
            moved = True
        if not moved and depth:
            record(depth, hits)

    if m[24]:
        # Checkers on the bar enter first, all on the same point, as many as the die allows.
        entry = 24 - die
        if blocked[entry]:
            return [], [], 0, None
        entering = min(m[24], _DOUBLES_FOUR)
        m[24] -= entering
        m[entry] += entering
        steps.extend([(25, entry + 1)] * entering)
        if entering == _DOUBLES_FOUR or m[24]:
            record(entering, blot_bit[entry])
        else:
            # An entered checker needs every step left to get home, so nothing can be
            # borne off in this play.
            left = _DOUBLES_FOUR - entering
            return _doubles_steps(m, opponent, die, blocked, blot_bit, left, blot_bit[entry], entering)
    else:
        search(23, 0, 0, outside)
    return list(found), list(found.values()), best[0], None
