"""CREval-style questions for taxonomy-bound face edits, written from the taxonomy (METHODOLOGY §5.4).

An EXTENSION, not part of any seed paper: instead of an MLLM, each step's questions follow from its
taxonomy binding, so they are deterministic (the same question set, hash included, on every
machine) and readable. The judge sees I_{k-1} (first image) and I_k (second image):

* IF (weight 1): five requirements of the edit (at least five, as CREval asks): the exact attribute, its
  category, a visible change, on the person of the first image, complete enough to recognise.
* VC: identity kept (weight 3); each of the other 7 sub-axes kept (weight 2), naming the state an
  earlier step of the session set it to where there was one ("... still crimson red hair").
* VQ (weight 1): five artifact checks.
"""

from __future__ import annotations

from faceedit_bench.api import Session, TestSet
from faceedit_bench.api.judging import Taxonomy
from faceedit_bench_creval.questions import CheckQuestion, QuestionItem, QuestionSet, merge_items

FACE_QUESTIONS_VERSION = "2"

#: How a question names each sub-axis.
NOUNS = {
    "hair-color": "hair colour", "hair-style": "hairstyle", "hair-type": "hair type (straight, wavy or curly)",
    "beard": "beard", "mustache": "mustache", "hats": "headwear", "glasses": "eyewear",
    "head position": "head position (where the person is looking)",
}

#: Five requirements of a taxonomy-bound edit, as CREval asks at least five IF questions per item: the exact
#: attribute, its kind, a visible change, on the right person, complete enough to recognise.
_IF = (
    ('Does the person now show the requested {noun}, "{attribute}" (a kind of {category})?',
     "the target attribute of step {k} ({sub_axis})"),
    ("Is the change to the person's {noun} clearly visible in the second image compared with the first?",
     "an edit too faint to see does not follow the instruction"),
    ('Is the person\'s {short} now of the kind "{category}", rather than another kind of {short}?',
     "the attribute's category: a near miss within the sub-axis is still a miss of the exact attribute"),
    ("Is the requested {short} now on the person from the first image, not on someone or something else?",
     "the edit applies to the person, not to the background or another figure"),
    ('Is the {short} now shown completely and clearly enough to be recognised as "{attribute}"?',
     "a partial or hinted edit does not follow the instruction"),
)

_VQ = (
    "Is the person's face free of distortions, such as misplaced, duplicated or melted eyes, nose, mouth or ears?",
    "Is the edited region free of visible artifacts such as smears, seams, blur or noise?",
    "Does the edited {noun} blend naturally with the head, the hair and the lighting of the photo?",
    "Are fine details where visible (teeth, eyes, hands, hair strands) anatomically plausible?",
    "Is the whole image free of compression blocks, banding, warped background or unnatural textures?",
)


def _q(n: int, text: str, weight: int, thinking: str) -> CheckQuestion:
    return CheckQuestion(f"Q{n}", text, "Yes", weight, ("Yes", "No"), thinking)


def step_questions(session: Session, k: int, taxonomy: Taxonomy | None = None) -> dict[str, tuple[CheckQuestion, ...]]:
    """The IF, VC and VQ questions of step k of a taxonomy-bound session."""
    taxonomy = taxonomy or Taxonomy.builtin()
    step = session.steps[k - 1]
    if not step.bound or step.sub_axis is None:
        raise ValueError(f"{session.session_id} step {k} has no taxonomy binding")
    noun = NOUNS.get(step.sub_axis, step.sub_axis)
    short = noun.split(" (")[0]  # the noun without its explanation, when a question names it again
    names = {"noun": noun, "short": short, "attribute": step.attribute, "category": step.category}
    if_questions = tuple(_q(i, text.format(**names), 1, why.format(k=k, sub_axis=step.sub_axis))
                         for i, (text, why) in enumerate(_IF, 1))
    earlier = {s.sub_axis: s for s in session.steps[:k - 1] if s.sub_axis}
    vc = [_q(1, "Is the person in the second image recognisably the same person as in the first image (same face "
                "shape, facial features, age and skin tone)?", 3, "identity: the core element to keep")]
    for key in taxonomy.state_keys:
        if key == step.sub_axis:
            continue
        set_by = earlier.get(key)
        hint = f', still {set_by.attribute} ("{set_by.category}", set at step {set_by.k})' if set_by else ""
        vc.append(_q(len(vc) + 1, f"Apart from the requested edit, is the person's {NOUNS.get(key, key)} the same as "
                                  f"in the first image{hint}?", 2, f"unrequested change of {key}"))
    vq = tuple(_q(i, text.format(noun=noun), 1, "structural plausibility and artifacts") for i, text in enumerate(_VQ, 1))
    return {"IF": if_questions, "VC": tuple(vc), "VQ": vq}


def face_item(session: Session, k: int, taxonomy: Taxonomy | None = None) -> QuestionItem:
    step = session.steps[k - 1]
    return QuestionItem(f"{session.session_id}/{k}", session.session_id, k, step.instruction,
                        step_questions(session, k, taxonomy), None, step.axis, step.sub_axis)


def face_question_set(testset: TestSet, taxonomy: Taxonomy | None = None) -> QuestionSet:
    """The frozen question set of a taxonomy-bound test set (every step of every session)."""
    taxonomy = taxonomy or Taxonomy.builtin()
    if not testset.bound:
        raise ValueError(f"test set {testset.name} has steps without a taxonomy binding; creval_face needs every "
                         "step bound (use the creval metric with a generated question set instead)")
    items = merge_items(face_item(s, step.k, taxonomy) for s in testset.sessions for step in s.steps)
    return QuestionSet(
        name=f"{testset.name}-creval-face", version=FACE_QUESTIONS_VERSION, items=items,
        provenance={"generator": "taxonomy", "generator_model": None, "generator_version": FACE_QUESTIONS_VERSION,
                    "extension": True,
                    "taxonomy": {"name": taxonomy.name, "version": taxonomy.version,
                                 "content_hash": taxonomy.content_hash},
                    "source_testset": {"name": testset.name, "version": testset.version,
                                       "content_hash": testset.content_hash}},
        description=(f"QA questions for {testset.name} written from the taxonomy (EXTENSION, METHODOLOGY §5.4): "
                     "IF on five requirements of the target attribute, VC on identity (weight 3) and the other 7 "
                     "sub-axes (weight 2), VQ on artifacts"),
    )
