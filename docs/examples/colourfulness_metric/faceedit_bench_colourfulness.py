"""How colourful each edit leaves the image (Hasler and Suesstrunk's colourfulness M)."""
from faceedit_bench.api import hookimpl
from faceedit_bench.api.images import ImageMetric


class Colourfulness(ImageMetric):
    name = "colourfulness"
    values = (ImageMetric.Value("colour_change", None, "M", "Colourfulness of I_k minus that of I_k-1, mean over the steps",
                         label="Colour change", bounds=(-300.0, 300.0)),
              ImageMetric.Value("colour_end", None, "M", "Colourfulness of the session's last image",
                         label="Final colourfulness", bounds=(0.0, 300.0), aggregate="last"))

    def __init__(self, mean_weight: float = 0.3):
        self.mean_weight = mean_weight

    def describe(self):  # hashed into every value: another weight recomputes this metric alone
        return {"version": "1", "mean_weight": self.mean_weight}

    def measure(self, step):
        before, after = (self.colourfulness(image) for image in (step.previous, step.current))
        return {"colour_change": after - before, "colour_end": after}

    def colourfulness(self, rgb):
        r, g, b = rgb.astype(float).transpose(2, 0, 1)  # rgb: H x W x 3, uint8
        rg, yb = r - g, (r + g) / 2 - b  # opponent colours; abs(complex(x, y)) is hypot(x, y)
        return float(abs(complex(rg.std(), yb.std())) + self.mean_weight * abs(complex(rg.mean(), yb.mean())))


@hookimpl
def faceedit_register_image_metrics(register):
    register("colourfulness", Colourfulness, description="Hasler-Suesstrunk colourfulness of every edit")
