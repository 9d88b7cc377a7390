"""Joins tessera's and Triton's JSON lines (stdin or files) and prints them side by side.

Each line is {"impl", "name", "metric", "value"[, "ok", "check"]}. impl is one of
  tessera           tessera's kernel (tests/bench/bench.cpp, bench_autotune.cpp)
  triton            Triton's tutorial kernel, as published or adapted (tests/bench/triton_ref.py,
                    triton_autotune.py): the library baseline
  triton_same_algo  the same computation written in Triton with tessera's algorithm (grid, loops,
                    partial sums, warps); only where the tutorial's algorithm differs from tessera's
Columns: tessera, triton (tutorial), "lib" = tessera vs the tutorial (compares the libraries),
"triton*" = Triton with tessera's algorithm ("=" where the tutorial kernel already is tessera's
algorithm, so the two ratios are one), "compiler" = tessera vs triton* (compares the compilers),
and "check": ok when every side's output passed its correctness check, FAILED(<sides>) when one
did not or could not run ("-" when the line carries no check, e.g. compile-stage timings).
A ratio is tessera / Triton for throughput metrics (higher is better) and Triton / tessera for
times, so ratio > 1 always means tessera is better.
Exits 1 when any line failed its check (its "check" text is printed below the table)."""
import json
import sys

SHORT = {"tessera": "tessera", "triton": "triton", "triton_same_algo": "triton*"}

rows = {}       # (name, metric) -> impl -> [values]
checks = {}     # (name, metric) -> impl -> [ok flags]
failures = []   # (impl, name, check text), in input order, without repeats
for path in sys.argv[1:] or ["-"]:
    stream = sys.stdin if path == "-" else open(path)
    for line in stream:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
            key, impl = (r["name"], r["metric"]), r["impl"]
        except (ValueError, KeyError) as e:
            print(f"compare.py: skipping a malformed line ({e}): {line[:120]}", file=sys.stderr)
            continue
        rows.setdefault(key, {}).setdefault(impl, [])
        if r.get("value") is not None:
            rows[key][impl].append(r["value"])
        if "ok" in r:
            checks.setdefault(key, {}).setdefault(impl, []).append(bool(r["ok"]))
            if not r["ok"]:
                f = (impl, r["name"], r.get("check", "(no detail)"))
                if f not in failures:
                    failures.append(f)


def pick(metric, xs):
    # Repeated cases (device_run.sh alternates tessera and Triton runs): the best throughput and
    # the best launch cost of each side, the median first-call time (each from a fresh process).
    if not xs:
        return None
    if metric.endswith("/s"):
        return max(xs)
    if metric == "us/launch":
        return min(xs)
    return sorted(xs)[len(xs) // 2]


def ratio(metric, t, r):
    if not t or not r:
        return ""
    return f"{(t / r) if metric.endswith('/s') else (r / t):.3f}"


fmt = lambda x: f"{x:10.3f}" if x is not None else f"{'-':>10}"
print("ratio > 1: tessera better. lib: vs Triton's tutorial kernel (triton); compiler: vs Triton running tessera's")
print("algorithm (triton*; '=' where the tutorial kernel already is that algorithm). check: every side's output verified.")
print(f"{'case':44} {'metric':10} {'tessera':>10} {'triton':>10} {'lib':>7} {'triton*':>10} {'compiler':>8}  check")
for (name, metric), v in rows.items():
    t, r = pick(metric, v.get("tessera")), pick(metric, v.get("triton"))
    same_algo_run = "triton_same_algo" in v
    s = pick(metric, v.get("triton_same_algo")) if same_algo_run else r
    lib = ratio(metric, t, r)
    compiler = ratio(metric, t, s)
    s_text = fmt(s) if same_algo_run else f"{'=' if r is not None else '-':>10}"
    c = checks.get((name, metric), {})
    failed = [SHORT.get(i, i) for i, oks in c.items() if not all(oks)]
    status = f"FAILED({', '.join(failed)})" if failed else "ok" if c else "-"
    print(f"{name:44} {metric:10} {fmt(t)} {fmt(r)} {lib:>7} {s_text} {compiler:>8}  {status}")

if failures:
    print(f"\n{len(failures)} line(s) FAILED their correctness check or could not run:")
    for impl, name, text in failures:
        parts = text.split("; ")  # the failed comparisons only; the passed ones are in the JSON line
        print(f"  {SHORT.get(impl, impl)} {name}: {'; '.join(p for p in parts if p.startswith('FAILED')) or text}")
    sys.exit(1)
