# SPDX-License-Identifier: MIT
"""Read a board from one frame: checkers per point, bar and off, dice, cube, and occlusion.

Every point is read as a whole: each possible stack (nothing, or 1 to 15 checkers of either
side) gets a probability, and the most likely one wins; its probability is the point's
confidence. There are two ways to get them (:data:`POINT_READERS`):

- the learned point reader (:mod:`vision.points_net`): a small network reads each point's strip
  beside the same strip bare on this board (the profile's references, learnt at calibration and
  from every position confirmed in play, see :meth:`BoardReader.learn`);
- the models learned at calibration: for each stack, piled as players pile them, the features
  sampled along the point are scored under small Gaussian models of this board's colours and
  edges.

The first is used when the network is installed and the profile has references, else the
second. A point whose samples look like nothing on this board (a hand, a sleeve) is doubtful;
a few of them together mean the board is occluded.

:class:`BoardReader` reads the points and the bar, follows a board that moved, learns the board
in play and puts a reading together; it finds the dice with :class:`vision.board_dice.DiceFinder`
and tells what hides the board with :class:`vision.occlusion.OcclusionCheck`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from engine.errors import BackgammonError
from engine.position import Position
from vision import points_net
from vision.board_dice import DiceFinder
from vision.cube import CubeFound, read_cube, read_track
from vision.features import (
    CHECKER,
    EDGE,
    EMPTY,
    FLAT,
    MAX_BAR,
    MAX_STACK,
    RING,
    SCALE,
    STEPS,
    TOP,
    FieldSampler,
    expected,
    expected_bar,
    look_of,
    rectify,
)
from vision.follow import board_view, corners_of, follow, has_moved
from vision.geometry import SLOTS
from vision.occlusion import OcclusionCheck
from vision.profile import ROBUST_CLIP, Gaussian, Profile, ProfileError
from vision.reading import BoardReading, CubeReading, DieOnBoard
from vision.strips import (
    BAR_LOWER,
    BAR_UPPER,
    STRIPS,
    StripCutter,
    count_of,
    encode,
    encode_against,
    encode_references,
    field_strip_quads,
    soften,
    strip_counts,
)
from vision.tiles import TILE, touches

#: Softening of the per-point scores before they become probabilities: the samples along a
#: point are not independent, so their log-likelihoods overstate the evidence.
TEMPERATURE = 3.0
#: The largest loss in a point's score (softened log-likelihood) accepted to add back a checker
#: that the fifteen-a-side count says was missed.
ADD_BACK = 4.0
#: How far (L, a, b) a bare spot may drift from its look at calibration: noise, a little light.
SPOT_SPREAD = (14.0, 7.0, 7.0)
#: The reader remembers what it last read and reads again only what has changed since, tile by
#: tile (:data:`vision.tiles.TILE`). A tile whose mean level in any colour channel moved this far
#: from when it was last read has changed. Sensor noise moves a tile's mean by a fraction of a
#: level; a checker put down or taken away, a die, a hand, by tens of levels.
TILE_CHANGE = 6.0
#: When more of the field than this share has changed, or its light as a whole has moved by
#: more than :data:`LIGHT_SHIFT` levels (a lamp, the camera's exposure), the frame is read whole.
MOST_CHANGED = 0.4
LIGHT_SHIFT = 3.0
#: When more of the field than this share has changed at once, the board may have moved (see
#: :meth:`BoardReader._follow`): knocked 5 pixels aside, a quarter or more of the held-out 3D
#: frames' tiles change; a move of two checkers, a few hundredths.
FOLLOW_CHANGED = 0.2
#: Piles of up to this many checkers show every checker from above; above it, the lower
#: layers are partly hidden, and a count may be one short (see :func:`_short_piles`).
PILE_SURE = 5


def _stack_prior() -> np.ndarray:
    """How often a point holds n checkers in play: log prior over n = 0..15.

    Stacks above five are rare in play and above ten very rare; this tips a top view that
    cannot tell five from twelve towards what games produce.
    """
    # A top view shows up to five checkers directly, so the prior stays flat there; it only
    # leans against the piled stacks, whose upper layers are hard to see.
    head = [0.1] * 6
    tail = [0.1 * 0.5 ** (n - 5) for n in range(6, 16)]
    p = np.asarray(head + tail)
    result: np.ndarray = np.log(p / p.sum())
    return result


STACK_PRIOR = _stack_prior()


def _label_table(builder: Any, sizes: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Colour, edge and ring label arrays (hypotheses x samples) mapped to model indexes."""
    colour = []
    seam = []
    ring = []
    for n in sizes:
        c, s, r = builder(n)
        colour.append([{CHECKER: 1, EMPTY: 0}.get(v, 2) for v in c])
        seam.append([{EDGE: 0, TOP: 1, FLAT: 2}.get(v, 3) for v in s])
        ring.append([{RING: 0, FLAT: 1}.get(v, 2) for v in r])
    return np.asarray(colour), np.asarray(seam), np.asarray(ring)


#: A strip confirmed bare is learnt only if the reader gives "bare" at least this probability.
LEARN_FLOOR = 0.05
#: Half a cube's side, in checker diameters (a cube is about 0.8 of a checker).
CUBE_HALF = 0.4
DOUBTED_AT = 0.5
#: A stack read by the network is doubted when the spot past it looks like its side's checkers
#: by this much (the models' log-likelihood against bare), or its last spot looks bare by as
#: much. On the real frames, points read right stood within 1.5 of even there; a sixth checker
#: lined up past five, a pile read one short, a hand read as a checker, 6 to 14.
STACK_END = 7.0
#: How the points are read: ``net`` by the learned point reader, ``model`` by the models
#: learnt at calibration, ``auto`` by the network when it is installed, the profile has its
#: references and the network read the calibration frame as well as it reads boards it knows or
#: better than the models did (:attr:`References.reads_better`), else by the models.
POINT_READERS = ("auto", "net", "model")


@dataclass
class _Seen:
    """What the reader last read, kept so that the next frame is read again only where it
    changed: the field's tiles as they looked when each was last read, the dice, the learned
    reader's probabilities per strip with the references they were read against, the cube.
    ``None`` where that part was not read."""

    tiles: np.ndarray
    dice: list[tuple[np.ndarray, int, float]] | None = None
    strips: np.ndarray | None = None
    references: np.ndarray | None = None
    borrowed: np.ndarray | None = None
    cube: tuple[CubeFound | None] | None = None


class BoardReader:
    """Read frames of one board with its calibration profile.

    :param profile: the board and camera's profile.
    :param points: how the points are read, one of :data:`POINT_READERS`.
    :param remember: read again only what changed since the last frame read (see
        :data:`vision.tiles.TILE`); ``False`` reads every frame whole.
    :raises ValueError: an unknown ``points``.
    :raises ProfileError: ``points="net"`` with a profile that has no references (made before the
        learned reader: calibrate again), or without the network installed.
    """

    def __init__(self, profile: Profile, *, points: str = "auto", remember: bool = True) -> None:
        if points not in POINT_READERS:
            raise ValueError(f"points are read by one of {', '.join(POINT_READERS)}, not {points!r}")
        #: The point network's file, this board's (see :attr:`References.network`).
        self._network = points_net.network_file("points" if profile.references is None else profile.references.network)
        if points == "net":
            if profile.references is None:
                raise ProfileError("the profile has no references for the learned point reader: calibrate again")
            if not points_net.available(self._network):
                raise ProfileError(f"the learned point reader's network {self._network} is missing")
        use_net = points == "net" or (
            points == "auto"
            and profile.references is not None
            and profile.references.reads_better
            and points_net.available(self._network)
        )
        self.points_by = "net" if use_net else "model"
        self._cutter = StripCutter(profile.geometry, profile.homography) if use_net else None
        self._checker_colours = np.asarray([profile.models["p1"].mean, profile.models["p2"].mean], np.float32)
        #: References learnt in play since the profile was loaded (see :meth:`learn`).
        self.learnt = 0
        self._references_encoded: tuple[np.ndarray, np.ndarray] | None = None
        self.profile = profile
        self._homography = profile.homography
        self.sampler = FieldSampler(profile.geometry)
        self.models = profile.models
        self._point_colour, self._point_seam, self._point_ring = _label_table(expected, range(MAX_STACK + 1))
        self._bar_colour, self._bar_seam, self._bar_ring = _label_table(expected_bar, range(MAX_BAR + 1))
        # Which empty-point model serves each sample: per point colour and depth when the
        # calibration saw enough of it, else per point colour.
        groups: dict[str, tuple[list[int], list[int]]] = {}
        for index in range(24):
            parity = (index + 1) % 2
            for j in range(STEPS):
                name = f"empty{parity}_{j}" if f"empty{parity}_{j}" in self.models else f"empty{parity}"
                rows, cols = groups.setdefault(name, ([], []))
                rows.append(index)
                cols.append(j)
        self._empty_groups = {name: (np.asarray(r), np.asarray(c)) for name, (r, c) in groups.items()}
        # Where the cube or the track counter may lie, on the half-size field: no die is read
        # there, and what changed there is the cube's.
        geometry = profile.geometry
        spots = [geometry.cube_center(owner) for owner in (None, 1, 2)]
        if profile.cube_kind == "track":
            spots += [geometry.track_center(1, None)]
            spots += [geometry.track_center(v, o) for o in (1, 2) for v in (2, 4, 8, 16, 32, 64)]
        self._cube_spots = [(x * SCALE, y * SCALE) for x, y in spots]
        self.remember = remember
        self._seen: _Seen | None = None
        # The last clear reading's counts: where checkers may go (borne off only from home).
        self._counted: _Counted | None = None
        # The last frame read clear, to follow the board when it moves (see :meth:`_follow`).
        self._clear_frame: np.ndarray | None = None
        #: How often the board was followed to where it moved (see :meth:`read`).
        self.followed = 0
        d = self.sampler.d
        # Round each place the cube or the track counter may lie, as far as the cube reader looks.
        self._cube_places = [(x - 0.9 * d, y - 0.9 * d, x + 0.9 * d, y + 0.9 * d) for x, y in self._cube_spots]
        # Each strip's box on the half-size field, a little wider (a checker's edge shows
        # just outside its strip).
        self._strip_boxes = [
            (*(quad.min(axis=0) * SCALE - 0.25 * d), *(quad.max(axis=0) * SCALE + 0.25 * d))
            for quad in field_strip_quads(geometry)
        ]
        self._empty_means: np.ndarray | None = None
        if profile.empty_means:
            means = np.asarray(profile.empty_means, dtype=np.float64)
            self._spot_known = np.asarray(~np.isnan(means).any(axis=2))
            self._empty_means = np.nan_to_num(means)
            cov = np.diag(SPOT_SPREAD) ** 2
            self._spot_inv = np.linalg.inv(cov)
            self._spot_norm = float(np.linalg.slogdet(cov)[1]) + 3 * math.log(2 * math.pi)
        #: Finds the dice on the field (see :mod:`vision.board_dice`).
        self.dice_finder = DiceFinder(profile, self.sampler, self._homography, self._cube_spots)
        #: Tells what hides the board: a hand over the field, an arm over its frame (see
        #: :mod:`vision.occlusion`); it holds the look of the last clear reading.
        self.occlusion = OcclusionCheck(
            profile,
            self._homography,
            self._cube_spots,
            None if self._empty_means is None else (self._empty_means, self._spot_known),
        )

    @property
    def homography(self) -> np.ndarray:
        """3x3 homography from field coordinates to image pixels: the profile's, or where the
        board was followed to (see :meth:`_follow`)."""
        return self._homography

    @homography.setter
    def homography(self, homography: np.ndarray) -> None:
        # The dice finder and the occlusion check look through it too.
        self._homography = homography
        self.dice_finder.homography = homography
        self.occlusion.homography = homography

    # -- likelihoods -------------------------------------------------------------------------

    def _ll(self, name: str, x: np.ndarray) -> np.ndarray:
        model: Gaussian = self.models[name]
        return model.log_likelihood(x)

    def _empty_ll(self, colour: np.ndarray) -> np.ndarray:
        """Log-likelihood of 'empty point' for every sample (24 x STEPS).

        Against what that very spot looked like bare at calibration, where known; else
        against the models per point colour and depth.
        """
        out = np.empty(colour.shape[:2])
        for name, (rows, cols) in self._empty_groups.items():
            out[rows, cols] = self._ll(name, colour[rows, cols])
        if self._empty_means is not None:
            diff = colour - self._empty_means
            maha = np.minimum(np.einsum("...i,ij,...j->...", diff, self._spot_inv, diff), ROBUST_CLIP)
            spot = -0.5 * (maha + self._spot_norm)
            out = np.where(self._spot_known, spot, out)
        return out

    def _shape_stacks(self, side: str, seam: np.ndarray, ring: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log-likelihoods of the edge and ring features under each label, for one side.

        Returns ``(edge, top, flat, any)`` and ``(ring, no ring, any)`` stacked on a new axis;
        a model the calibration could not fit contributes nothing.
        """

        def ll(name: str, x: np.ndarray) -> np.ndarray:
            return self._ll(name, x) if name in self.models else np.zeros(x.shape[:-1])

        edge, top, flat = ll(f"edge_{side}", seam), ll(f"top_{side}", seam), ll("flat", seam)
        seam_any = np.logaddexp(np.logaddexp(edge, top), flat) - math.log(3)
        rim, bare = ll(f"ring_{side}", ring), ll("no_ring", ring)
        ring_any = np.logaddexp(rim, bare) - math.log(2)
        return np.stack([edge, top, flat, seam_any]), np.stack([rim, bare, ring_any])

    def _point_scores(
        self, feats: dict[str, np.ndarray], under: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Scores of every stack on every point: (2 sides, 16 sizes, 24 points), and samples' fit.

        :param under: samples (24 x STEPS) covered by a die: they tell nothing of the stack.
        """
        colour = feats["points_colour"]
        seam = feats["points_seam"][..., None]
        ring = feats["points_ring"][..., None]
        ll_empty = self._empty_ll(colour)
        ll_p = [self._ll("p1", colour), self._ll("p2", colour)]
        if under is not None and under.any():
            for ll in (ll_empty, *ll_p):
                ll[under] = 0.0
        ll_any = np.logaddexp(np.logaddexp(ll_empty, ll_p[0]), ll_p[1]) - math.log(3)
        j = np.arange(STEPS)[None, None, :]
        at = np.arange(24)[None, :, None]
        scores = []
        for side in (0, 1):
            seam_stack, ring_stack = self._shape_stacks(f"p{side + 1}", seam, ring)
            if under is not None and under.any():
                seam_stack[:, under] = 0.0
                ring_stack[:, under] = 0.0
            colour_stack = np.stack([ll_empty, ll_p[side], ll_any])
            score = (
                colour_stack[self._point_colour[:, None, :], at, j].sum(axis=2)
                + seam_stack[self._point_seam[:, None, :], at, j].sum(axis=2)
                + ring_stack[self._point_ring[:, None, :], at, j].sum(axis=2)
            )
            scores.append(score)
        return np.stack(scores), ll_any

    # -- reading -----------------------------------------------------------------------------

    def _model_logits(self, feats: dict[str, np.ndarray], under: np.ndarray | None) -> np.ndarray:
        """The models' log-odds over (side, size) for every point, laid out flat as
        ``(2 * 16, 24)``: their scores softened, plus the stack prior."""
        scores, _ = self._point_scores(feats, under)
        logits = scores / TEMPERATURE + STACK_PRIOR[None, :, None]
        logits[1, 0] = -np.inf  # "nothing" is counted once, as side 0 size 0
        flat: np.ndarray = logits.reshape(2 * (MAX_STACK + 1), 24)
        return flat

    def read(self, image: np.ndarray, *, cube: bool = True, dice: bool = True) -> BoardReading:
        """Read one frame (BGR, the size the profile was made for).

        A board that moved under the camera since the last clear read (bumped, or the camera
        nudged) is followed: see :meth:`_follow`. The reader keeps the last clear frame for
        that, so each frame must be an array of its own (as the frame sources give).

        :param cube: also read the cube or doubling-track counter (a few milliseconds more).
        :param dice: also read the dice (a few milliseconds more); the point samples under a
            die then count for nothing.
        :raises ProfileError: the frame's size is not the profile's.
        """
        self.profile.check_frame(image)
        kept = (self._counted, self.occlusion.reference)
        reading, unsettled = self._read(image, cube=cube, dice=dice)
        if unsettled and self._follow(image):
            # Read again whole where the board lies now, with what was known before this read.
            self._seen = None
            self._counted, self.occlusion.reference = kept
            reading, _ = self._read(image, cube=cube, dice=dice)
        if not reading.occluded:
            self._clear_frame = image
        return reading

    def _follow(self, image: np.ndarray) -> bool:
        """Whether the board moved since the last clear frame (before the first, since the
        profile's view of it), and if so, follow it: the new corners and view are kept (in the
        profile too, saved with it), and the next reads are made where the board lies now.

        It is tried when the frame round the field no longer fits the calibration's or much
        of the field changed at once (:data:`FOLLOW_CHANGED`), as when the board is bumped.
        The last clear frame and this one are aligned (:func:`vision.follow.follow`); the move
        is taken when they agree far better aligned than not (:func:`vision.follow.has_moved`)
        and the frame round the field then fits the calibration's again (an arm over it waits
        for the next frame).
        """
        if self._clear_frame is not None:
            reference = board_view(self._clear_frame, self.homography)
        elif self.profile.view is not None:
            # No clear frame yet (the referee just started): the board as calibration saw it.
            reference = self.profile.view
        else:
            return False
        found = follow(reference, image, self.homography)
        if found is None or not has_moved(found, self.homography):
            return False
        if self.occlusion.arm_over_frame(image, homography=found.homography):
            return False
        self.homography = found.homography
        self.profile.corners = corners_of(found.homography)
        self.profile.view = board_view(image, found.homography)
        if self._cutter is not None:
            self._cutter = StripCutter(self.profile.geometry, found.homography)
        self.followed += 1
        return True

    def _read(self, image: np.ndarray, *, cube: bool, dice: bool) -> tuple[BoardReading, bool]:
        """Read one frame (see :meth:`read`); and whether the board may have moved: the frame
        round the field did not fit the calibration's, or much of the field changed at once."""
        field_image = rectify(image, self.homography)
        tiles, changed, share = self._changes(field_image)
        # The network's reader weighs the samples' colours alone (for hands and doubted stacks).
        feats = self.sampler.sample(field_image, colour_only=self._cutter is not None)
        strip_probs = None
        if self._cutter is not None:
            strip_probs, read_now, strips = self._strip_probabilities(image, changed)
            flat, bar, bar_conf = self._from_strips(strip_probs)
            first = flat
        else:
            first = self._model_logits(feats, None)
            bar, bar_conf = self._read_bar(feats)
        choice = self._conserve(first, first.argmax(axis=0), bar)
        # The checkers as counted before the dice are looked for: a 1 in the middle of one is
        # its glint, not a die.
        counted = [_count(int(c)) for c in choice]
        checkers = self.dice_finder.checkers(counted, field_image) if dice else None
        look = look_of(field_image)
        # A hand over the field hides what lies under it: the looks for dice of rare colours
        # are spared (a die is far smaller than a hand, and the frame is occluded either way).
        hand = dice and self.occlusion.over_field(look, counted, bar, None)[0]
        last = None if self._seen is None else self._seen.dice
        found_dice = (
            self.dice_finder.find_dice(field_image, image, changed, checkers, last=last, every_look=not hand)
            if dice
            else []
        )
        under = self.dice_finder.under_dice(found_dice)
        if strip_probs is not None and found_dice:
            # A die lying on a point's strip is no checker: the strips under dice are read
            # again with the dice painted out (those just read; the others were, when read).
            repainted = self._without_dice(strips, strip_probs, found_dice, read_now)
            if repainted is not strip_probs:
                strip_probs = repainted
                flat, bar, bar_conf = self._from_strips(strip_probs)
                choice = self._conserve(flat, flat.argmax(axis=0), bar)
        if self._cutter is None and under.any():
            # The models again, without the samples the dice cover.
            flat = self._model_logits(feats, under)
            choice = self._conserve(flat, flat.argmax(axis=0), bar)
        elif self._cutter is None:
            flat = first
        points = [_count(int(c)) for c in choice]
        on_board = (sum(c for c in points if c > 0) + bar[0], sum(-c for c in points if c < 0) + bar[1])
        probabilities = _softmax(flat, axis=0)
        found = self._read_cube(field_image, changed) if cube else None
        if found is not None and self.profile.cube_kind != "track":
            # On a board whose bar is narrower than the cube, the cube lying at the bar's
            # middle or end covers a corner of the points beside it, and may be read as a
            # checker there: a stack whose top checker would lie where the cube lies is doubted.
            for index in self._under_cube(found.owner, choice):
                probabilities[:, index] = _cap(probabilities[:, index], int(choice[index]), DOUBTED_AT)
        if self._cutter is not None:
            # The network is sure of what it learnt, and may be as sure of a sight it never
            # learnt (a pile unlike any it saw read as bare, a sixth checker lined up past
            # five). Where this board's colours say a stack ends elsewhere, the point is not read
            # with confidence.
            doubted = self._stack_ends_doubted(feats["points_colour"], points, under)
            for index in np.nonzero(doubted)[0]:
                probabilities[:, index] = _cap(probabilities[:, index], int(choice[index]), DOUBTED_AT)
        confidence: list[float] = []
        alternatives: list[tuple[int, float]] = []
        for index in range(24):
            pick = int(choice[index])
            confidence.append(float(probabilities[pick, index]))
            rest = probabilities[:, index].copy()
            rest[pick] = 0
            runner = int(rest.argmax())
            alternatives.append((_count(runner), float(rest[runner])))
        hidden = self.occlusion.hidden_points(feats, under)
        self._remember(tiles, changed, found_dice if dice else None, strip_probs, (found,) if cube else None)
        # An owned cube lies at its owner's end of the bar, reaching onto the frame.
        cube_end = None
        if found is not None and found.owner is not None and self.profile.cube_kind != "track":
            cube_end = "bottom" if found.owner == 1 else "top"
        # The frame round the field no longer as at calibration: an arm over it, or the board
        # moved (tried by read). An arm over the frame alone, the trays or the table hides no
        # checker, and is no occlusion; one over the field is seen there.
        unsettled = self.occlusion.arm_over_frame(image, cube_end) or share > FOLLOW_CHANGED
        off = (max(15 - on_board[0], 0), max(15 - on_board[1], 0))
        home = _all_home(points, bar)
        over, covered = self.occlusion.over_field(look, points, bar, found_dice if dice else None)
        hidden |= covered
        occluded = len(hidden) >= 2 or over
        vanished = self._vanished(points, off, home)
        for index in vanished | _short_piles(points, off, home):
            confidence[index] = min(confidence[index], DOUBTED_AT)
        if not occluded and self.remember:
            # Counted even when checkers vanished: a checker the reader keeps missing is
            # doubted once, not on every read after.
            self._counted = _Counted(tuple(points), off, home)
            self.occlusion.seen_clear(look, tuple(points), bar)
        total = 0.0 if occluded else float(np.prod(confidence)) * bar_conf
        if _short_sides(off, home):
            total = min(total, DOUBTED_AT)
        reading = BoardReading(
            points=tuple(points),
            bar=bar,
            off=off,
            dice=tuple(
                self.dice_finder.board_die(field_image, box, value, conf, points) for box, value, conf in found_dice
            ),
            cube=None if found is None else CubeReading(found.value, found.owner, found.confidence),
            occluded=occluded,
            confidence=total,
            point_confidence=tuple(0.0 if i in hidden else c for i, c in enumerate(confidence)),
            alternatives=tuple(alternatives),
        )
        return reading, unsettled

    # -- what changed since the last read -----------------------------------------------------

    def _changes(self, field_image: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, float]:
        """The field's tiles (mean colour), which have changed since they were last read (a
        boolean tile mask, grown by a tile; ``None``: read the frame whole), and the share of
        the tiles that changed (0 when none were read before).

        Colour, not grey: a checker of one side put where the other side's stood may be as
        light as it (a red and a green of one grey), and only its colour tells."""
        h, w = field_image.shape[:2]
        rows, cols = max(1, h // TILE), max(1, w // TILE)
        # Whole tiles (the field's last few rows or columns past them left out): shrinking by a
        # whole factor is a quarter of the time of shrinking by a fraction.
        tiles = cv2.resize(field_image[: rows * TILE, : cols * TILE], (cols, rows), interpolation=cv2.INTER_AREA)
        tiles = tiles.astype(np.float32)
        seen = self._seen
        if not self.remember or seen is None or seen.tiles.shape != tiles.shape:
            return tiles, None, 0.0
        diff = tiles - seen.tiles
        changed = np.abs(diff).max(axis=2) > TILE_CHANGE
        share = float(changed.mean())
        if float(np.abs(np.median(diff.reshape(-1, 3), axis=0)).max()) > LIGHT_SHIFT or share > MOST_CHANGED:
            return tiles, None, share
        grown = cv2.dilate(changed.astype(np.uint8), np.ones((3, 3), np.uint8))
        return tiles, grown.astype(bool), share

    def _remember(
        self,
        tiles: np.ndarray,
        changed: np.ndarray | None,
        dice: list[tuple[np.ndarray, int, float]] | None,
        strips: np.ndarray | None,
        cube: tuple[CubeFound | None] | None,
    ) -> None:
        """Keep what this read saw; the tiles that did not change keep their look from when
        they were read, so that a slow drift is read again once it adds up."""
        if not self.remember:
            return
        if changed is None or self._seen is None:
            kept = tiles
        else:
            kept = self._seen.tiles.copy()
            kept[changed] = tiles[changed]
        refs = self.profile.references
        self._seen = _Seen(
            kept,
            dice=None if dice is None else list(dice),
            strips=strips,
            references=None if strips is None or refs is None else refs.strips.copy(),
            borrowed=None if strips is None or refs is None else refs.borrowed.copy(),
            cube=cube,
        )

    def forget(self) -> None:
        """Read the next frame whole (the board or the camera was moved, say)."""
        self._seen = None
        self._counted = None
        self.occlusion.forget()

    def _read_cube(self, field_image: np.ndarray, changed: np.ndarray | None) -> CubeFound | None:
        """The cube or track counter, read again only when something changed where it lies.

        There is one cube: while nothing changed where the last read saw it, it lies there
        still, whatever changed at its other places; when none was seen, it is looked for
        again once something changed at any of them.
        """
        seen = self._seen
        track = self.profile.cube_kind == "track"
        if seen is not None and seen.cube is not None:
            last = seen.cube[0]
            if last is None:
                if not any(touches(changed, place) for place in self._cube_places):
                    return None
            else:
                geometry = self.profile.geometry
                x, y = geometry.track_center(last.value, last.owner) if track else geometry.cube_center(last.owner)
                reach = 0.9 * self.sampler.d
                x, y = x * SCALE, y * SCALE
                if not touches(changed, (x - reach, y - reach, x + reach, y + reach)):
                    return last
        reader = read_track if track else read_cube
        return reader(field_image, self.profile.geometry)

    def _strip_probabilities(
        self, image: np.ndarray, changed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The learned reader's probabilities ``(26, classes)`` for every strip, before this
        board's temperature: read again for the strips where something changed or whose
        reference did, kept from the last read for the rest; which were read again; and the
        strips as cut from ``image``."""
        assert self._cutter is not None and self.profile.references is not None
        refs = self.profile.references
        strips = self._cutter.colour(image)
        encoded = self._encoded_references()
        seen = self._seen
        redo = np.ones(STRIPS, bool)
        probs: np.ndarray | None = None
        if (
            changed is not None
            and seen is not None
            and seen.strips is not None
            and seen.references is not None
            and seen.borrowed is not None
        ):
            redo = np.array([touches(changed, box) for box in self._strip_boxes])
            redo |= (refs.strips != seen.references).any(axis=(1, 2, 3)) | (refs.borrowed != seen.borrowed)
            probs = seen.strips.copy()
        if probs is None:
            fresh = points_net.probabilities(
                encode_against(strips, encoded, refs.borrowed, self._checker_colours), self._network
            )
            return np.asarray(fresh, np.float64), redo, strips
        if redo.any():
            x = encode_against(strips[redo], encoded[redo], refs.borrowed[redo], self._checker_colours)
            probs[redo] = points_net.probabilities(x, self._network)
        return probs, redo, strips

    def _encoded_references(self) -> np.ndarray:
        """The references as the network takes them (see :func:`vision.strips.encode_references`),
        encoded again only when learning has changed them."""
        assert self.profile.references is not None
        now = self.profile.references.strips
        if self._references_encoded is None or not np.array_equal(self._references_encoded[0], now):
            self._references_encoded = (now.copy(), encode_references(now))
        return self._references_encoded[1]

    def _without_dice(
        self,
        strips: np.ndarray,
        probs: np.ndarray,
        dice: list[tuple[np.ndarray, int, float]],
        among: np.ndarray,
    ) -> np.ndarray:
        """``probs`` with the strips of ``among`` a die lies on read again, the die painted out of
        each (OpenCV's inpainting from the pixels round it: bare board round a die on a bare
        point, checker round one resting on a checker); ``probs`` itself when none is.
        ``strips`` are the frame's, as cut for ``probs``."""
        assert self._cutter is not None and self.profile.references is not None
        masks = self._cutter.masks_round([self.dice_finder.die_in_image(box) for box, _, _ in dice])
        touched = masks.reshape(STRIPS, -1).any(axis=1) & among
        if not touched.any():
            return probs
        painted = np.stack(
            [
                cv2.inpaint(strips[index], masks[index].astype(np.uint8), 3, cv2.INPAINT_TELEA)
                for index in np.flatnonzero(touched)
            ]
        )
        refs = self.profile.references
        out = probs.copy()
        x = encode_against(painted, self._encoded_references()[touched], refs.borrowed[touched], self._checker_colours)
        out[touched] = points_net.probabilities(x, self._network)
        return out

    def _from_strips(self, raw: np.ndarray) -> tuple[np.ndarray, tuple[int, int], float]:
        """The learned reader's strip probabilities as the points' log-probabilities laid out
        as the models' (side, size) rows, the bar's counts, and the bar's confidence."""
        assert self.profile.references is not None
        refs = self.profile.references
        probs = soften(raw, refs.temperature)
        logp = np.log(np.maximum(probs, 1e-12))
        flat = np.full((2 * (MAX_STACK + 1), 24), -np.inf)
        # Classes 0..15: nothing and player 1's stacks of 1 to 15; 16..30: player 2's.
        flat[: MAX_STACK + 1] = logp[:24, : MAX_STACK + 1].T
        flat[MAX_STACK + 2 :] = logp[:24, MAX_STACK + 1 :].T
        bar = [0, 0]
        for strip in (BAR_LOWER, BAR_UPPER):
            count = count_of(int(probs[strip].argmax()))
            bar[0 if count > 0 else 1] += abs(count)
        bar_conf = float(probs[BAR_LOWER].max() * probs[BAR_UPPER].max())
        return flat, (min(bar[0], MAX_BAR), min(bar[1], MAX_BAR)), bar_conf

    def learn(
        self,
        image: np.ndarray,
        points: list[int] | tuple[int, ...],
        bar: tuple[int, int],
        dice: tuple[DieOnBoard, ...] = (),
    ) -> int:
        """Learn this board from a frame whose position is known (the players confirmed it):
        the strips it shows bare become their references, so the reader grows surer with
        every move. Left out: strips a die lies on, and strips the reader itself takes for
        anything but bare (under :data:`LEARN_FLOOR`): a position confirmed wrongly must not
        teach a checker as bare.

        :param points: the position in player 1's numbering, as :attr:`BoardReading.points`.
        :param bar: the checkers on the bar, ``(player 1, player 2)``.
        :param dice: the dice on the board (their centres), as read.
        :returns: how many strips were seen bare for the first time (0 with the models' reader).
        """
        if self._cutter is None or self.profile.references is None:
            return 0
        self.profile.check_frame(image)
        refs = self.profile.references
        strips = self._cutter.colour(image)
        probs = points_net.probabilities(
            encode(strips, refs.strips, refs.borrowed, self._checker_colours), self._network
        )
        counts = strip_counts(points, bar)
        under = self.dice_finder.strips_under(dice)
        # What the reader made of this position before it learns from it: evidence of how far
        # its confidence holds on this board (a confident mistake softens what it says after).
        refs.weigh(probs, counts, under)
        keep_out = [u or float(p[0]) < LEARN_FLOOR for u, p in zip(under, probs, strict=True)]
        newly = refs.learn(strips, counts, keep_out)
        self.learnt += newly
        return newly

    def _under_cube(self, owner: int | None, choice: np.ndarray) -> list[int]:
        """The points whose stack, as ``choice`` reads it, has its top checker where the cube
        of ``owner`` lies (within the cube's half side and a third of a checker)."""
        geometry = self.profile.geometry
        d = geometry.checker_diameter
        cx, cy = geometry.cube_center(owner)
        reach = CUBE_HALF * d + d / 3
        out = []
        for index in range(24):
            count = abs(_count(int(choice[index])))
            if count == 0:
                continue
            x, y = geometry.slot_center(index + 1, min(count, MAX_STACK) - 1)
            if abs(x - cx) < reach and abs(y - cy) < reach:
                out.append(index)
        return out

    def _conserve(self, logits: np.ndarray, choice: np.ndarray, bar: tuple[int, int]) -> np.ndarray:
        """Make each side's count add up, at the least cost in the scores.

        No side has more than fifteen checkers: stacks are cut back. And a side that still has
        a checker outside its home board (or on the bar) has, in play, almost always borne off
        none: when fewer than fifteen are seen, the checkers most likely missed are added back,
        as long as each addition was a close call.
        """
        choice = choice.copy()
        for side in (0, 1):
            counts, total = _seen(choice, side, bar[side])
            while total > 15:
                options = [
                    (float(logits[choice[i], i] - logits[_pick(side, size), i]), i, _pick(side, size))
                    for i, c in enumerate(counts)
                    if c > 0
                    for size in range(c)
                ]
                _, index, pick = min(options)
                choice[index] = pick
                counts, total = _seen(choice, side, bar[side])
            home = range(0, 6) if side == 0 else range(18, 24)
            outside = bar[side] > 0 or any(c > 0 for i, c in enumerate(counts) if i not in home)
            while total < 15 and outside:
                options = [
                    (float(logits[choice[i], i] - logits[_pick(side, max(c, 0) + 1), i]), i, _pick(side, max(c, 0) + 1))
                    for i, c in enumerate(counts)
                    if c >= 0 and max(c, 0) + 1 <= MAX_STACK
                ]
                cost, index, pick = min(options)
                if cost > ADD_BACK:
                    break
                choice[index] = pick
                counts, total = _seen(choice, side, bar[side])
        return choice

    def _stack_ends_doubted(self, colour: np.ndarray, points: list[int], under: np.ndarray) -> np.ndarray:
        """Which points' stacks, as read, end where this board's colours say they do not: the spot
        past a stack of five or fewer looks like one of its side's checkers more than bare (a
        checker more: a sixth lined up past five, which no rendered board showed the network), or
        the stack's last spot looks bare (a checker fewer), each by :data:`STACK_END` or more in
        the models' log-likelihoods. Spots a die covers tell nothing."""
        empty = self._empty_ll(colour)
        sides = (self._ll("p1", colour), self._ll("p2", colour))
        doubted = np.zeros(24, bool)
        for index, count in enumerate(points):
            size = abs(count)
            if size > SLOTS:
                continue
            side = sides[0 if count > 0 else 1] if count else np.maximum(sides[0], sides[1])
            ahead = 2 * size
            if ahead < STEPS and not under[index, ahead] and side[index, ahead] - empty[index, ahead] > STACK_END:
                doubted[index] = True
            last = 2 * size - 2
            if size and not under[index, last] and side[index, last] - empty[index, last] < -STACK_END:
                doubted[index] = True
        return doubted

    def _vanished(self, points: list[int], off: tuple[int, int], home: tuple[bool, bool]) -> set[int]:
        """Points (indexes) where a side's checkers went missing since the last clear reading
        when it cannot have borne them off (not all home, now or then): an arm or a sleeve the
        colour of the board may hide them, and a point read bare there is not read surely."""
        counted = self._counted if self.remember else None
        if counted is None:
            return set()
        out: set[int] = set()
        for side, sign in ((0, 1), (1, -1)):
            if off[side] <= counted.off[side] or home[side] or counted.home[side]:
                continue
            out |= {i for i in range(24) if max(sign * points[i], 0) < max(sign * counted.points[i], 0)}
        return out

    def _calibration_off(self) -> tuple[int, int]:
        """The checkers borne off in the calibration frame (none in the starting position)."""
        try:
            position = Position.from_id(self.profile.position) if self.profile.position else Position.STARTING
        except BackgammonError:
            return (0, 0)
        return (15 - sum(position.mover), 15 - sum(position.opponent))

    def border_changes(self, image: np.ndarray, cube_end: str | None = None) -> np.ndarray:
        """Where the board's frame round the field (its left, top and bottom sides) has changed
        since calibration (a solid patch): see :meth:`vision.occlusion.OcclusionCheck.border_changes`.

        A boolean mask over :func:`vision.features.border_band`'s small image; all ``False``
        without the calibration's frame.
        """
        return self.occlusion.border_changes(image, cube_end)

    def _read_bar(self, feats: dict[str, np.ndarray]) -> tuple[tuple[int, int], float]:
        """Checkers on the bar for each player, and the confidence of both counts."""
        if "bar_empty" not in self.models:
            return (0, 0), 1.0
        counts = []
        conf = 1.0
        for player in (0, 1):
            colour = feats["bar_colour"][player]
            ll_empty = self._ll("bar_empty", colour)
            ll_p = self._ll(f"p{player + 1}", colour)
            ll_any = np.logaddexp(ll_empty, ll_p) - math.log(2)
            seam_stack, ring_stack = self._shape_stacks(
                f"p{player + 1}", feats["bar_seam"][player][:, None], feats["bar_ring"][player][:, None]
            )
            j = np.arange(colour.shape[0])[None, :]
            colour_stack = np.stack([ll_empty, ll_p, ll_any])
            score = (
                colour_stack[self._bar_colour, j].sum(axis=1)
                + seam_stack[self._bar_seam, j].sum(axis=1)
                + ring_stack[self._bar_ring, j].sum(axis=1)
            )
            prob = _softmax(score / TEMPERATURE, axis=0)
            counts.append(int(score.argmax()))
            conf *= float(prob.max())
        return (counts[0], counts[1]), conf


def _seen(picks: np.ndarray, side: int, on_bar: int) -> tuple[list[int], int]:
    """Counts per point from ``side``'s point of view (its checkers positive), and its total."""
    sign = 1 if side == 0 else -1
    counts = [_count(int(c)) * sign for c in picks]
    return counts, sum(c for c in counts if c > 0) + on_bar


def _pick(side: int, size: int) -> int:
    """The row of the flattened score table for ``size`` checkers of ``side`` (0 or 1)."""
    return side * (MAX_STACK + 1) + size if size else 0


def _count(pick: int) -> int:
    """The signed count of a (side, size) pick from the flattened score table."""
    side, size = divmod(pick, MAX_STACK + 1)
    return size if side == 0 else -size


def _cap(p: np.ndarray, pick: int, most: float) -> np.ndarray:
    """Probabilities ``p`` with ``p[pick]`` at most ``most``, the rest scaled up to match."""
    if p[pick] <= most:
        return p
    out = p.copy()
    rest = 1.0 - p[pick]
    out[pick] = most
    if rest > 0:
        out[np.arange(len(p)) != pick] *= (1.0 - most) / rest
    else:
        out[np.arange(len(p)) != pick] = (1.0 - most) / (len(p) - 1)
    return out


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    result: np.ndarray = e / e.sum(axis=axis, keepdims=True)
    return result


@dataclass(frozen=True, slots=True)
class _Counted:
    """A clear reading's counts, as the next read checks them: each point (player 1's
    numbering, + his, - player 2's), the checkers borne off and who has all his home."""

    points: tuple[int, ...]
    off: tuple[int, int]
    home: tuple[bool, bool]


def _short_sides(off: tuple[int, int], home: tuple[bool, bool]) -> list[int]:
    """The sides (0, 1) read short of fifteen while not all home.

    Such a side has, in play, borne off none (only a side all home bears off; one hit while
    bearing off is rare), so a checker of it is missing from the count. The reading as a whole
    is not read with confidence (see :meth:`BoardReader.read`), nor its tall piles
    (:func:`_short_piles`).
    """
    return [side for side in (0, 1) if off[side] and not home[side]]


def _short_piles(points: list[int], off: tuple[int, int], home: tuple[bool, bool]) -> set[int]:
    """Points (indexes) of the piles of more than :data:`PILE_SURE` checkers of the
    :func:`_short_sides`: a tall pile, whose lower checkers show least, is where a missed
    checker most likely hides."""
    out: set[int] = set()
    for side in _short_sides(off, home):
        sign = 1 if side == 0 else -1
        out |= {i for i, count in enumerate(points) if sign * count > PILE_SURE}
    return out


def _all_home(points: list[int], bar: tuple[int, int]) -> tuple[bool, bool]:
    """Whether each player has every checker on the board in his home board (player 1's is
    points 1-6, player 2's 19-24, in player 1's numbering): only then may he bear off."""
    one = bar[0] == 0 and all(c <= 0 for c in points[6:])
    two = bar[1] == 0 and all(c >= 0 for c in points[:18])
    return one, two
