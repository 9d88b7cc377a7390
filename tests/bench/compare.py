"""Joins tessera's and Triton's JSON lines (stdin or files) and prints them side by side.
ratio = tessera / triton for throughput metrics (higher is better) and triton / tessera for
times (so ratio > 1 always means tessera is better). Repeated cases report their median."""
import json
import sys

rows = {}
for path in sys.argv[1:] or ["-"]:
    stream = sys.stdin if path == "-" else open(path)
    for line in stream:
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        rows.setdefault((r["name"], r["metric"]), {}).setdefault(r["impl"], []).append(r["value"])

print(f"{'case':44} {'metric':10} {'tessera':>10} {'triton':>10} {'ratio':>7}")
for (name, metric), v in rows.items():
    med = lambda xs: sorted(xs)[len(xs) // 2] if xs else None
    t, r = med(v.get("tessera")), med(v.get("triton"))
    ratio = ""
    if t and r:
        ratio = f"{(t / r) if metric.endswith('/s') else (r / t):.3f}"
    fmt = lambda x: f"{x:10.3f}" if x is not None else f"{'-':>10}"
    print(f"{name:44} {metric:10} {fmt(t)} {fmt(r)} {ratio:>7}")
