"""Timing a Triton kernel over its configs, as the Triton-side benchmark scripts do it."""
import triton


def tflops(run, flops):
    """TFLOP/s of run(), timed as triton.testing.do_bench does (median of the repetitions)."""
    return flops / triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median") / 1e9


def time_configs(name, configs, launcher, flops):
    """Per config, launcher(cfg) returns (run, check): run() launches once, check() says whether
    what the last launch wrote is right. Each config runs and is checked once, then is timed;
    one that cannot run (out of resources) is reported and skipped. Prints a line per config and
    the best that passed; returns the number of failed checks."""
    failed, best = 0, 0.0
    for cfg in configs:
        run, check = launcher(cfg)
        try:
            run()
        except Exception as e:  # out of resources for a config
            print(f"triton  {name} {str(cfg):24s} could not run: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        ok = check()
        t = tflops(run, flops)
        print(f"triton  {name} {str(cfg):24s} {t:8.1f} TFLOP/s check {'ok' if ok else 'FAILED'}", flush=True)
        if ok:
            best = max(best, t)
        failed += not ok
    print(f"BEST triton {name} {best:.1f} TFLOP/s", flush=True)
    return failed
