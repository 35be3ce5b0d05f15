"""Write Jane Austen's six novels as plain text, one paragraph per blank-line-separated block.

The text comes from Debian's `r-cran-janeaustenr` (novels public domain, packaging MIT). R is
not needed: we download the .deb, unpack it with `dpkg -x`, and decode the package's lazy-load
data (`data/Rdata.rdx` index + `data/Rdata.rdb` blobs, both R serialization) right here.

    python scripts/janeausten_corpus.py corpus.txt
"""
from __future__ import annotations

import gzip
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

PACKAGE = "r-cran-janeaustenr"
DATA_DIR = "usr/lib/R/site-library/janeaustenr/data"
# Book order as in janeaustenr::austen_books()
BOOKS = ["sensesensibility", "prideprejudice", "mansfieldpark", "emma", "northangerabbey", "persuasion"]


class RReader:
    """Just enough of R's XDR serialization format for the data here: vectors, pairlists, strings."""

    def __init__(self, data: bytes):
        if data[:2] != b"X\n":
            raise ValueError("not an XDR R serialization stream")
        self.buf, self.pos, self.refs = data, 2, []
        version = self.int()
        self.pos += 8  # writer and minimal reader R versions
        if version == 3:
            self.take(self.int())  # native encoding name

    def int(self) -> int:
        (v,) = struct.unpack_from(">i", self.buf, self.pos)
        self.pos += 4
        return v

    def take(self, n: int) -> bytes:
        self.pos += n
        return self.buf[self.pos - n:self.pos]

    def read(self):
        flags = self.int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind in (254, 242):  # NULL, empty environment
            return None
        if kind == 255:  # reference to an earlier symbol
            return self.refs[(flags >> 8 or self.int()) - 1]
        if kind == 1:  # symbol: its name follows as a CHARSXP
            name = self.read()
            self.refs.append(name)
            return name
        if kind == 9:  # CHARSXP; the "latin1" bit (levels & 4) decides the encoding
            n = self.int()
            if n == -1:
                return None  # NA_character_
            return self.take(n).decode("latin-1" if (flags >> 12) & 4 else "utf-8")
        if kind == 2:  # pairlist: [attr] [tag] car cdr -> dict (attributes, mostly)
            out = {}
            while kind == 2:
                if has_attr:
                    self.read()
                tag = self.read() if has_tag else len(out)
                out[tag] = self.read()
                flags = self.int()
                kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
            return out  # the list ends with a NULL whose flags we just read
        n = self.int()
        if kind in (10, 13):  # logical, integer
            value = list(struct.unpack_from(f">{n}i", self.take(4 * n)))
        elif kind == 14:  # double
            value = list(struct.unpack_from(f">{n}d", self.take(8 * n)))
        elif kind in (16, 19):  # character vector, generic list
            value = [self.read() for _ in range(n)]
        else:
            raise ValueError(f"R type {kind} is not supported by this small reader")
        if has_attr:
            names = self.read().get("names")
            if names is not None:
                value = dict(zip(names, value))
        return value


def extract_package(workdir: Path) -> Path:
    def run(cmd: list[str], what: str) -> None:
        try:
            subprocess.run(cmd, cwd=workdir, check=True, capture_output=True, text=True)
        except FileNotFoundError:
            sys.exit(f"error: `{cmd[0]}` not found; this script needs a Debian/Ubuntu system ({what})")
        except subprocess.CalledProcessError as e:
            sys.exit(f"error: {what} failed: `{' '.join(cmd)}`:\n{e.stderr.strip()}\n"
                     f"(is `apt-get update` needed, or is the network unreachable?)")

    run(["apt-get", "download", PACKAGE], f"downloading {PACKAGE}")
    debs = list(workdir.glob(f"{PACKAGE}_*.deb"))
    if not debs:
        sys.exit(f"error: apt-get reported success but no {PACKAGE}_*.deb appeared in {workdir}")
    run(["dpkg", "-x", debs[0].name, "pkg"], "unpacking the .deb")
    return workdir / "pkg" / DATA_DIR


def read_books(data_dir: Path) -> dict[str, list[str]]:
    index = RReader(gzip.decompress((data_dir / "Rdata.rdx").read_bytes())).read()
    rdb = (data_dir / "Rdata.rdb").read_bytes()
    books = {}
    for name in BOOKS:
        offset, length = index["variables"][name]
        blob = rdb[offset:offset + length]  # 4-byte big-endian raw length, then a zlib stream
        books[name] = RReader(zlib.decompress(blob[4:])).read()
    return books


def paragraphs(lines: list[str]) -> list[str]:
    """The novels come one printed line per string, "" between paragraphs: rejoin the lines."""
    out, current = [], []
    for line in lines + [""]:
        if line and line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    return out


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT.txt")
    with tempfile.TemporaryDirectory() as tmp:
        books = read_books(extract_package(Path(tmp)))
    paras = [p for name in BOOKS for p in paragraphs(books[name])]
    text = "\n\n".join(paras) + "\n"
    Path(sys.argv[1]).write_text(text, encoding="utf-8")
    print(f"wrote {sys.argv[1]}: {len(BOOKS)} novels, {len(paras)} paragraphs, "
          f"{len(text.encode('utf-8')) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
