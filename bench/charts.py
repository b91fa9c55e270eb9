"""One chart per summary theme of docs/BENCHMARKS.md: ours against the peer of each row, both bars
scaled so the better one is full length (longer is better, whatever the unit's direction).

`make bench` writes them (SVG, matplotlib) into docs/benchmarks/ beside the Markdown; the output
is deterministic for the same results (no dates, fixed SVG ids), so a rerun changes only what the
measurements changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.rows import Row

CHART_DIR = "benchmarks"  # under docs/, beside BENCHMARKS.md


def slug(theme: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in theme.lower()).strip("-").replace("--", "-")


def chart_path(theme: str) -> str:
    """Where the theme's chart goes, relative to docs/."""
    return f"{CHART_DIR}/{slug(theme)}.svg"


def _label(text: str, width: int = 64) -> str:
    text = text.replace("`", "").split(" (")[0]
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def write(themes: Sequence[tuple[str, Sequence[Row]]], docs: Path) -> list[Path]:
    """Render each theme's rows that compare with a peer; returns the files written."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "ghmcp-bench"
    plt.rcParams["font.size"] = 9
    plt.rcParams["svg.fonttype"] = "none"  # text as text: a tenth of the size
    written: list[Path] = []
    for theme, rows in themes:
        if not rows:
            continue
        labels = [_label(x.what) for x in rows]
        advantage = [1 / x.disadvantage for x in rows]  # > 1: ours is better
        ours = [a / max(a, 1.0) for a in advantage]
        peer = [1 / max(a, 1.0) for a in advantage]
        height = 0.38
        fig, ax = plt.subplots(figsize=(12, 0.55 * len(rows) + 1.4))
        ys = range(len(rows))
        ax.barh([y - height / 2 for y in ys], ours, height, label="ours", color="#2f6db3")
        ax.barh([y + height / 2 for y in ys], peer, height, label="peer (same run)", color="#b0b0b0")
        for y, a in zip(ys, advantage, strict=True):
            ax.text(1.01, y, f"ours {a:.2f}\u00d7 better" if a >= 1 else f"peer {1 / a:.2f}\u00d7 better",
                    va="center", fontsize=8)
        ax.set_yticks(list(ys), labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.35)
        ax.set_xticks([0, 0.5, 1.0], ["0", "½ of the better", "the better"])
        ax.set_title(f"{theme}: longer is better")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8, frameon=False)
        fig.tight_layout()
        target = docs / chart_path(theme)
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
        written.append(target)
    return written
