#!/usr/bin/env python3
"""Helpers for the bench scripts: turn wsload's JSON lines into verdicts and a table (stdlib only).

  wsload_table.py pubrate RATE UNIT ROOMS MEMBERS   "PUBS TARGET": wsload --rate, and the
                                                    delivery rate that gives (the table's target)
  wsload_table.py line RESULTS                      one line about the last run
  wsload_table.py passes RESULTS RATE SLO_MS        exit 0 when RATE passed
  wsload_table.py table RESULTS SLO_MS STRICT_MS NAME
  wsload_table.py medians RESULTS SLO_MS STRICT_MS NAME   the table's rows only, in the order
                                                    first run (for m1-interleave's MODE:RATE)
  wsload_table.py abline RESULTS                    one line about the last A/B run
  wsload_table.py ab RESULTS                        the A/B table: per case and build, medians and
                                                    spread of the runs, and new against old

RESULTS holds one record per run: {"target": R, "pub_rate": P, "run": i, "wsload": {...}}; R is
a rate, or a label such as "tls:899983" for interleaved runs. A/B records carry "build" (old or
new) instead of "pub_rate"; "wsload" is a relay or a chat (durable) line.
A rate passes when every run is ok (no failed connection, loss, reordering, duplicate, protocol
error or unsent backlog: wsload's own "ok"), nothing was lost, and the median p99 is within the bound.
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def ms(us):
    return us / 1000.0


def run_ok(record):
    w = record["wsload"]
    return bool(w.get("ok")) and w.get("lost", 1) == 0 and w.get("conn_failed", 1) == 0


def by_target(records):
    groups = {}
    for r in records:
        groups.setdefault(r["target"], []).append(r)
    return groups


def summary(runs):
    """Medians over the runs of one rate (missing runs count as zero deliveries)."""
    lat = lambda key: statistics.median(r["wsload"].get("latency_us", {}).get(key, 0.0) for r in runs)
    return {
        "pub_rate": runs[0]["pub_rate"],
        "runs": len(runs),
        "ok_runs": sum(run_ok(r) for r in runs),
        "delivered_per_s": statistics.median(r["wsload"].get("delivered_per_s", 0.0) for r in runs),
        "p50_ms": ms(lat("p50")),
        "p99_ms": ms(lat("p99")),
        "max_ms": ms(lat("max")),
        "lost": sum(r["wsload"].get("lost", 0) for r in runs),
        "client_cpu": statistics.median(r["wsload"].get("client_cpu_pct", 0.0) for r in runs),
        "lag_p99_ms": ms(statistics.median(r["wsload"].get("send_lag_us", {}).get("p99", 0.0) for r in runs)),
    }


def passes(s, bound_ms):
    return s["ok_runs"] == s["runs"] and s["lost"] == 0 and s["p99_ms"] <= bound_ms


def pubrate(rate, unit, rooms, members):
    """Publishes/s for wsload: a delivery rate is divided by the receivers of each message."""
    rate, receivers = float(rate), max(1, int(members) - 1)
    pubs = max(1, round(rate)) if unit.startswith("pub") else max(1, round(rate / receivers))
    return pubs, pubs * receivers


def line(records):
    r = records[-1]
    w = r["wsload"]
    lat = w.get("latency_us", {})
    print(f"  target {r['target']:>8} pub/s {r['pub_rate']:>6} run {r['run']}: "
          f"delivered/s {w.get('delivered_per_s', 0):>10.0f} p50 {ms(lat.get('p50', 0)):8.2f} ms "
          f"p99 {ms(lat.get('p99', 0)):8.2f} ms max {ms(lat.get('max', 0)):8.2f} ms lost {w.get('lost', '?')} "
          f"ok {w.get('ok')} client cpu {w.get('client_cpu_pct', 0):.0f}%"
          + (f" server cpu {w['server_cpu_pct_run']:.0f}%" if "server_cpu_pct_run" in w else "")
          + (f" load {w['load_avg']:.2f}" if "load_avg" in w else "")
          + (f" busy before {w['busy_before_pct']:.0f}%" if "busy_before_pct" in w else "")
          + (f" first_error: {w['first_error']}" if w.get("first_error") else ""))


def rows(groups, targets, slo_ms, strict_ms, name):
    """Prints the median row of each target; returns the last target passing each bound."""
    width = max([9] + [len(str(t)) for t in targets])
    print(f"{name}: median of runs per rate (rates are targets; delivered/s is measured)")
    print(f"{'target/s':>{width}} {'pub/s':>7} {'delivered/s':>12} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} "
          f"{'lost':>7} {'ok':>5} {'cli cpu':>8} {'lag p99':>8}  verdict")
    sustained = strict = None
    for target in targets:
        s = summary(groups[target])
        good, tight = passes(s, slo_ms), passes(s, strict_ms)
        verdict = "strict" if tight else ("sustained" if good else "FAIL")
        if good:
            sustained = (target, s)
        if tight:
            strict = (target, s)
        print(f"{target:>{width}} {s['pub_rate']:>7} {s['delivered_per_s']:>12.0f} {s['p50_ms']:>9.2f} {s['p99_ms']:>9.2f} "
              f"{s['max_ms']:>9.2f} {s['lost']:>7} {s['ok_runs']}/{s['runs']:<3} {s['client_cpu']:>7.0f}% "
              f"{s['lag_p99_ms']:>7.2f}  {verdict}")
    return sustained, strict


def table(records, slo_ms, strict_ms, name):
    groups = by_target(records)
    sustained, strict = rows(groups, sorted(groups), slo_ms, strict_ms, name)
    for label, bound, best in (("sustained", slo_ms, sustained), ("strict", strict_ms, strict)):
        if best:
            print(f"{name} {label} (p99 <= {bound:g} ms, zero loss): target {best[0]}/s, "
                  f"median delivered {best[1]['delivered_per_s']:.0f}/s")
        else:
            print(f"{name} {label} (p99 <= {bound:g} ms, zero loss): none of the rates tried")


# The A/B figures of a run: throughput, latency, the server's CPU and its CPU time per delivery (or
# ack), and for durable sends the store's writer and compactor threads' CPU time per ack.
def ab_figures(w):
    chat = w.get("mode") == "durable"
    rate = w.get("acked_per_s" if chat else "delivered_per_s", 0.0)
    lat = w.get("ack_latency_us" if chat else "latency_us", {})
    cpu = w.get("server_cpu_pct_run")
    threads = w.get("server_threads", {})
    return {"rate/s": rate, "p50 ms": ms(lat.get("p50", 0.0)), "p99 ms": ms(lat.get("p99", 0.0)),
            "srv cpu %": cpu, "cpu us/msg": cpu * 10000 / rate if cpu is not None and rate else None,
            "writer us": threads.get("store-writer", {}).get("us_per_op") if chat else None,
            "compact us": threads.get("store-compact", {}).get("us_per_op") if chat else None}


HIGHER_IS_BETTER = {"rate/s"}


def abline(records):
    r = records[-1]
    w = r["wsload"]
    f = ab_figures(w)
    print(f"  {r['target']:>14} {r['build']:>3} round {r['run']}: "
          + "  ".join(f"{k} {v:.2f}" for k, v in f.items() if v is not None)
          + f"  ok {w.get('ok')} load {w.get('load_avg', 0):.2f} busy before {w.get('busy_before_pct', 0):.0f}%"
          + (f" first_error: {w['first_error']}" if w.get("first_error") else ""))


def ab(records):
    """Per case: each build's median and its runs' spread ((max - min) / median, the noise), and
    the new build's median against the old one's. A figure is worse beyond the noise when it
    moved the wrong way by more than the larger spread of the two builds."""
    cases = []
    for r in records:
        if r["target"] not in cases:
            cases.append(r["target"])
    print(f"{'case':>14} {'figure':>10} {'old median':>11} {'old range':>19} {'new median':>11} {'new range':>19} "
          f"{'new/old':>8} {'noise':>7}  verdict")
    for case in cases:
        runs = {b: [r for r in records if r["target"] == case and r["build"] == b] for b in ("old", "new")}
        oks = {b: sum(bool(r["wsload"].get("ok")) for r in runs[b]) for b in runs}
        loads = [r["wsload"].get("load_avg", 0) for b in runs for r in runs[b]]
        busy = [r["wsload"].get("busy_before_pct", 0) for b in runs for r in runs[b]]
        for key in ab_figures({}).keys():
            values = {b: [v for v in (ab_figures(r["wsload"])[key] for r in runs[b]) if v is not None] for b in runs}
            if not values["old"] or not values["new"]:
                continue
            med = {b: statistics.median(values[b]) for b in values}
            spread = max((max(values[b]) - min(values[b])) / med[b] if med[b] else 0.0 for b in values)
            change = med["new"] / med["old"] - 1 if med["old"] else 0.0
            worse = -change if key in HIGHER_IS_BETTER else change
            verdict = "worse beyond noise" if worse > spread else ("better" if worse < -spread else "within noise")
            rng = {b: f"{min(values[b]):.2f}..{max(values[b]):.2f}" for b in values}
            print(f"{case:>14} {key:>10} {med['old']:>11.2f} {rng['old']:>19} {med['new']:>11.2f} {rng['new']:>19} "
                  f"{change * 100:>+7.1f}% {spread * 100:>6.1f}%  {verdict}")
        print(f"{case:>14} ok runs: old {oks['old']}/{len(runs['old'])}, new {oks['new']}/{len(runs['new'])}; "
              f"load average {min(loads):.2f}..{max(loads):.2f}; others' CPU in the second before a run "
              f"{min(busy):.0f}..{max(busy):.0f}% of a core")


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "pubrate" and len(argv) == 6:
        print(*pubrate(*argv[2:6]))
    elif cmd == "line" and len(argv) == 3:
        line(load(argv[2]))
    elif cmd == "passes" and len(argv) == 5:
        runs = [r for r in load(argv[2]) if str(r["target"]) == argv[3]]
        return 0 if runs and passes(summary(runs), float(argv[4])) else 1
    elif cmd == "table" and len(argv) == 6:
        table(load(argv[2]), float(argv[3]), float(argv[4]), argv[5])
    elif cmd == "abline" and len(argv) == 3:
        abline(load(argv[2]))
    elif cmd == "ab" and len(argv) == 3:
        ab(load(argv[2]))
    elif cmd == "medians" and len(argv) == 6:
        groups = by_target(load(argv[2]))
        rows(groups, list(groups), float(argv[3]), float(argv[4]), argv[5])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
