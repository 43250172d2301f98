#!/usr/bin/env python3
"""Edits a cache entry's kept critical path (path_kept) as a hostile user
would, its CRC made again so that only the values can tell: path_cache.sh.

usage: path_wire.py DB EDIT
  rank99   the path's first row's rank made 99 (a rank the run did not
           ask for)
  part     its cpu_us made larger (the parts no longer add up)
  name     a letter of the first item's name changed, the CRC left as it
           was (nothing but the CRC can tell)
  cut      the tables cut to three quarters"""
import sqlite3
import struct
import sys
import zlib


def first_row(w, at):
    """A table of the wire at offset at: its first row's cells, each
    (offset of its value or None, type), and the offset past the table."""
    def i64():
        nonlocal at
        v = struct.unpack_from("<q", w, at)[0]
        at += 8
        return v
    types = []
    for _ in range(i64()):
        n = i64()
        at += n
        types.append(i64())
    cells = []
    for r in range(i64()):
        for t in types:
            null = i64()
            if r == 0:
                cells.append((None if null else at, t))
            if not null:
                at += 8 if t != 2 else 8 + struct.unpack_from("<q", w, at)[0]
    for _ in range(2):                 # notes, warnings
        n = i64()
        at += n
    at += 8 * 4                        # bad UTF-8, absent ranks, head, also
    return cells, at


db, edit = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
for key, wire, crc in con.execute("SELECT key, wire, crc FROM path_kept").fetchall():
    w = bytearray(wire)
    try:
        path, end = first_row(w, 0)
        items, _ = first_row(w, end)
    except struct.error:   # one cut short before (not read, not kept over)
        continue
    if edit == "rank99" and path and path[0][0] is not None:
        struct.pack_into("<q", w, path[0][0], 99)
    elif edit == "part" and len(path) > 3 and path[3][0] is not None:
        v = struct.unpack_from("<d", w, path[3][0])[0]
        struct.pack_into("<d", w, path[3][0], v + 1000.0)
    elif edit == "name" and len(items) > 3 and items[3][0] is not None:
        w[items[3][0] + 8] ^= 0x01     # its text's first byte
    elif edit == "cut":
        w = w[:len(w) * 3 // 4]
    new_crc = crc if edit == "name" else zlib.crc32(bytes(w))
    con.execute("UPDATE path_kept SET wire = ?, crc = ? WHERE key = ?", (bytes(w), new_crc, key))
con.commit()
