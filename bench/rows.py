"""`Row`: one line of the summary of docs/BENCHMARKS.md, ours against a peer. The report builds
rows and the charts draw them; both import this module, neither imports the other for it."""

from __future__ import annotations


class Row:
    def __init__(self, key: str, what: str, ours: str, peer: str, ratio: float, better: str,
                 target: str, met: bool | None, command: str) -> None:
        self.key, self.what, self.ours, self.peer, self.ratio = key, what, ours, peer, ratio
        self.better, self.target, self.met, self.command = better, target, met, command

    @property
    def disadvantage(self) -> float:
        """> 1 when we do worse than the peer: ours/peer if lower is better, peer/ours if higher."""
        return self.ratio if self.better == "lower" else 1 / self.ratio
