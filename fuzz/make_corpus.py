#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus into fuzz/corpus/ (committed, so builds never need it).

Real points come from the samples in ../shared/data (the first few points of each .f64 file,
as text, .npy and raw); the rest are the awkward cases of docs/formats.md and of the unit tests,
written out by hand. Run again after adding a case: python3 fuzz/make_corpus.py
"""
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent
CORPUS = ROOT / "corpus"
DATA = ROOT.parent.parent / "shared" / "data"
SEED_BYTES = 800  # of float64 values a seed, so seeds stay well under libFuzzer's max_len 4096


def samples():
    """(name, d, rows of floats): the first points of each .f64 sample."""
    for raw in sorted(DATA.glob("*.f64")):
        d = int(raw.stem.split("_")[-2].rstrip("d"))  # names end in _<d>d_sample
        n = max(2, SEED_BYTES // (8 * d))
        values = struct.unpack(f"<{n * d}d", raw.read_bytes()[: 8 * n * d])
        yield raw.stem, d, [values[i * d:(i + 1) * d] for i in range(n)]


def npy(rows, d, descr="<f8", version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, len(rows), d)
    prefix = 10 if version == 1 else 12
    header += " " * (-(prefix + len(header) + 1) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    fmt = "<%d%s" % (len(rows) * d, "d" if descr == "<f8" else "f")
    values = struct.pack(fmt, *[v for row in rows for v in row])
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + values


def csr(rows):
    """An epsjoin CSR file holding `rows`, lists of neighbour ids."""
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + len(r))
    ids = [j for r in rows for j in r]
    return (b"EPSJCSR1" + struct.pack("<QQ", len(rows), len(ids)) +
            struct.pack("<%dQ" % len(offsets), *offsets) + struct.pack("<%dI" % len(ids), *ids))


def write(folder, name, data):
    path = CORPUS / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


TEXT_CASES = {
    "mixed_separators": "1, 2 3\n4,5\t6\n", "crlf": "1,2\r\n3,4\r\n", "bom": "\ufeff1,2\n3,4",
    "comments": "# x,y\n1,2\n# between\n3,4\n\n", "plus_and_exponents": "+1.,-.5,3e-7,1E+05\n",
    "subnormal": "5e-324,2.2250738585072014e-308\n", "out_of_range": "1,1e999\n",
    "not_numbers": "1,nan\ninf,2\n0x10,1\n1.5x,6e\n", "empty_fields": "1,,2\n,1\n1,2,\n",
    "ragged": "1 2 3\n4 5 6 7 8\n", "blank_between": "1,2\n\n3,4\n", "lone_cr": "1\r2\n",
}
NPY_DICTS = [
    "{\"descr\":\"<f8\",\"fortran_order\":False,\"shape\":(2L,1L),}",
    "{'shape': (1, 2), 'fortran_order': False, 'descr': '<f8'}",
    "{'descr': '>f8', 'fortran_order': True, 'shape': (2,)}",
]
SPECS = ["expo:2:2000000", "uniform:4:1e6", "gauss:8:100000:clusters=32:sigma=0.02:seed=7",
         "expo:16:1000:paper", "expo:3:2.5M:lambda=0.01:paper=1", "uniform:2:0", "gauss:2:5k",
         "expo:4096:1:seed=18446744073709551615", "uniform:1:1.5G", "gauss:3:10:sigma=1e300"]
CLI = [
    "join\0--generate\0expo:2:2000000\0--eps\0.0002",
    "join\0--input\0points.csv\0--eps\0.5\0--output\0pairs.npy",
    "join\0--input\0stars.f64\0--dim\0" "3\0--eps\0.01\0--output\0t.csr\0--sort",
    "join\0--input\0B.npy\0--queries\0A.npy\0--eps=0.1\0--json\0--engine\0cpu-grid",
    "join\0--input\0p.csv\0--eps\0" "1e-3\0--param\0pattern=full\0--param\0x=1\0--threads\0" "2"
    "\0--memory-limit\0" "8G\0--device-memory-limit=20g\0--repeat\0" "3\0--precision\0f32",
    "gen\0expo:16:1000000\0--paper\0--output\0Expo16D1M.csv\0--format\0npy\0--digits\0" "6",
    "info", "info\0--help",
]


def main():
    for name, d, rows in samples():
        write("text", name + ".csv", "".join(",".join(repr(v) for v in r) + "\n" for r in rows))
        write("text", name + ".txt", "".join(" ".join("%.6g" % v for v in r) + "\n" for r in rows))
        write("npy", name + ".npy", npy(rows, d))
        write("npy", name + "_v2_f4.npy", npy(rows, d, "<f4", version=2))
        write("raw", name + ".f64", bytes([d << 1]) + struct.pack(
            "<%dd" % (len(rows) * d), *[v for r in rows for v in r]))
        write("raw", name + ".f32", bytes([d << 1 | 1]) + struct.pack(
            "<%df" % (len(rows) * d), *[v for r in rows for v in r]))
    for name, text in TEXT_CASES.items():
        write("text", name + ".txt", text)
    for k, header in enumerate(NPY_DICTS):
        padded = header + " " * (-(10 + len(header) + 1) % 16) + "\n"
        write("npy", "header_%d.npy" % k, b"\x93NUMPY\x01\x00" + struct.pack("<H", len(padded)) +
              padded.encode() + bytes(16))
    write("csr", "no_queries.csr", csr([]))
    write("csr", "rows.csr", csr([[1, 2], [], [0, 4294967295, 7]]))
    write("csr", "one_empty_row.csr", csr([[]]))
    for k, spec in enumerate(SPECS):
        write("spec", "spec_%d" % k, spec)
    for k, line in enumerate(CLI):
        write("cli", "args_%d" % k, line)


if __name__ == "__main__":
    main()
