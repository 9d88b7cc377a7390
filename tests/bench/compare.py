"""Joins tessera's and Triton's JSON lines (stdin or files) and prints them side by side.
ratio = tessera / triton for throughput metrics (higher is better) and triton / tessera for
times (so ratio > 1 always means tessera is better)."""
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
    # Repeated cases (device_run.sh alternates tessera and Triton runs): the best throughput and
    # the best launch cost of each side, the median first-call time (each from a fresh process).
    def pick(xs):
        if not xs:
            return None
        if metric.endswith("/s"):
            return max(xs)
        if metric == "us/launch":
            return min(xs)
        return sorted(xs)[len(xs) // 2]
    t, r = pick(v.get("tessera")), pick(v.get("triton"))
    ratio = ""
    if t and r:
        ratio = f"{(t / r) if metric.endswith('/s') else (r / t):.3f}"
    fmt = lambda x: f"{x:10.3f}" if x is not None else f"{'-':>10}"
    print(f"{name:44} {metric:10} {fmt(t)} {fmt(r)} {ratio:>7}")
