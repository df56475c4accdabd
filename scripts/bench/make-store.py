#!/usr/bin/env python3
"""Writes a Switchboard data folder for the recovery benchmark (Python stdlib only).

Usage: scripts/bench/make-store.py DIR [--groups 1000] [--messages 1000000] [--journal 100000]
                                       [--users 1000] [--members 10] [--text-bytes 64]

DIR gets the two files of docs/durability.md, in exactly the shape the server reads (ChatState+Tree.swift,
Mutation+Journal.swift):
  tree.json      {"Auth":{uid:{email,passwordHash}},
                  "Groups":{gid:{createdAt,createdBy,invite,name,userList{uid:true}}},
                  "Messages":{gid:{mid:{createdAt,message,user}}},
                  "Users":{uid:{createdAt,groupList{gid:true},name}}}   (compact, sorted keys)
  journal.jsonl  --journal more messages, one line each:
                  {"op":"set","path":["Messages",gid,mid],"value":{"createdAt":..,"message":..,"user":..}}
Messages are spread round-robin over the groups; each group's members are --members users. Ids are
push ids (PushIDGenerator.swift): 8 characters of millisecond time in base 64 over
"-0-9A-Z_a-z", then 12 random ones, so they sort by creation; journal messages come after the
snapshot's. Every user's password is "password123" (one PBKDF2-SHA256 hash, 210,000 iterations,
in the server's `pbkdf2-sha256$<iterations>$<salt>$<hash>` format, shared by all users).
"""
import argparse
import base64
import hashlib
import json
import os
import random
import sys
import time

ALPHABET = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
WORDS = ("hello", "see", "you", "at", "the", "meeting", "tomorrow", "ok", "thanks", "lunch", "ship", "it",
         "deploy", "done", "great", "news", "call", "me", "later", "review", "please")


class PushIDs:
    """Push ids in increasing order, like the server's generator (one per call)."""

    def __init__(self, rng):
        self.rng = rng

    def make(self, milliseconds):
        prefix = []
        t = milliseconds
        for _ in range(8):
            prefix.append(ALPHABET[t & 63])
            t >>= 6
        rand = "".join(ALPHABET[self.rng.getrandbits(6)] for _ in range(12))
        return "".join(reversed(prefix)) + rand


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def dumps(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages in tree.json")
    ap.add_argument("--journal", type=int, default=100_000, help="messages as journal lines")
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--members", type=int, default=10, help="users per group")
    ap.add_argument("--text-bytes", type=int, default=64, help="approximate message text length")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ids = PushIDs(rng)
    os.makedirs(args.dir, mode=0o700, exist_ok=True)
    for name in ("tree.json", "journal.jsonl", "tree.json.tmp"):
        path = os.path.join(args.dir, name)
        if os.path.exists(path):
            os.unlink(path)

    start = time.time()
    base = 1_763_000_000_000  # Nov 2025, milliseconds
    uids = [ids.make(base + i) for i in range(args.users)]
    gids = [ids.make(base + args.users + i) for i in range(args.groups)]
    members = {g: sorted({uids[(gi * args.members + k) % args.users] for k in range(args.members)})
               for gi, g in enumerate(gids)}
    group_list = {u: {} for u in uids}
    for g, us in members.items():
        for u in us:
            group_list[u][g] = True
    salt = rng.getrandbits(128).to_bytes(16, "big")
    digest = hashlib.pbkdf2_hmac("sha256", b"password123", salt, 210_000)
    password_hash = f"pbkdf2-sha256$210000${b64url(salt)}${b64url(digest)}"

    def text(n):
        words = []
        size = 0
        while size < args.text_bytes:
            w = WORDS[rng.randrange(len(WORDS))]
            words.append(w)
            size += len(w) + 1
        return f"#{n} " + " ".join(words)

    # Message n (0-based, over snapshot and journal) is in group n mod G, made at base + 10^6 + n ms,
    # so ids increase within each group and journal messages are newer than the snapshot's.
    msg_base = base + 1_000_000

    def message(n):
        g = gids[n % args.groups]
        us = members[g]
        value = {"createdAt": msg_base + n, "message": text(n), "user": us[n % len(us)]}
        return g, ids.make(msg_base + n), value

    tree_path = os.path.join(args.dir, "tree.json")
    with open(tree_path, "w", encoding="utf-8") as out:
        auth = {u: {"email": f"user{i}@example.com", "passwordHash": password_hash} for i, u in enumerate(uids)}
        out.write('{"Auth":' + dumps(auth))
        groups = {g: {"createdAt": base + args.users + i, "createdBy": members[g][0], "invite": b64url(rng.getrandbits(72).to_bytes(9, "big")),
                      "name": f"group {i}", "userList": {u: True for u in members[g]}} for i, g in enumerate(gids)}
        out.write(',"Groups":' + dumps(groups))
        out.write(',"Messages":{')
        order = sorted(range(args.groups), key=lambda gi: gids[gi])
        per_group = [[] for _ in range(args.groups)]
        for n in range(args.messages):
            per_group[n % args.groups].append(n)
        for position, gi in enumerate(order):
            if position:
                out.write(",")
            out.write(json.dumps(gids[gi]) + ":{")
            parts = []
            for n in per_group[gi]:
                _, mid, value = message(n)
                parts.append(json.dumps(mid) + ":" + dumps(value))
            out.write(",".join(parts))
            out.write("}")
        out.write("}")
        users = {u: {"createdAt": base + i, "groupList": group_list[u], "name": f"user {i}"} for i, u in enumerate(uids)}
        out.write(',"Users":' + dumps(users) + "}")

    journal_path = os.path.join(args.dir, "journal.jsonl")
    with open(journal_path, "w", encoding="utf-8") as out:
        for n in range(args.messages, args.messages + args.journal):
            g, mid, value = message(n)
            out.write(dumps({"op": "set", "path": ["Messages", g, mid], "value": value}) + "\n")
    summary = {"tool": "make-store", "dir": args.dir, "users": args.users, "groups": args.groups,
               "snapshot_messages": args.messages, "journal_lines": args.journal,
               "tree_bytes": os.path.getsize(tree_path), "journal_bytes": os.path.getsize(journal_path),
               "seconds": round(time.time() - start, 1)}
    print(json.dumps(summary))


if __name__ == "__main__":
    sys.exit(main())
