"""The soak's summary table (scripts/soak/run): per run (clean, attack) the well-behaved
clients' loss, duplicates and latency, the server's RSS over the loaded window and its
descriptors at the end, the attackers' answers, and the verdict on each target:

- RSS flat after warm-up: (max - min) / min of the samples from RSS_WARMUP seconds after the relay
  load until the load's end, at most 5%
- descriptors back to the baseline once every client has gone (half-open attackers still holding)
- zero loss, zero duplicates (and no order, payload or connection errors) among well-behaved clients
- p99 of each well-behaved workload under attack within 2x of the clean run's

    python3 summary.py OUT_DIR RSS_WARMUP_SECONDS"""

import json
import os
import sys


def load_json(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1] if not text.startswith("{\n") else text) if text else None
    except (OSError, ValueError):
        return None


def marks(folder):
    out = {}
    with open(os.path.join(folder, "marks")) as f:
        for line in f:
            name, t = line.split()
            out[name] = float(t)
    return out


def samples(folder):
    with open(os.path.join(folder, "samples.txt")) as f:
        header = f.readline().split()
        return [dict(zip(header, map(float, line.split()))) for line in f if len(line.split()) == len(header)]


def ms(us):
    return None if us is None else us / 1000


def workloads(folder):
    """name -> {ok, conns, delivered, lost, dups, ooo, other, p50, p99, max} (latency in ms)."""
    out = {}
    for name, file in (("relay ws", "relay.json"), ("relay wss", "relay-tls.json"), ("chat /ws", "chat.json")):
        r = load_json(os.path.join(folder, file))
        if not r:
            out[name] = {"ok": False, "missing": True}
            continue
        errors = r.get("errors", {})
        other = (r.get("conn_failed", 0) + r.get("wrong_room", 0) + r.get("wrong_group", 0) + r.get("self_echo", 0)
                 + r.get("bad_payload", 0) + r.get("error_replies", 0) + r.get("unacked", 0)
                 + sum(v for v in errors.values()))
        latency = r.get("latency_us", {})
        out[name] = {"ok": r.get("ok", False), "conns": r.get("conn_established", r.get("conn_ready")),
                     "delivered": r.get("delivered"), "lost": r.get("lost"), "dups": r.get("duplicates"),
                     "ooo": r.get("out_of_order"), "other": other, "p50": ms(latency.get("p50")),
                     "p99": ms(latency.get("p99")), "max": ms(latency.get("max")),
                     "lag_p99": ms(r.get("send_lag_us", {}).get("p99")), "first_error": r.get("first_error", "")}
    c = load_json(os.path.join(folder, "churn.json"))
    if c:
        out["churn /rooms"] = {"ok": c["ok"], "conns": c["connects"], "delivered": c["messages_expected"] - c["lost"],
                               "lost": c["lost"], "dups": c["duplicates"], "ooo": c["out_of_order"],
                               "other": c["failed"] + c["strays"] + c["skipped"], "p50": c["delivery_ms"]["p50"],
                               "p99": c["delivery_ms"]["p99"], "max": c["delivery_ms"]["max"],
                               "connect_p99": c["connect_ms"]["p99"], "errors": c["errors"],
                               "rate": c["connects"] / c["duration_s"]}
    else:
        out["churn /rooms"] = {"ok": False, "missing": True}
    return out


def server(folder, rss_warmup):
    m, rows = marks(folder), samples(folder)
    loaded = [r for r in rows if m.get("connected", m["start"]) + rss_warmup <= r["t"] <= m["churn_done"]]
    during = [r for r in rows if m["start"] <= r["t"] <= m["load_done"]]
    rss = [r["rss_kib"] for r in loaded]
    fds = load_json(os.path.join(folder, "descriptors.json")) or {}
    cpu = None
    if len(during) >= 2:
        ticks = during[-1]["cpu_ticks"] - during[0]["cpu_ticks"]
        cpu = 100 * ticks / os.sysconf("SC_CLK_TCK") / max(1e-9, during[-1]["t"] - during[0]["t"])
    return {
        "rss_baseline_mib": rows[0]["rss_kib"] / 1024 if rows else None,
        "rss_min_mib": min(rss) / 1024 if rss else None, "rss_max_mib": max(rss) / 1024 if rss else None,
        "rss_first_mib": rss[0] / 1024 if rss else None, "rss_last_mib": rss[-1] / 1024 if rss else None,
        "rss_spread_pct": 100 * (max(rss) - min(rss)) / min(rss) if rss else None,
        "rss_samples": len(rss), "sockets_peak": max((r["sockets"] for r in rows), default=None),
        "fds": fds, "cpu_pct": cpu,
        "load_min": min((r["load"] for r in during), default=None), "load_max": max((r["load"] for r in during), default=None),
        "load_mean": sum(r["load"] for r in during) / len(during) if during else None,
    }


def attackers(folder):
    merged = {}
    for group in ("ping-flood", "publish-flood", "others"):
        data = load_json(os.path.join(folder, f"attack-{group}.json"))
        if data is None and os.path.exists(os.path.join(folder, f"attack-{group}.log")):
            merged[f"({group})"] = {"attempts": 0, "unexpected": 1, "outcomes": {"no result": 1}}
        merged.update(data or {})
    return merged


def fmt(value, digits=1):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def main():
    out_dir, rss_warmup = sys.argv[1], float(sys.argv[2])
    runs = [kind for kind in ("clean", "attack") if os.path.exists(os.path.join(out_dir, kind, "marks"))]
    results = {kind: {"workloads": workloads(os.path.join(out_dir, kind)),
                      "server": server(os.path.join(out_dir, kind), rss_warmup),
                      "attackers": attackers(os.path.join(out_dir, kind)) if kind == "attack" else {}} for kind in runs}
    verdicts = []
    print("Well-behaved clients (latency in ms; delivered = messages each receiver checked)")
    print(f"{'run':7} {'workload':13} {'conns':>8} {'delivered':>11} {'lost':>5} {'dups':>5} {'order':>5} {'other':>6}"
          f" {'p50':>8} {'p99':>8} {'max':>8}  ok")
    for kind in runs:
        for name, w in results[kind]["workloads"].items():
            if w.get("missing"):
                print(f"{kind:7} {name:13} (no result)")
                verdicts.append((f"{kind} {name}: a result", False))
                continue
            print(f"{kind:7} {name:13} {fmt(w['conns']):>8} {fmt(w['delivered']):>11} {fmt(w['lost']):>5} {fmt(w['dups']):>5}"
                  f" {fmt(w['ooo']):>5} {fmt(w['other']):>6} {fmt(w['p50']):>8} {fmt(w['p99']):>8} {fmt(w['max']):>8}  {w['ok']}")
            clean = w["lost"] == 0 and w["dups"] == 0 and w["ooo"] == 0 and w["other"] == 0
            verdicts.append((f"{kind} {name}: zero loss, duplicates and errors", clean and w["ok"]))
    for kind in runs:
        churn = results[kind]["workloads"].get("churn /rooms", {})
        if not churn.get("missing"):
            print(f"{kind:7} churn: {churn['rate']:.0f} connects/s and as many closes, connect p99 "
                  f"{fmt(churn['connect_p99'])} ms, errors {churn['errors'] or 'none'}")
    if "clean" in results and "attack" in results:
        print("\np99 under attack / clean")
        for name, w in results["attack"]["workloads"].items():
            c = results["clean"]["workloads"].get(name, {})
            if w.get("p99") and c.get("p99"):
                ratio = w["p99"] / c["p99"]
                print(f"  {name:13} {fmt(c['p99'])} -> {fmt(w['p99'])} ms: {ratio:.2f}x")
                verdicts.append((f"p99 of {name} under attack within 2x of clean ({ratio:.2f}x)", ratio <= 2))
    print("\nServer")
    print(f"{'run':7} {'RSS base':>9} {'RSS min':>8} {'RSS max':>8} {'spread':>7} {'RSS last':>9} {'sockets':>8}"
          f" {'fds base':>9} {'fds end':>8} {'to base':>8} {'cpu %':>6} {'load avg':>14}")
    for kind in runs:
        s = results[kind]["server"]
        f = s["fds"]
        print(f"{kind:7} {fmt(s['rss_baseline_mib']):>9} {fmt(s['rss_min_mib']):>8} {fmt(s['rss_max_mib']):>8}"
              f" {fmt(s['rss_spread_pct']):>6}% {fmt(s['rss_last_mib']):>9} {fmt(s['sockets_peak'] and int(s['sockets_peak'])):>8}"
              f" {fmt(f.get('baseline_fds')):>9} {fmt(f.get('end_fds')):>8} {fmt(f.get('seconds_to_baseline')):>7}s"
              f" {fmt(s['cpu_pct'], 0):>6} {fmt(s['load_min'], 2):>6}-{fmt(s['load_max'], 2):<6}")
        verdicts.append((f"{kind}: RSS flat after {rss_warmup:.0f} s of load (spread {fmt(s['rss_spread_pct'])}% over "
                         f"{s['rss_samples']} samples)", s["rss_spread_pct"] is not None and s["rss_spread_pct"] <= 5))
        verdicts.append((f"{kind}: descriptors back to the baseline ({f.get('end_fds')} of {f.get('baseline_fds')};"
                         f" sockets {f.get('end_sockets')} of {f.get('baseline_sockets')})"
                         + (", half-open attackers still holding theirs" if f.get("attackers_still_holding") else ""),
                         f.get("end_fds") is not None and f["end_fds"] <= f["baseline_fds"]))
    if "attack" in results:
        print("\nAttackers (each attempt's answer; unexpected = not the answer docs/security.md promises)")
        for attack, a in results["attack"]["attackers"].items():
            extra = {k: v for k, v in a.items() if k not in ("attempts", "unexpected", "outcomes")}
            outcomes = ", ".join(f"{k}: {v:,}" for k, v in a["outcomes"].items())
            print(f"  {attack:40} {a['attempts']:>7,} attempts, {a['unexpected']:>4} unexpected  [{outcomes}]"
                  + (f" {extra}" if extra else ""))
            verdicts.append((f"attack {attack}: every answer as documented", a["unexpected"] == 0))
    print("\nTargets")
    for text, ok in verdicts:
        print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"results": results, "verdicts": [{"target": t, "pass": ok} for t, ok in verdicts]}, f, indent=1)
    sys.exit(0 if all(ok for _, ok in verdicts) else 1)


if __name__ == "__main__":
    main()
