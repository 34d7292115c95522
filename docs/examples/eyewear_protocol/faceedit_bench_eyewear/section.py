"""The report section: the share of sessions whose edits put glasses on the face, with its Wilson interval,
in report.json, MLflow, the console, report.html and a leaderboard view; and, in the run folder, the eyes of the
first sessions with glasses, cut from their last image where the run's own detector finds the face."""

from collections import Counter
from dataclasses import dataclass

import numpy as np

from faceedit_bench.api import atomic_open
from faceedit_bench.api.images import encode_png
from faceedit_bench.api.sections import (
    Column,
    ReportSection,
    SectionHtml,
    ValueSpec,
    ViewSpec,
    check_number,
    fitted_tables,
    metric_key,
    mostly_missing_warning,
)
from faceedit_bench.api.statistics import Threshold

RATE = {
    "type": "object", "required": ["rule", "n", "count", "rate", "ci_low", "ci_high"],
    "properties": {"rule": {"type": "string"}, "n": {"type": "integer", "minimum": 0},
                   "count": {"type": "integer", "minimum": 0},
                   **{k: {"type": ["number", "null"]} for k in ("rate", "ci_low", "ci_high")}},
}
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["label", "min_share", "sessions", "rate", "left_out", "measures"],
    "properties": {
        "label": {"type": "string"},
        "min_share": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "sessions": {"type": "integer", "minimum": 0},
        "rate": RATE,
        "left_out": {"$ref": "#/$defs/reasonCounts"},  # the run report's own definition
        "measures": {"type": "object"},
    },
}
#: How pages and the leaderboard label the rate (stated in the report, read like any measure).
MEASURE = {"label": "Sessions with glasses", "higher_is_better": False, "unit": "share", "bounds": [0.0, 1.0],
           "description": "Share of judged sessions showing glasses in at least min_share of their steps "
                          "(Wilson interval)."}


@dataclass
class EyewearSettings:
    # What the section calls itself on the page and in the console (analysis.eyewear.label=...).
    label: str = "eyewear"
    # A session counts as "wearing glasses" when at least this share of its steps shows them.
    min_share: float = 0.5

    def __post_init__(self):
        check_number("analysis.eyewear.min_share", self.min_share, above=0, below=1, example="0.5: half of the steps")


#: How many sessions with glasses get their eyes cut out into the run folder (eyewear/<face>_<session>.png).
EXAMPLES = 4


class EyewearCollector:
    """Reads the ``glasses`` judgment of every session; a session without one is counted, never scored."""

    def __init__(self, run):
        self.settings, self.confidence = run.settings, run.confidence
        self.shares = []
        self.left_out = Counter()
        self.images = run.images  # the run's images (faceedit_bench.api.images.RunImages); None outside a run
        self.eyes = {}  # "<face>_<session>" -> the eye region of the session's last image

    def add_session(self, result):
        judgment = result.judged.metrics.get("glasses") if result.judged is not None else None
        share = judgment.values.get("glasses_worn") if judgment is not None else None
        if result.excluded is not None:
            self.left_out["excluded"] += 1
        elif share is None:
            self.left_out["no usable answer" if judgment is not None else "not judged"] += 1
        else:
            self.shares.append(share)
            if share >= self.settings.min_share and len(self.eyes) < EXAMPLES:
                self.keep_eyes(result)

    def keep_eyes(self, result):
        """Cut the eyes out of the last image (read now, while the run is going; its faces were usually found
        already by the image metrics, so the detector does not run again)."""
        last = result.image_hashes[-1] if result.image_hashes else None
        if self.images is None or not self.images.has_detector or last is None:
            return
        faces = self.images.faces(last)
        if not faces:
            return
        (lx, ly), (rx, ry) = faces[0].landmarks["left_eye"], faces[0].landmarks["right_eye"]
        pad, image = max(rx - lx, 1.0), self.images.rgb(last)
        top, left = max(int(min(ly, ry) - pad / 2), 0), max(int(lx - pad * 0.6), 0)
        crop = image[top:int(max(ly, ry) + pad / 2), left:int(rx + pad * 0.6)]
        if crop.size:
            name = f"{result.face.face_id}_{result.session.session_id}".replace("/", "-")  # ids may hold a "/"
            self.eyes[name] = np.ascontiguousarray(crop)

    def files(self, output_dir):
        """The kept eye regions as PNG files in the run folder, listed with the run's artifacts."""
        written = []
        for name, crop in self.eyes.items():
            path = output_dir / "eyewear" / f"{name}.png"
            path.parent.mkdir(exist_ok=True)
            with atomic_open(path) as fh:
                fh.write(encode_png(crop))
            written.append(path)
        return written

    def finish(self):
        rule = Threshold(">=", self.settings.min_share)
        rate = rule.rate(self.shares, confidence=self.confidence, what="sessions with glasses")
        return {"label": self.settings.label, "min_share": self.settings.min_share,
                "sessions": len(self.shares) + sum(self.left_out.values()),
                "rate": {k: rate[k] for k in RATE["required"]}, "left_out": dict(sorted(self.left_out.items())),
                "measures": {"glasses_sessions": MEASURE}}


def collector(run):
    # Active only when the run asks the glasses metric.
    return EyewearCollector(run) if "glasses" in run.judge_metrics else None


def tracking(part):
    out = {metric_key("eyewear", "sessions"): float(part["sessions"])}
    if part["rate"]["rate"] is not None:
        out[metric_key("eyewear", "glasses_sessions")] = float(part["rate"]["rate"])
    return out


def console(part, width):
    rate = part["rate"]
    rows = [["with glasses", str(rate["count"])], ["without", str(rate["n"] - rate["count"])],
            *([reason, str(n)] for reason, n in part["left_out"].items())]
    return fitted_tables([Column("sessions")], [Column("count", True)], rows, width,
                         title=f"{part['label']}: glasses in {rate['count']} of {rate['n']} judged sessions")


def warnings(part):
    return [mostly_missing_warning("eyewear", "sessions", "have no glasses judgment", part["sessions"],
                                   part["left_out"])]


def read_rate(record):
    rate = record.get("rate") or {}
    return {"mean": rate.get("rate"), "ci_low": rate.get("ci_low"), "ci_high": rate.get("ci_high"),
            "n": rate.get("n")}


EYEWEAR = ReportSection(
    name="eyewear", title="Glasses after editing", schema=SCHEMA, collector=collector, settings=EyewearSettings,
    tracking=tracking, console=console, warnings=warnings,
    html=SectionHtml("eyewear.html.j2", "faceedit_bench_eyewear"),
    record=lambda part: {"rate": part["rate"], "left_out": part["left_out"]},
    views=(ViewSpec("eyewear", "Eyewear: glasses put on faces",
                    "The share of sessions whose edits put glasses on the face; fewer is better.",
                    (ValueSpec("glasses_sessions", "eyewear", read_rate), ValueSpec("glasses_worn")),
                    rank_by="glasses_sessions"),),
    description="the share of sessions that end up wearing glasses",
)
