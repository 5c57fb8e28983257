"""How well the continuity heuristics classify sentences (spec 001 §5.3).

Run from the repository root::

    .venv/bin/python bench/extraction_quality.py [--errors]

Reads the labelled set ``tests/middleware/continuity/data/extraction_labelled.tsv``
(``label<TAB>role<TAB>sentence``, label ``open_question``, ``key_decision`` or ``none``),
runs :func:`middleware.continuity.extract.classify_sentence` on every sentence and prints
precision, recall and F1 per class and the confusion counts. ``--errors`` also lists the
misclassified sentences. Only the sentence-level rules are measured: the turn-level rule
(an unanswered question) depends on the turns around it and is tested in
``tests/middleware/continuity/test_extract.py``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = REPO_ROOT / "tests" / "middleware" / "continuity" / "data" / "extraction_labelled.tsv"
LABELS = ("open_question", "key_decision", "none")
HELDOUT = DATA.with_name("extraction_heldout.tsv")
CLASSES = ("open_question", "key_decision")


@dataclass(frozen=True, slots=True)
class Example:
    label: str
    role: Literal["user", "assistant"]
    sentence: str


@dataclass(frozen=True, slots=True)
class ClassScore:
    label: str
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def load(path: Path = DATA) -> list[Example]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        examples = []
        for row in rows:
            if row["label"] not in LABELS or row["role"] not in ("user", "assistant"):
                raise ValueError(f"{path}: bad row {row!r}")
            role = cast(Literal["user", "assistant"], row["role"])
            examples.append(Example(row["label"], role, row["sentence"]))
    return examples


def predict(examples: Sequence[Example]) -> list[str]:
    if str(REPO_ROOT) not in sys.path:  # ``python bench/…`` puts bench/ first on sys.path
        sys.path.append(str(REPO_ROOT))
    from middleware.continuity.extract import classify_sentence

    return [classify_sentence(e.sentence, role=e.role) or "none" for e in examples]


def confusion(examples: Sequence[Example], predicted: Sequence[str]) -> Counter[tuple[str, str]]:
    return Counter((e.label, p) for e, p in zip(examples, predicted, strict=True))


def scores(counts: Counter[tuple[str, str]]) -> list[ClassScore]:
    result = []
    for label in CLASSES:
        tp = counts[(label, label)]
        fp = sum(n for (gold, pred), n in counts.items() if pred == label and gold != label)
        fn = sum(n for (gold, pred), n in counts.items() if gold == label and pred != label)
        result.append(ClassScore(label, tp, fp, fn))
    return result


def report(examples: Sequence[Example], predicted: Sequence[str]) -> str:
    counts = confusion(examples, predicted)
    support = Counter(e.label for e in examples)
    lines = [
        f"{len(examples)} sentences: " + ", ".join(f"{label} {support[label]}" for label in LABELS),
        "",
        f"{'class':<14} {'precision':>9} {'recall':>7} {'F1':>6} {'tp':>4} {'fp':>4} {'fn':>4}",
    ]
    for s in scores(counts):
        lines.append(
            f"{s.label:<14} {s.precision:>9.3f} {s.recall:>7.3f} {s.f1:>6.3f}"
            f" {s.tp:>4} {s.fp:>4} {s.fn:>4}"
        )
    lines += ["", "confusion (rows gold, columns predicted):"]
    lines.append(f"{'':<14}" + "".join(f"{label:>15}" for label in LABELS))
    for gold in LABELS:
        lines.append(f"{gold:<14}" + "".join(f"{counts[(gold, p)]:>15}" for p in LABELS))
    return "\n".join(lines)


def _labelled_file(given: Path) -> Path | None:
    """The file ``--data`` names: a path as given, else a name in the data folder (the
    help names the files by their names alone)."""
    for candidate in (given, DATA.parent / given):
        if candidate.is_file():
            return candidate
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--errors", action="store_true", help="list misclassified sentences")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help=f"labelled TSV (default {DATA.name}; see also "
        f"{HELDOUT.name}, written after the first rules; docs/continuity-heuristics.md "
        "says how far it is still held out)",
    )
    args = parser.parse_args(argv)
    data = _labelled_file(args.data)
    if data is None:
        parser.error(
            f"no labelled file {args.data}: give a path, or one of the names in "
            f"{DATA.parent} ({DATA.name}, {HELDOUT.name})"
        )
    examples = load(data)
    predicted = predict(examples)
    print(report(examples, predicted))
    if args.errors:
        print("\nmisclassified (gold -> predicted):")
        for example, guess in zip(examples, predicted, strict=True):
            if guess != example.label:
                print(f"  {example.label} -> {guess} [{example.role}] {example.sentence}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
