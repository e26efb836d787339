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
from vision.cube import CubeFound, read_cube, read_track
from vision.dice import CLS_MARGIN, CLS_SIZE, DET_CONTEXT, NOT_A_DIE, detect, face_probabilities
from vision.features import (
    CHECKER,
    EDGE,
    EMPTY,
    FLAT,
    LOOK_SCALE,
    MAX_BAR,
    MAX_STACK,
    RING,
    SCALE,
    STEPS,
    TOP,
    FieldSampler,
    border_band,
    border_mask,
    expected,
    expected_bar,
    look_of,
    rectify,
)
from vision.follow import board_view, corners_of, follow, has_moved
from vision.geometry import FIELD_W, SLOTS, slot_layer
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

#: Softening of the per-point scores before they become probabilities: the samples along a
#: point are not independent, so their log-likelihoods overstate the evidence.
TEMPERATURE = 3.0
#: The largest loss in a point's score (softened log-likelihood) accepted to add back a checker
#: that the fifteen-a-side count says was missed.
ADD_BACK = 4.0
#: How far (L, a, b) a bare spot may drift from its look at calibration: noise, a little light.
SPOT_SPREAD = (14.0, 7.0, 7.0)
#: A colour sample this far (squared, in standard deviations) from every model is foreign to
#: the board: a hand, a sleeve, a shadow of a player.
FOREIGN = 36.0
#: A point with this many foreign samples in a row is hidden; two hidden points make the board
#: occluded.
FOREIGN_SAMPLES = 3
#: Grey-level change of a pixel of the board's frame that counts, and the share of the frame's
#: pixels changed that means an arm is over it.
BORDER_CHANGE = 12
BORDER_SHARE = 0.004
#: A spot of the field's look (:func:`vision.features.look_of`) whose colour moved this far
#: (Lab) from the reference's, once the light's shift over the whole field is taken out, has
#: changed. A checker or a hand against the board it covers: 40 and more; a lamp's glare
#: wandering over glossy checkers, JPEG and noise: under 20.
LOOK_CHANGE = 25.0
#: A patch of the field this big (in checkers' areas) that changed where no checker, die or
#: cube came or went is something over the field: a hand, an arm, a cup. On real stream frames
#: hands made patches of 2.6 to 44 checkers; checkers put down a little off their place leave
#: crescents of up to 1.8.
HAND_AREA = 2.5
#: A checker that came is taken to explain the change where it lies when the middle of its spot
#: is this close (Lab) to its side's checkers' colour; one that left, when its spot is this close
#: to the bare look there.
DISC_COLOUR = 35.0
#: The dice's size (a side over a checker's diameter) the constants below were tuned for: the
#: 2D renderer's. Other sizes scale them (the profile's ``die_fraction``).
TUNED_DIE_FRACTION = 0.65
#: The detector sees the rectified field at the scale that makes half a checker this many
#: pixels, for dice of the renderer's size, 0.65 of a checker; smaller dice (the profile's
#: ``die_fraction``) are seen bigger by as much, so that a die has as many pixels. A die turned
#: 45 degrees covers 1.4 times its side, with its shadow more: from about 10 to 26 pixels here,
#: inside the 8 to 32 the detector finds at one level. At 16, the renderer's dice were at the
#: top of that range, where the detector missed one in six of them (black dice showing few
#: pips the most) and boxed others by a part.
DIE_PIXELS = 12.0
#: The sides a die's box may have, in checker diameters, for the renderer's dice (the lower
#: bound shrinks with the profile's ``die_fraction``, the upper grows with a bigger one): real
#: dice are 0.4 to 0.5 of a checker (the renderer draws 0.65), and the detector's box may take
#: in the die's sides and its shadow (a dark die's shadow looks like more die), up to about 1.3
#: on rendered boards. Checkers' boxes (1.0 to 1.2) pass too: the classifier tells them from
#: dice (see :data:`DIE_SPAN`).
DIE_SIZE = (0.3, 1.4)
#: The most a die lying flat covers from above, in checker diameters: its side (the renderer's
#: 0.65) turned 45 degrees, about 0.92. The classifier's crop is this (and its margin) round
#: the box's centre, whatever the box's size: the detector's box on a die is often only a part
#: of it (a few pips), and a crop that cuts the die misreads it (a 5 without its outer pips is
#: a 4, a 3 a 2); or the die with its shadow, or a checker, and a crop that takes in the
#: checker round a die-like spot reads a die in it. For smaller dice (the profile's
#: ``die_fraction``) it shrinks with them.
DIE_SPAN = 0.9
#: A candidate whose crop, read once upright, is "not a die" with this probability is dropped
#: before the crop is read the four ways that give a confidence: most candidates are checkers,
#: and the one reading sorts out most (86% of those on rendered boards) at a quarter of the
#: cost. Of 578 boxes on dice on rendered boards, none scored above 0.82 read upright.
NOT_A_DIE_AT_ONCE = 0.9
#: Of the boxes that pass it, at most this many (the likeliest dice first) are read in full.
MOST_READ = 4
#: The boxes the detector is surest of, this many, are read first; the rest only when these
#: hold fewer than two dice, each read with :data:`SECOND_LOOK` or more (most boxes are
#: checkers, and the dice are mostly among the first).
FIRST_READ = 6
#: Two dice among the first boxes read with this much are the roll: the rest are not read (on
#: rendered boards the rest then held no die in 10 of 11 frames, at half the dice's time).
SECOND_LOOK = 0.6
#: A box under this share of :data:`DIE_SPAN` may be a spot on a checker's rim or between two
#: checkers, which the crop of a whole die's span round it shows as a die with a checker's
#: curve through it, and the classifier now and then reads as one: it must also pass the
#: :data:`NOT_A_DIE_AT_ONCE` test cut to the box (where it is a bit of a rim). A die's part
#: passes it (its pips), as do small real dice.
SMALL_BOX = 2 / 3
#: A die's top face seen from above is square; one leaning on something shows it foreshortened.
#: Below this ratio of its sides the die is cocked; up to FLAT_SURE it is a close call, and the
#: die's confidence falls. Seen at a slant, a flat die's side faces may join its top face in
#: the picture: the threshold is low, so that a flat die is seldom called cocked (a re-roll for
#: nothing), and a cocked one not called is at least not read flat with confidence.
FLAT_RATIO = 0.65
FLAT_SURE = 0.9
#: The confidence left to a die whose top face cannot be made out (a white die on a white
#: board, a black one on dark wood): most thrown dice land flat, but a reading no better than
#: this is never sure (below :data:`vision.dice.CONFIDENT`, 0.9), only good enough to go by
#: (above the referee's floor, 0.6) when the face itself reads well. It was a coin's 0.5, which
#: sent every roll on such a board to the players.
UNSEEN_FLAT = 0.8
#: How far (Lab) the top face's colour strays across it; the side faces, turned from the lamp,
#: lie further from it.
FACE_SPREAD = 16.0
#: The reader remembers what it last read, region by region, and reads again only what has
#: changed since: at a table most of the board lies still from one read to the next. The
#: half-size field's colour is compared in tiles this many pixels square (about a fifth of a
#: checker on a board filling a 1280x720 frame).
TILE = 8
#: A tile whose mean level in any colour channel moved this far from when it was last read has
#: changed. Sensor noise moves a tile's mean by a fraction of a level; a checker put down or
#: taken away, a die, a hand, by tens of levels.
TILE_CHANGE = 6.0
#: When more of the field than this share has changed, or its light as a whole has moved by
#: more than :data:`LIGHT_SHIFT` levels (a lamp, the camera's exposure), the frame is read whole.
MOST_CHANGED = 0.4
LIGHT_SHIFT = 3.0
#: When more of the field than this share has changed at once, the board may have moved (see
#: :meth:`BoardReader._follow`): knocked 5 pixels aside, a quarter or more of the held-out 3D
#: frames' tiles change; a move of two checkers, a few hundredths.
FOLLOW_CHANGED = 0.2
#: Reading with memory, the detector looks for new dice only where the field changed (and
#: round the dice it was unsure of): elsewhere they would have been seen before. When the parts
#: it would look at, with the room round them it needs, take in more than this share of the
#: field, it looks at the whole.
LOOK_WHOLE = 0.6
#: A die read with less confidence than this (what the table needs to record a roll) is read
#: again in every frame, though nothing changed round it: a fresh look may read it surely.
KEEP_DIE = 0.6
#: What a die's shadow leaves of the light on the ground under it (about what the renderer's
#: deepest shadows leave; real ones under a lamp are alike).
SHADOW_DEPTH = 0.5
#: Piles of up to this many checkers show every checker from above; above it, the lower
#: layers are partly hidden, and a count may be one short (see :func:`_short_piles`).
PILE_SURE = 5
#: A 1 read with its middle this close to the middle of a checker the reader counts (checker
#: diameters) is that checker's glint or centre mark, not a die: a glossy checker under a lamp
#: shows one bright dot in a dark disc, which reads as a 1 with confidence. A die leaning on a
#: checker lies farther off (0.38 at the least on 3D-rendered boards, against 0.21 at the most
#: for the glints read as dice there); any other face read there is a die resting on the
#: checker, and is called cocked.
ON_CHECKER = 0.3
#: A die is painted out of the strips it lies on over a circle this many times its box's
#: half-diagonal (its sides and its shadow reach a little past the box).
DIE_PAINT = 1.2
#: A die whose middle lies this close to a checker's (checker diameters) lies on the checker:
#: cocked. A 1 read there, farther off than :data:`ON_CHECKER`, with the checker's own colour
#: round its pip (see :data:`GLINT_COLOUR`) is a glint off the checker's rim or bevel: a lamp
#: lights a glossy checker's top off its middle when the camera looks at a slant (0.33 to 0.40
#: of a checker off on 3D-rendered boards).
CHECKER_TOP = 0.45
#: The squared Mahalanobis distance, from the calibration's model of a side's checkers, within
#: which the colour round a 1 read on one of that side's checkers is the checker's own.
GLINT_COLOUR = 25.0
#: The ring round a 1's pip whose colour is looked at (checker diameters): past a pip's edge
#: (a real die's pip is about 0.05 across), inside a die's face (half its side, 0.2 to 0.25).
GLINT_RING = (0.1, 0.2)


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


@dataclass(frozen=True)
class _Checkers:
    """The checkers a read counts, for telling their glints from dice: each one's middle on the
    half-size field ``(n, 2)``, its side ``(n,)`` (0: player 1's), and the field itself."""

    middles: np.ndarray
    sides: np.ndarray
    field: np.ndarray


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
        :data:`TILE`); ``False`` reads every frame whole.
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
        self.homography = profile.homography
        self.sampler = FieldSampler(profile.geometry)
        self.models = profile.models
        self._die_scale = profile.die_fraction / TUNED_DIE_FRACTION
        self._die_span = DIE_SPAN * self._die_scale * self.sampler.d
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
        # Where the cube or the track counter may lie, on the half-size field: no die is read there.
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
        # What the field looked like at the last clear reading (at first, at calibration), and
        # what was read there: what changed since where no checker, die or cube came or went
        # lies over the field.
        self._reference = _Reference.of_profile(profile)
        # The frame's look and what changed in it (see _look_changes), kept for the read.
        self._changes_of: tuple[np.ndarray, tuple[_Reference, np.ndarray, np.ndarray] | None] | None = None
        # Which looks (see :meth:`_find_dice`) found the dice of the last read.
        self._dice_looks: set[str] = set()
        # The calibration's band round the field as an array, and moved half a pixel each way
        # (see _calibration_band).
        self._border: tuple[list[int], np.ndarray, dict[str | None, list[np.ndarray]]] | None = None
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
        # Each point's column on the field's look (x0, y0, x1, y1): what covers it hides it.
        self._look_boxes = [tuple(round(v * LOOK_SCALE) for v in geometry.point_box(index + 1)) for index in range(24)]
        # A patch of the look this big or more may be a hand (HAND_AREA checkers), in look pixels.
        self._hand_pixels = HAND_AREA * math.pi * (geometry.checker_diameter * LOOK_SCALE / 2) ** 2
        self._empty_means: np.ndarray | None = None
        if profile.empty_means:
            means = np.asarray(profile.empty_means, dtype=np.float64)
            self._spot_known = ~np.isnan(means).any(axis=2)
            self._empty_means = np.nan_to_num(means)
            cov = np.diag(SPOT_SPREAD) ** 2
            self._spot_inv = np.linalg.inv(cov)
            self._spot_norm = float(np.linalg.slogdet(cov)[1]) + 3 * math.log(2 * math.pi)

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
        kept = (self._counted, self._reference)
        reading, unsettled = self._read(image, cube=cube, dice=dice)
        if unsettled and self._follow(image):
            # Read again whole where the board lies now, with what was known before this read.
            self._seen = None
            self._counted, self._reference = kept
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
        if self.profile.border and self._arm_over_frame(self._band(image, found.homography)):
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
        checkers = None
        if dice:
            sides = np.repeat([0 if c > 0 else 1 for c in counted], [abs(c) for c in counted])
            checkers = _Checkers(self._checker_middles(counted), sides, field_image)
        look = look_of(field_image)
        # A hand over the field hides what lies under it: the looks for dice of rare colours
        # are spared (a die is far smaller than a hand, and the frame is occluded either way).
        hand = dice and self._look_changes(look) is not None and self._over_field(look, counted, bar, None)[0]
        found_dice = self._find_dice(field_image, image, changed, checkers, every_look=not hand) if dice else []
        under = self._under_dice(found_dice)
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
        hidden = self._hidden_points(feats, under)
        self._remember(tiles, changed, found_dice if dice else None, strip_probs, (found,) if cube else None)
        # An owned cube lies at its owner's end of the bar, reaching onto the frame.
        cube_end = None
        if found is not None and found.owner is not None and self.profile.cube_kind != "track":
            cube_end = "bottom" if found.owner == 1 else "top"
        band = self._band(image) if self.profile.border else None
        # The frame round the field no longer as at calibration: an arm over it, or the board
        # moved (tried by read). An arm over the frame alone, the trays or the table hides no
        # checker, and is no occlusion; one over the field is seen there.
        unsettled = (band is not None and self._arm_over_frame(band, cube_end)) or share > FOLLOW_CHANGED
        off = (max(15 - on_board[0], 0), max(15 - on_board[1], 0))
        home = _all_home(points, bar)
        over, covered = self._over_field(look, points, bar, found_dice if dice else None)
        hidden |= covered
        occluded = len(hidden) >= 2 or over
        vanished = self._vanished(points, off, home)
        for index in vanished | _short_piles(points, off, home):
            confidence[index] = min(confidence[index], DOUBTED_AT)
        if not occluded and self.remember:
            # Counted even when checkers vanished: a checker the reader keeps missing is
            # doubted once, not on every read after.
            self._counted = _Counted(tuple(points), off, home)
            self._reference = _Reference.of_look(look, tuple(points), bar)
        total = 0.0 if occluded else float(np.prod(confidence)) * bar_conf
        if _short_sides(off, home):
            total = min(total, DOUBTED_AT)
        reading = BoardReading(
            points=tuple(points),
            bar=bar,
            off=off,
            dice=tuple(self._board_die(field_image, box, value, conf, points) for box, value, conf in found_dice),
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

    def _tile_span(self, changed: np.ndarray, box: tuple[float, ...]) -> tuple[slice, slice]:
        """The tiles a box ``(x0, y0, x1, y1)`` on the half-size field covers."""
        rows, cols = changed.shape
        x0, y0, x1, y1 = box
        i0, i1 = max(0, math.floor(y0 / TILE)), min(rows, math.ceil(y1 / TILE))
        j0, j1 = max(0, math.floor(x0 / TILE)), min(cols, math.ceil(x1 / TILE))
        return slice(i0, max(i0, i1)), slice(j0, max(j0, j1))

    def _touches(self, changed: np.ndarray | None, box: tuple[float, ...]) -> bool:
        """Whether anything changed in a box ``(x0, y0, x1, y1)`` on the half-size field."""
        if changed is None:
            return True
        return bool(changed[self._tile_span(changed, box)].any())

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
        self._reference = _Reference.of_profile(self.profile)

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
                if not any(self._touches(changed, place) for place in self._cube_places):
                    return None
            else:
                geometry = self.profile.geometry
                x, y = geometry.track_center(last.value, last.owner) if track else geometry.cube_center(last.owner)
                reach = 0.9 * self.sampler.d
                x, y = x * SCALE, y * SCALE
                if not self._touches(changed, (x - reach, y - reach, x + reach, y + reach)):
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
            redo = np.array([self._touches(changed, box) for box in self._strip_boxes])
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
        masks = self._cutter.masks_round([self._die_in_image(box) for box, _, _ in dice])
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

    def _die_in_image(self, box: np.ndarray) -> tuple[float, float, float]:
        """A die's box on the half-size field as a circle in the image: centre and radius, the
        radius taking in its sides and shadow."""
        x, y, w, h = (float(v) / SCALE for v in box[:4])
        corners = np.array([[[x, y], [x + w, y], [x + w, y + h], [x, y + h]]], np.float64)
        at = cv2.perspectiveTransform(corners, self.homography)[0]
        centre = at.mean(axis=0)
        radius = float(np.linalg.norm(at - centre, axis=1).max()) * DIE_PAINT
        return float(centre[0]), float(centre[1]), radius

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
        under = self._strips_under(dice)
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

    def _strips_under(self, dice: tuple[DieOnBoard, ...]) -> list[bool]:
        """Which strips a die lies on (or near: half a checker round its centre)."""
        out = [False] * STRIPS
        if not dice:
            return out
        inverse = np.linalg.inv(self.homography)
        margin = 0.5 * self.profile.geometry.checker_diameter
        quads = field_strip_quads(self.profile.geometry)
        for die in dice:
            x, y, w = inverse @ np.array([die.center[0], die.center[1], 1.0])
            fx, fy = x / w, y / w
            for index, quad in enumerate(quads):
                x0, y0 = quad.min(axis=0) - margin
                x1, y1 = quad.max(axis=0) + margin
                if x0 <= fx <= x1 and y0 <= fy <= y1:
                    out[index] = True
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

    def _arm_over_frame(self, band: np.ndarray, cube_end: str | None = None) -> bool:
        """Whether something (an arm, a sleeve) lies over the board's frame round the field:
        its left, top and bottom sides, against the calibration's (``band``: the frame now).

        ``cube_end``: the end of the bar (``top`` or ``bottom``) where an owned cube lies.
        """
        before, mask = self._calibration_band(band), border_mask(cube_end)
        return _changed_share(band, before, mask, self._calibration_moves(before, cube_end)) > BORDER_SHARE

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

    def _over_field(
        self,
        look: np.ndarray,
        points: list[int],
        bar: tuple[int, int],
        dice: list[tuple[np.ndarray, int, float]] | None,
    ) -> tuple[bool, set[int]]:
        """Whether something lies over the field that is no checker, die or cube, and the points
        (indexes) it covers: the field's ``look`` held against the reference's (the last clear
        reading's, at first the calibration's), where it changed by more than the light did and
        no checker came or went (:attr:`BoardReading.points` against the reference's), no die
        lies and the cube may lie, in patches of :data:`HAND_AREA` checkers or more."""
        changes = self._look_changes(look)
        if changes is None:
            return False, set()
        reference, lab, patches = changes
        patches = patches.copy()
        patches[self._explained(reference, lab, points, bar, dice)] = 0
        count, labels, stats, _ = cv2.connectedComponentsWithStats(patches)
        big = [k for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] > self._hand_pixels]
        if not big:
            return False, set()
        over = np.isin(labels, big)
        covered = {index for index, (x0, y0, x1, y1) in enumerate(self._look_boxes) if over[y0:y1, x0:x1].mean() > 0.1}
        return True, covered

    def _look_changes(self, look: np.ndarray) -> tuple[_Reference, np.ndarray, np.ndarray] | None:
        """What :meth:`_over_field` weighs of the field's ``look``: the reference, the look in
        Lab, and the solid patches where it changed by more than the light did; ``None`` when
        there is no reference or those patches are too small together for a hand (the same
        look gives the same answer: it is kept for the frame's read)."""
        if self._changes_of is not None and self._changes_of[0] is look:
            return self._changes_of[1]
        reference = self._reference
        result: tuple[_Reference, np.ndarray, np.ndarray] | None = None
        if reference is not None and reference.known.any():
            lab = cv2.cvtColor(look, cv2.COLOR_BGR2LAB).astype(np.float32)
            difference = cv2.subtract(lab, reference.lab)
            # The light's shift over the field: the median of a sample of the spots.
            shift = np.median(difference.reshape(-1, 3)[reference.sample], axis=0)
            difference = cv2.subtract(difference, (*(float(v) for v in shift), 0.0))
            square = cv2.transform(cv2.multiply(difference, difference), np.ones((1, 3), np.float32))
            changed = ((square > LOOK_CHANGE**2) & reference.known).astype(np.uint8)
            # Noise and a checker's edge a pixel off are thin; a hand is a solid patch.
            patches = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
            if np.count_nonzero(patches) > self._hand_pixels:
                result = (reference, lab, patches)
        self._changes_of = (look, result)
        return result

    def _explained(
        self,
        reference: _Reference,
        lab: np.ndarray,
        points: list[int],
        bar: tuple[int, int],
        dice: list[tuple[np.ndarray, int, float]] | None,
    ) -> np.ndarray:
        """Where the look (``lab``, now) may have changed for what was read: the checkers of
        every point (and each player's part of the bar) whose count changed since the reference,
        as they are (each looking like its side's checkers) and as they were (each spot left
        looking bare, where that is known); the dice; the cube's places. A hand over a point
        that the reading takes for a change of checkers there looks like neither."""
        geometry = self.profile.geometry
        mask = np.zeros(reference.known.shape, np.uint8)
        r = round(0.6 * geometry.checker_diameter * LOOK_SCALE)
        colours = {1: np.asarray(self.models["p1"].mean), -1: np.asarray(self.models["p2"].mean)}

        half = max(1, r // 2)

        def disc(x: float, y: float, like: np.ndarray | None = None) -> None:
            cx, cy = round(x * LOOK_SCALE), round(y * LOOK_SCALE)
            if like is not None:
                seen = lab[max(0, cy - half) : cy + half + 1, max(0, cx - half) : cx + half + 1].reshape(-1, 3)
                if len(seen) and float(np.linalg.norm(np.median(seen, axis=0) - like)) > DISC_COLOUR:
                    return
            cv2.circle(mask, (cx, cy), r, 1, -1)

        for index in range(24):
            now, then = points[index], reference.points[index]
            if now == then:
                continue
            same_side = now * then > 0
            for slot in range(min(abs(now), 15)):
                if same_side and slot < abs(then):
                    disc(*geometry.slot_center(index + 1, slot))
                else:
                    disc(*geometry.slot_center(index + 1, slot), colours[1 if now > 0 else -1])
            for slot in range(abs(now) if same_side else 0, min(abs(then), 15)):
                layer, k = slot_layer(slot)
                j = 2 * k + layer
                bare = None
                if self._empty_means is not None and j < STEPS and self._spot_known[index, j]:
                    bare = self._empty_means[index, j]
                disc(*geometry.slot_center(index + 1, slot), bare)
        for player in (1, 2):
            if bar[player - 1] != reference.bar[player - 1]:
                for slot in range(max(bar[player - 1], reference.bar[player - 1])):
                    disc(*geometry.bar_slot_center(player, slot))
        for x, y in self._cube_spots:
            disc(x / SCALE, y / SCALE)
        grow = 0.25 * geometry.checker_diameter * LOOK_SCALE
        for box, _, _ in dice or ():
            bx, by, bw, bh = (float(v) / SCALE * LOOK_SCALE for v in box[:4])
            top_left = (round(bx - grow), round(by - grow))
            cv2.rectangle(mask, top_left, (round(bx + bw + grow), round(by + bh + grow)), 1, -1)
        result: np.ndarray = mask.astype(bool)
        return result

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

    def _band(self, image: np.ndarray, homography: np.ndarray | None = None) -> np.ndarray:
        """The frame's :func:`~vision.features.border_band`, made as the calibration's was
        (through ``homography``, by default the reader's)."""
        through = self.homography if homography is None else homography
        return border_band(image, through, mean=self.profile.border_mean).astype(np.float32)

    def _calibration_band(self, band: np.ndarray) -> np.ndarray:
        border = self.profile.border
        # Made once (the list of numbers is long): the profile's border is set at calibration.
        if self._border is None or self._border[0] is not border:
            self._border = (border, np.asarray(border, dtype=np.float32), {})
        return self._border[1].reshape(band.shape)

    def _calibration_moves(self, before: np.ndarray, cube_end: str | None) -> list[np.ndarray]:
        """:func:`_moved_band` of the calibration's band in :func:`border_mask`, made once."""
        assert self._border is not None
        moves = self._border[2]
        if cube_end not in moves:
            moves[cube_end] = _moved_band(before, border_mask(cube_end))
        return moves[cube_end]

    def _calibration_off(self) -> tuple[int, int]:
        """The checkers borne off in the calibration frame (none in the starting position)."""
        try:
            position = Position.from_id(self.profile.position) if self.profile.position else Position.STARTING
        except BackgammonError:
            return (0, 0)
        return (15 - sum(position.mover), 15 - sum(position.opponent))

    def border_changes(self, image: np.ndarray, cube_end: str | None = None) -> np.ndarray:
        """Where the board's frame round the field (its left, top and bottom sides) has changed
        since calibration (a solid patch).

        A boolean mask over :func:`vision.features.border_band`'s small image; all ``False``
        without the calibration's frame.
        """
        mask = border_mask(cube_end)
        if not self.profile.border:
            return np.zeros_like(mask)
        now = self._band(image)
        before = self._calibration_band(now)
        return _solid_changes(now, before, mask, self._calibration_moves(before, cube_end))

    def _hidden_points(self, feats: dict[str, np.ndarray], under: np.ndarray | None = None) -> set[int]:
        """Points with several samples unlike anything on this board (a hand over them).

        Samples under a die (``under``) are the die's, not foreign.
        """
        colour = feats["points_colour"]
        distances = [self.models["p1"].mahalanobis(colour), self.models["p2"].mahalanobis(colour)]
        for parity in (0, 1):
            model = self.models.get(f"empty{parity}")
            if model is not None:
                d = model.mahalanobis(colour)
                mask = np.asarray([(i + 1) % 2 == parity for i in range(24)])[:, None]
                distances.append(np.where(mask, d, np.inf))
        nearest = np.minimum.reduce(distances)
        outside = nearest > FOREIGN
        if under is not None:
            outside &= ~under
        # A hand is a solid patch: count the longest run of foreign samples along each point,
        # not all of them, since the seams between the checkers of a stack are scattered ones.
        run = np.zeros(outside.shape[0], dtype=np.int64)
        longest = np.zeros(outside.shape[0], dtype=np.int64)
        for column in outside.T:
            run = np.where(column, run + 1, 0)
            longest = np.maximum(longest, run)
        return {int(i) for i in np.flatnonzero(longest >= FOREIGN_SAMPLES)}

    # -- dice --------------------------------------------------------------------------------

    def _die_crop(self, image: np.ndarray, box: np.ndarray, *, tight: bool = False) -> np.ndarray:
        """The classifier's crop of a die found on the half-size field, taken from the frame.

        The frame has more pixels on a die than the half-size field: pips a pixel or two wide
        there are clear here. The crop is warped straight out of the frame, square on the field:
        a die's span (:data:`DIE_SPAN` for the profile's dice) across round the box's centre, or
        (``tight``) the box's longer side.
        """
        x, y, w, h = (float(v) / SCALE for v in box[:4])
        side = (max(w, h) if tight else self._die_span / SCALE) * CLS_MARGIN
        step = side / CLS_SIZE
        left, top = x + w / 2 - side / 2 + step / 2, y + h / 2 - side / 2 + step / 2
        crop_to_field = np.array([[step, 0.0, left], [0.0, step, top], [0.0, 0.0, 1.0]])
        return cv2.warpPerspective(
            image,
            self.homography @ crop_to_field,
            (CLS_SIZE, CLS_SIZE),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )

    def _find_dice(
        self,
        field_image: np.ndarray,
        image: np.ndarray,
        changed: np.ndarray | None = None,
        checkers: _Checkers | None = None,
        *,
        every_look: bool = True,
    ) -> list[tuple[np.ndarray, int, float]]:
        """Dice on the rectified field: ``(box x, y, w, h in its pixels, face, confidence)``.

        The detector runs at the one scale that suits dice on this board; boxes of the wrong
        size for a die, or where the cube or track counter lies, are not dice; the classifier
        drops what is more likely no die than any face. The detector sees grey: while fewer
        than two dice are found, it looks again on the red-green axis, where a red die on a
        green cloth (the cloth's grey) stands out, then on the grey turned negative, where a
        black die with white pips looks like the white dice it mostly learnt from. A roll is two
        dice: of more, the two read with the most confidence. A 1 read in the middle of one of
        the ``checkers`` counted is its glint or centre mark, not a die (see :data:`ON_CHECKER`
        and :data:`CHECKER_TOP`). Boxes whose centres lie closer than half a die's span are one die
        (a part of it boxed besides the whole, or the same die seen again on another view): the
        most confident reading of it stands for it.

        With ``changed`` (see :meth:`_changes`): a roll is two dice, so two dice of the last
        read that nothing changed round still lie there, and the changes are elsewhere (the
        checkers being moved). Otherwise the field is looked over whole: the detector weighs a
        wide neighbourhood round each spot, and a part of the field read alone is not read as
        the whole field reads it. Without ``every_look`` (a hand over the field), the other
        looks are taken only where they found the last read's dice.
        """
        last = None if self._seen is None else self._seen.dice
        gone = False
        kept: list[tuple[np.ndarray, int, float]] = []
        look = None if changed is None or last is None else changed.copy()
        if changed is not None and last:
            margin = 0.5 * self._die_span
            kept = [die for die in last if die[2] >= KEEP_DIE and not self._touches(changed, _grown(die[0], margin))]
            if len(kept) >= 2:
                return kept
            assert look is not None
            for box, _, confidence in last:
                if confidence < KEEP_DIE:
                    look[self._tile_span(changed, _grown(box, self._die_span))] = True
            # Nothing changed but where the last dice lay: they were picked up (or turned over,
            # or a checker moved beside them). Dice found there again are found by the looks
            # that found them before; the other looks, for dice of rare colours, are spared.
            # A die's sides and shadow reach past its box, and the change is grown by a tile.
            reach = self._die_span + TILE
            elsewhere = changed.copy()
            for box, _, _ in last:
                elsewhere[self._tile_span(changed, _grown(box, reach))] = False
            # Each of them changed where it lay itself; one that did not is there still (the
            # change beside it a checker's), and is looked for every way.
            moved = all(self._touches(changed, _grown(box, 0.0)) for box, _, _ in last)
            gone = moved and not elsewhere.any()
        scale = DIE_PIXELS / (0.5 * self.sampler.d * self._die_scale)
        seen, scale = self._detector_field(field_image, image, scale)
        apart = 0.5 * self._die_span
        regions = None if look is None else self._look_regions(look, seen, scale)
        new = self._read_boxes(image, self._detect(seen, scale, regions), checkers)
        looks = {id(die): "grey" for die in new}
        found = self._distinct(kept + new, apart)
        for view in (_red_green, _negative):
            if len(found) >= 2:
                break
            if (gone or not every_look) and view.__name__ not in self._dice_looks:
                continue
            more = self._detect(view(seen), scale, regions)
            if found and len(more):
                # Only where an earlier look found no die.
                more = more[_centre_distance(more, np.stack([f[0] for f in found])).min(axis=1) >= apart]
            new = self._read_boxes(image, more, checkers)
            looks.update((id(die), view.__name__) for die in new)
            found = self._distinct(found + new, apart)
        # A die kept from the last read was found by one of the looks that found the dice then.
        self._dice_looks = set().union(
            *({looks[id(die)]} if id(die) in looks else self._dice_looks for die in found[:2])
        )
        return found[:2]

    def _checker_middles(self, points: list[int], *, bottom_only: bool = False) -> np.ndarray:
        """Where the middles of the checkers of ``points`` (as :attr:`BoardReading.points`) lie
        on the half-size field, ``(n, 2)``: every checker of each pile, or with
        ``bottom_only`` those lying on the board (the first five)."""
        middles = [
            self.sampler.points[index, 2 * k + layer]
            for index, count in enumerate(points)
            for layer, k in (slot_layer(slot) for slot in range(min(abs(count), SLOTS) if bottom_only else abs(count)))
        ]
        return np.asarray(middles, dtype=np.float32).reshape(-1, 2)

    def _detector_field(self, field_image: np.ndarray, image: np.ndarray, scale: float) -> tuple[np.ndarray, float]:
        """The field the detector looks at, and the scale to run it at on that field.

        Up to the half-size field's own scale, the half-size field. Small dice far from the
        camera want more: the field is then warped again from the frame at the scale they want,
        not the half-size field blown up, which has lost some of their pips' sharpness (dice 0.3
        of a checker on rendered boards: 84% read right, against 81%).
        """
        if scale <= 1.0:
            return field_image, scale
        h, w = field_image.shape[:2]
        size = (round(w * scale), round(h * scale))
        to_field = np.diag([SCALE * scale, SCALE * scale, 1.0]) @ np.linalg.inv(self.homography)
        return cv2.warpPerspective(image, to_field, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), 1.0

    def _look_regions(
        self, look: np.ndarray, seen: np.ndarray, scale: float
    ) -> list[tuple[float, float, float, float]] | None:
        """The parts of ``seen`` to look for dice in: those of the tiles in ``look``, one per
        group of tiles whose views overlap (none when no tile is); ``None`` (look at the whole
        field) when the views would together take in most of it."""
        ratio = seen.shape[1] / round(FIELD_W * SCALE)
        step = TILE * ratio
        reach = DET_CONTEXT / scale
        count, _, stats, _ = cv2.connectedComponentsWithStats(look.astype(np.uint8), connectivity=8)
        boxes = [
            [x * step - reach, y * step - reach, (x + w) * step + reach, (y + h) * step + reach]
            for x, y, w, h, _ in stats[1:count]
        ]
        merged = True
        while merged:
            merged = False
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    a, b = boxes[i], boxes[j]
                    if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                        boxes[i] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                        del boxes[j]
                        merged = True
                        break
                if merged:
                    break
        height, width = seen.shape[:2]
        area = sum((min(x1, width) - max(x0, 0)) * (min(y1, height) - max(y0, 0)) for x0, y0, x1, y1 in boxes)
        if area > LOOK_WHOLE * width * height:
            return None
        return [(x0 + reach, y0 + reach, x1 - reach, y1 - reach) for x0, y0, x1, y1 in boxes]

    def _detect(
        self, seen: np.ndarray, scale: float, regions: list[tuple[float, float, float, float]] | None = None
    ) -> np.ndarray:
        """The detector's boxes on ``seen`` (see :meth:`_detector_field`) in half-size field
        pixels, centred in ``regions`` of ``seen`` (by default anywhere)."""
        boxes = detect(seen, scales=[scale], regions=regions)
        ratio = seen.shape[1] / round(FIELD_W * SCALE)
        if ratio != 1.0 and len(boxes):
            boxes[:, :4] /= ratio
        return boxes

    @staticmethod
    def _distinct(found: list[tuple[np.ndarray, int, float]], apart: float) -> list[tuple[np.ndarray, int, float]]:
        """Readings one per die, most confident first: of those closer than ``apart``, the best."""
        kept: list[tuple[np.ndarray, int, float]] = []
        for reading in sorted(found, key=lambda f: -f[2]):
            if not kept or _centre_distance(reading[0][None], np.stack([k[0] for k in kept])).min() >= apart:
                kept.append(reading)
        return kept

    def _read_boxes(
        self, image: np.ndarray, boxes: np.ndarray, checkers: _Checkers | None = None
    ) -> list[tuple[np.ndarray, int, float]]:
        """The detector's boxes that can be dice, with the faces the classifier reads on them,
        less the 1s that are glints on the ``checkers`` (see :meth:`_not_glints`).

        The boxes the detector is surest of are read first; the rest only when those do not
        give two dice read with confidence (a roll is two dice).
        """
        d = self.sampler.d
        kept = []
        for box in boxes[:, :4]:
            x, y, w, h = (float(v) for v in box)
            cx, cy = x + w / 2, y + h / 2
            if not DIE_SIZE[0] * self._die_scale * d <= max(w, h) <= DIE_SIZE[1] * max(1.0, self._die_scale) * d:
                continue
            if any(math.hypot(cx - sx, cy - sy) < 0.45 * d for sx, sy in self._cube_spots):
                continue
            kept.append(box)
        found = self._not_glints(self._read_candidates(image, kept[:FIRST_READ]), checkers)
        sure = [f for f in self._distinct(found, 0.5 * self._die_span) if f[2] >= SECOND_LOOK]
        if len(sure) < 2 and len(kept) > FIRST_READ:
            found += self._not_glints(self._read_candidates(image, kept[FIRST_READ:]), checkers)
        return found

    def _not_glints(
        self, found: list[tuple[np.ndarray, int, float]], checkers: _Checkers | None
    ) -> list[tuple[np.ndarray, int, float]]:
        """``found`` less the 1s that are glints on the ``checkers``: those whose middles lie
        within :data:`ON_CHECKER` of a checker's, and those within :data:`CHECKER_TOP` of one
        with that checker's colour round them."""
        if checkers is None or not len(checkers.middles):
            return found
        d = self.sampler.d
        kept = []
        for die in found:
            if die[1] == 1:
                x, y, w, h = (float(v) for v in die[0][:4])
                cx, cy = x + w / 2, y + h / 2
                apart = np.hypot(checkers.middles[:, 0] - cx, checkers.middles[:, 1] - cy)
                nearest = int(apart.argmin())
                if apart[nearest] < ON_CHECKER * d:
                    continue
                if apart[nearest] < CHECKER_TOP * d and self._checker_coloured(
                    checkers.field, (cx, cy), int(checkers.sides[nearest])
                ):
                    continue
            kept.append(die)
        return kept

    def _checker_coloured(self, field_image: np.ndarray, at: tuple[float, float], side: int) -> bool:
        """Whether what lies round a pip at ``at`` is of the colour of ``side``'s checkers: the
        median colour of a ring round it (:data:`GLINT_RING`), inside a die's face were it a
        die's, inside the checker's top were it a glint."""
        inner, outer = (share * self.sampler.d for share in GLINT_RING)
        x, y = at
        r = math.ceil(outer)
        x0, y0 = max(0, round(x) - r), max(0, round(y) - r)
        patch = field_image[y0 : round(y) + r + 1, x0 : round(x) + r + 1]
        if not patch.size:
            return False
        ys, xs = np.mgrid[y0 : y0 + patch.shape[0], x0 : x0 + patch.shape[1]]
        apart = np.hypot(xs - x, ys - y)
        ring = patch[(apart >= inner) & (apart <= outer)]
        if not len(ring):
            return False
        colour = np.median(cv2.cvtColor(ring[None], cv2.COLOR_BGR2LAB)[0].astype(np.float32), axis=0)
        return bool(self.models[f"p{side + 1}"].mahalanobis(colour) <= GLINT_COLOUR)

    def _read_candidates(self, image: np.ndarray, kept: list[np.ndarray]) -> list[tuple[np.ndarray, int, float]]:
        """Read the faces on boxes that can be dice (see :meth:`_read_boxes`)."""
        if not kept:
            return []
        crops = np.stack([self._die_crop(image, b) for b in kept])
        upright = face_probabilities(crops, views=1)
        not_die = upright[:, NOT_A_DIE]
        likely = not_die < NOT_A_DIE_AT_ONCE
        small = [i for i, b in enumerate(kept) if likely[i] and max(b[2], b[3]) < SMALL_BOX * self._die_span]
        if small:
            tight = np.stack([self._die_crop(image, kept[i], tight=True) for i in small])
            likely[small] &= face_probabilities(tight, views=1)[:, NOT_A_DIE] < NOT_A_DIE_AT_ONCE
        if not likely.any():
            return []
        if likely.sum() > MOST_READ:
            # Each box read four ways costs as much as four boxes: only the likeliest go on.
            order = np.argsort(np.where(likely, not_die, np.inf), kind="stable")
            likely[:] = False
            likely[order[:MOST_READ]] = True
        probs = face_probabilities(crops[likely], upright=upright[likely])
        found = []
        for box, p in zip([b for b, keep in zip(kept, likely, strict=True) if keep], probs, strict=True):
            face = int(np.argmax(p[:NOT_A_DIE]))
            if p[NOT_A_DIE] < p[face]:
                found.append((box, face + 1, float(p[face])))
        return found

    def _under_dice(self, dice: list[tuple[np.ndarray, int, float]]) -> np.ndarray:
        """Which point samples (24 x STEPS) a die covers."""
        under = np.zeros(self.sampler.points.shape[:2], dtype=bool)
        reach = self.sampler.radius
        px, py = self.sampler.points[..., 0], self.sampler.points[..., 1]
        for (x, y, w, h), _, _ in dice:
            under |= (px > x - reach) & (px < x + w + reach) & (py > y - reach) & (py < y + h + reach)
        return under

    def _board_die(
        self, field_image: np.ndarray, box: np.ndarray, value: int, confidence: float, points: list[int]
    ) -> DieOnBoard:
        """A found die in the frame's terms: centre in image pixels, half, flat, confidence.

        A die is cocked when its top face is not square from above (it leans on something) or
        when it lies where a checker stands (it rests on the checker).
        """
        x, y, w, h = (float(v) for v in box)
        cx, cy = x + w / 2, y + h / 2
        ratio = _top_face_ratio(field_image, (x, y, w, h), self._die_span)
        flat = ratio is None or ratio >= FLAT_RATIO
        if ratio is None:
            # Whether it lies flat cannot be seen: the reading is as sure as dice land flat.
            confidence *= UNSEEN_FLAT
        elif flat and ratio < FLAT_SURE:
            confidence *= 0.5 + 0.5 * (ratio - FLAT_RATIO) / (FLAT_SURE - FLAT_RATIO)
        if _near_middle(self._checker_middles(points, bottom_only=True), box, CHECKER_TOP * self.sampler.d):
            flat = False
        fx, fy = cx / SCALE, cy / SCALE
        ix, iy, iw = self.homography @ np.array([fx, fy, 1.0])
        half = "left" if fx < FIELD_W / 2 else "right"
        return DieOnBoard(
            value=value, center=(float(ix / iw), float(iy / iw)), flat=flat, half=half, confidence=confidence
        )

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


def _grown(box: np.ndarray, margin: float) -> tuple[float, float, float, float]:
    """A die's box ``x, y, w, h`` as ``(x0, y0, x1, y1)``, ``margin`` wider on every side."""
    x, y, w, h = (float(v) for v in box[:4])
    return x - margin, y - margin, x + w + margin, y + h + margin


def _near_middle(middles: np.ndarray, box: np.ndarray, reach: float) -> bool:
    """Whether the centre of a box ``x, y, w, h`` lies within ``reach`` of one of ``middles``."""
    if not len(middles):
        return False
    x, y, w, h = (float(v) for v in box[:4])
    return bool(np.hypot(middles[:, 0] - (x + w / 2), middles[:, 1] - (y + h / 2)).min() < reach)


def _centre_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise distances between the centres of ``(n, 4+)`` and ``(m, 4+)`` boxes x, y, w, h."""
    ca = a[:, :2] + a[:, 2:4] / 2
    cb = b[:, :2] + b[:, 2:4] / 2
    return np.asarray(np.hypot(*(ca[:, None, :] - cb[None, :, :]).transpose(2, 0, 1)))


def _red_green(field_image: np.ndarray) -> np.ndarray:
    """The field on Lab's red-green axis, stretched to full range, as a BGR picture."""
    redgreen = cv2.cvtColor(field_image, cv2.COLOR_BGR2LAB)[:, :, 1]
    redgreen = cv2.normalize(redgreen, None, 0, 255, cv2.NORM_MINMAX)
    return cv2.cvtColor(redgreen, cv2.COLOR_GRAY2BGR)


def _negative(field_image: np.ndarray) -> np.ndarray:
    """The field's negative: dark dice with light pips look like light dice with dark pips."""
    return 255 - field_image


def _top_face_ratio(
    field_image: np.ndarray, box: tuple[float, float, float, float], span: float | None = None
) -> float | None:
    """The ratio of the shorter to the longer side of a die's top face, seen from above.

    The top face is what has the die's colour (taken in the middle of its box, where the pips
    are few against the body) connected to the middle, cut from the board round it at half the
    colour distance between the two, its pips filled in and anything thin cut off. A die leaning
    on something shows its top face foreshortened, and a side face in its shadow. ``None`` when
    the die cannot be told from what lies round it (a white die on a white board or touching a
    white checker) or from its shadow on it (a dark die on dark wood). ``span``: the most a die
    covers on the field (pixels), if known.
    """
    x, y, w, h = box
    grow = 0.3 * max(w, h)
    x0, y0 = max(0, int(x - grow)), max(0, int(y - grow))
    x1 = min(field_image.shape[1], math.ceil(x + w + grow))
    y1 = min(field_image.shape[0], math.ceil(y + h + grow))
    bgr = field_image[y0:y1, x0:x1]
    crop = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    if min(crop.shape[:2]) < 6:
        return None
    cx, cy = x + w / 2 - x0, y + h / 2 - y0
    r = max(1, round(0.25 * min(w, h)))
    core = crop[max(0, round(cy) - r) : round(cy) + r + 1, max(0, round(cx) - r) : round(cx) + r + 1]
    if core.size == 0:
        return None
    body = np.median(core.reshape(-1, 3), axis=0)
    rim = np.concatenate(
        [crop[:2].reshape(-1, 3), crop[-2:].reshape(-1, 3), crop[:, :2].reshape(-1, 3), crop[:, -2:].reshape(-1, 3)]
    )
    around = np.median(rim, axis=0)
    gap = float(np.linalg.norm(body - around))
    if gap < 25.0:
        return None
    spread = min(0.5 * gap, FACE_SPREAD)
    # The ground round the die in the die's own shadow: when that has the die's colour (a dark
    # die on dark wood), the shadow joins the top face and draws it out into an oblong as a
    # leaning die's side face would.
    rim_bgr = np.concatenate(
        [bgr[:2].reshape(-1, 3), bgr[-2:].reshape(-1, 3), bgr[:, :2].reshape(-1, 3), bgr[:, -2:].reshape(-1, 3)]
    )
    shade = np.clip(np.median(rim_bgr, axis=0) * SHADOW_DEPTH, 0, 255).astype(np.uint8)[None, None]
    if float(np.linalg.norm(cv2.cvtColor(shade, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32) - body)) < spread:
        return None
    near = (np.sqrt(((crop - body) ** 2).sum(axis=2)) < spread).astype(np.uint8)
    side = max(w, h)

    def disc(share: float) -> np.ndarray:
        k = max(3, round(share * side) | 1)
        return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))

    # Pips filled in; then whatever of the die's colour is narrower than a good part of a die
    # (the tip of a light point it lies on, a checker's rim) cut away.
    near = cv2.morphologyEx(near, cv2.MORPH_CLOSE, disc(0.3))
    near = cv2.morphologyEx(near, cv2.MORPH_OPEN, disc(0.3))
    count, labels = cv2.connectedComponents(near)
    # The middle may be a pip (faces 1, 3, 5): the face is the commonest part round it.
    middle = labels[max(0, round(cy) - r) : round(cy) + r + 1, max(0, round(cx) - r) : round(cx) + r + 1]
    votes = np.bincount(middle.ravel(), minlength=count)
    votes[0] = 0
    if count < 2 or votes.max() == 0:
        return None
    mine = labels == int(votes.argmax())
    # Only what lies in the die's box, and within a die's span of its middle, counts: a light
    # point or checker it touches runs on beyond it (and the box may take in its shadow).
    bx0, by0 = max(0, round(x - x0 - 0.05 * w)), max(0, round(y - y0 - 0.05 * h))
    bx1, by1 = round(x - x0 + 1.05 * w), round(y - y0 + 1.05 * h)
    if span is not None:
        bx0, by0 = max(bx0, round(cx - span / 2)), max(by0, round(cy - span / 2))
        bx1, by1 = min(bx1, round(cx + span / 2)), min(by1, round(cy + span / 2))
    inside = np.zeros_like(mine)
    inside[by0:by1, bx0:bx1] = True
    ys, xs = np.nonzero(mine & inside)
    if len(xs) < 12:
        return None
    (_, _), (a, b), _ = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    return float(min(a, b) / max(a, b, 1e-6))


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


def _moved_band(before: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """The pixels of ``before`` (a :func:`~vision.features.border_band` image) in ``mask`` as
    they are and moved by half a pixel every way: nine ``(n, 3)`` arrays."""
    # Moved half a pixel: the mean of a pixel and its neighbour (the edges repeated).
    ys, xs = np.nonzero(mask)
    padded = np.pad(before, ((1, 1), (1, 1), (0, 0)), mode="edge")
    around = [[padded[ys + 1 + dy, xs + 1 + dx] for dx in (-1, 0, 1)] for dy in (-1, 0, 1)]
    # Which of the three rows (then columns) round a pixel are averaged: up, none, down.
    halves = ((0, 1), (1,), (1, 2))
    moves = []
    for rows in halves:
        row = [sum(around[k][j] for k in rows) / len(rows) for j in range(3)]
        for columns in halves:
            moves.append(sum(row[j] for j in columns) / len(columns))
    return moves


def _solid_changes(
    now: np.ndarray, before: np.ndarray, mask: np.ndarray, moves: list[np.ndarray] | None = None
) -> np.ndarray:
    """Where ``now`` differs from ``before`` (two :func:`~vision.features.border_band` images)
    within ``mask``, as solid patches (``moves``: :func:`_moved_band` of ``before``, when
    already made).

    A pixel has changed when it differs from ``before`` as it is and as it would be moved by
    half a pixel every way: the camera nudged by a few pixels (or the profile's corners a
    little off) moves the frame's edges by part of a pixel of the band, and they would
    otherwise show as changed along their length (on 3D-rendered frames moved 4 image pixels,
    24 of 53 were taken for an arm over the frame)."""
    # A lamp turned up or down shifts every pixel alike; only what stands out counts.
    lit = now - np.median((now - before)[mask], axis=0)
    ys, xs = np.nonzero(mask)
    here = lit[ys, xs]
    nearest = np.full(len(ys), np.inf, np.float32)
    for moved in _moved_band(before, mask) if moves is None else moves:
        np.minimum(nearest, ((here - moved) ** 2).sum(axis=1), out=nearest)
    changed = np.zeros(mask.shape, bool)
    changed[ys, xs] = nearest > BORDER_CHANGE**2
    # Sensor noise and compression flip single pixels; an arm is a solid patch.
    solid = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    result: np.ndarray = solid.astype(bool)
    return result


@dataclass(frozen=True)
class _Reference:
    """The field as it looked at a clear reading (:func:`vision.features.look_of`, in Lab),
    where its look is known, and what was read there (player 1's numbering; the bar)."""

    lab: np.ndarray
    known: np.ndarray
    points: tuple[int, ...]
    bar: tuple[int, int]

    @property
    def sample(self) -> np.ndarray:
        """Every seventh known spot (flat indexes): enough to tell how the light moved."""
        if "_sample" not in self.__dict__:
            object.__setattr__(self, "_sample", np.flatnonzero(self.known.reshape(-1))[::7])
        result: np.ndarray = self.__dict__["_sample"]
        return result

    @classmethod
    def of_look(cls, look: np.ndarray, points: tuple[int, ...], bar: tuple[int, int]) -> _Reference:
        """A clear reading's: its whole look is known."""
        lab = cv2.cvtColor(look, cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(lab, np.ones(lab.shape[:2], bool), points, bar)

    @classmethod
    def of_profile(cls, profile: Profile) -> _Reference | None:
        """The calibration's: its look (where known) and the position it showed; ``None`` for a
        profile made before it kept its look, or whose position cannot be read."""
        if profile.look is None:
            return None
        try:
            position = Position.from_id(profile.position) if profile.position else Position.STARTING
        except BackgammonError:
            return None
        points, bar, _ = position.to_absolute(1)
        colour = np.ascontiguousarray(profile.look[..., :3])
        lab = cv2.cvtColor(colour, cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(lab, profile.look[..., 3] > 0, tuple(points), bar)


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


def _changed_share(
    now: np.ndarray, before: np.ndarray, mask: np.ndarray, moves: list[np.ndarray] | None = None
) -> float:
    """The share of ``mask``'s pixels changed from ``before`` to ``now``, as solid patches."""
    return float(np.count_nonzero(_solid_changes(now, before, mask, moves))) / float(np.count_nonzero(mask))
