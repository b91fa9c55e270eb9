"""What `make generate` prints about each server: its tools' bytes against the budgets, and one
line on what the run did (printed again from the result cache when nothing changed)."""

from __future__ import annotations

import io

from generator.build.ir import IRServer
from generator.build.wire import compact_bytes, model_visible, wire_tool
from generator.pipeline.generate import Result


def tool_table(server: IRServer) -> str:
    """Bytes per tool and in total against the budgets (the summary; also printed when a budget
    is exceeded)."""
    out = io.StringIO()
    budget, desc_budget = server.tools_budget_bytes, server.description_budget_bytes
    print(f"{server.name} ({server.package}):", file=out)
    print(f"{'tool':<28} {'ops':>3} {'bytes':>6} {'~tokens':>7} {'description':>11}  annotations", file=out)
    wire = [wire_tool(tool) for tool in server.tools]
    for tool, listed in zip(server.tools, wire, strict=True):
        size = compact_bytes(listed)
        desc = f"{len(listed['description'].encode('utf-8'))}/{desc_budget}"
        kind = "read-only" if tool.annotations.read_only else (
            "destructive" if tool.annotations.destructive else "mutating")
        print(f"{tool.name:<28} {len(tool.operations):>3} {size:>6} {size // 4:>7} {desc:>11}  {kind}", file=out)
    total = compact_bytes({"tools": wire})
    enforced = f"budget {budget} ({100 * total // budget}%)" if budget else "reported, not enforced"
    print(f"{'total tools/list':<28} {len(server.coverage.used):>3} {total:>6} {total // 4:>7} "
          f"{'':>11}  {enforced}", file=out)
    seen, model_budget = compact_bytes(model_visible(wire)), server.model_budget_bytes
    print(f"{'model-visible (no outputs)':<28} {'':>3} {seen:>6} {seen // 4:>7} "
          f"{'':>11}  budget {model_budget} ({100 * seen // model_budget}%)", file=out)
    print("~tokens = bytes / 4", file=out)
    return out.getvalue()


REUSED = "reused (nothing it reads changed since it was generated)"


def server_summary(result: Result, timings: bool = True) -> str:
    """The tool table, declared breaking changes, and what the run did (its stages' times; the
    result cache keeps it without them and says it was reused)."""
    server = result.server
    assert server is not None
    lines = [tool_table(server).rstrip("\n")]
    lines += [f"breaking change {note}" for note in result.notes]
    did = (", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.timings.items()) if timings
           else REUSED)
    lines.append(f"operations used {len(server.coverage.used)}, excluded {len(server.coverage.excluded)}; "
                 f"lint findings {len(result.diagnostics)}; {did}")
    return "\n".join(lines) + "\n"
